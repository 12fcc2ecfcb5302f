// Worker entry: writes the embedding cache (embeddings.db) for a serving process, through an
// EmbeddingCache of its own, so that the request thread never runs these transactions (cache-writer.ts
// says why). In this thread the cache writes in place: it serves nothing.
import { lowerThreadPriority } from "../platform/thread-priority";
import { EmbeddingCache } from "./cache";

declare const self: Worker;

// Background work: the thread that answers requests gets the core first.
lowerThreadPriority();

export type CacheWriteRequest =
  | { id: number; file: string; model: string; hashes: string[]; vectors: Float32Array; dim: number }
  | { touch: string; model: string; hashes: string[] }
  | { id: number; prune: string; model: string; indexFile: string }
  | { close: string };
export type CacheWriteReply = { id: number; error?: string };

const open = new Map<string, EmbeddingCache>();

function cacheAt(file: string): EmbeddingCache {
  let c = open.get(file);
  if (!c) {
    c = new EmbeddingCache(file);
    // The serving process's checkpoint thread copies the WAL back (lib/store/checkpointer.ts).
    c.db.exec("PRAGMA wal_autocheckpoint = 0");
    open.set(file, c);
  }
  return c;
}

self.onmessage = (ev: MessageEvent<CacheWriteRequest>) => {
  const m = ev.data;
  if ("close" in m) {
    open.get(m.close)?.close();
    open.delete(m.close);
    return;
  }
  if ("prune" in m) {
    try {
      cacheAt(m.prune).pruneAgainstIndex(m.model, m.indexFile);
      self.postMessage({ id: m.id } satisfies CacheWriteReply);
    } catch (e) {
      self.postMessage({ id: m.id, error: e instanceof Error ? e.message : String(e) } satisfies CacheWriteReply);
    }
    return;
  }
  if ("touch" in m) {
    try {
      cacheAt(m.touch).markUsed(m.model, m.hashes);
    } catch {
      /* a missed "last used" mark only keeps a vector a little less long */
    }
    return;
  }
  try {
    const entries = m.hashes.map((h, i): [string, Float32Array] => [h, m.vectors.subarray(i * m.dim, (i + 1) * m.dim)]);
    cacheAt(m.file).put(m.model, entries);
    self.postMessage({ id: m.id } satisfies CacheWriteReply);
  } catch (e) {
    self.postMessage({ id: m.id, error: e instanceof Error ? e.message : String(e) } satisfies CacheWriteReply);
  }
};
