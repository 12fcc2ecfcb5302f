// Worker entry: writes the embedding cache (embeddings.db) for a serving process, on a connection of its
// own, so that the request thread never runs these transactions (cache-writer.ts says why).
import { Database } from "bun:sqlite";
import { lowerThreadPriority } from "../platform/thread-priority";

declare const self: Worker;

// Background work: the thread that answers requests gets the core first.
lowerThreadPriority();

export type CacheWriteRequest =
  | { id: number; file: string; model: string; hashes: string[]; vectors: Float32Array; dim: number; at: number }
  | { touch: string; model: string; hashes: string[]; at: number; since: number }
  | { close: string };
export type CacheWriteReply = { id: number; error?: string };

const open = new Map<string, Database>();

function connection(file: string): Database {
  let db = open.get(file);
  if (!db) {
    db = new Database(file, { strict: true });
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec("PRAGMA busy_timeout = 5000");
    // The serving process's checkpoint thread copies the WAL back (lib/store/checkpointer.ts).
    db.exec("PRAGMA wal_autocheckpoint = 0");
    open.set(file, db);
  }
  return db;
}

self.onmessage = (ev: MessageEvent<CacheWriteRequest>) => {
  const m = ev.data;
  if ("close" in m) {
    open.get(m.close)?.close();
    open.delete(m.close);
    return;
  }
  if ("touch" in m) {
    try {
      connection(m.touch)
        .query("UPDATE vectors SET used_at = ? WHERE model = ? AND used_at < ? AND hash IN (SELECT value FROM json_each(?))")
        .run(m.at, m.model, m.since, JSON.stringify(m.hashes));
    } catch {
      /* a missed "last used" mark only keeps a vector a little less long */
    }
    return;
  }
  try {
    const db = connection(m.file);
    const ins = db.query("INSERT OR REPLACE INTO vectors(model, hash, vec, used_at) VALUES (?, ?, ?, ?)");
    const bytes = new Uint8Array(m.vectors.buffer, m.vectors.byteOffset, m.vectors.byteLength);
    const size = m.dim * 4;
    db.transaction(() => {
      m.hashes.forEach((h, i) => ins.run(m.model, h, bytes.subarray(i * size, (i + 1) * size), m.at));
    })();
    self.postMessage({ id: m.id } satisfies CacheWriteReply);
  } catch (e) {
    self.postMessage({ id: m.id, error: e instanceof Error ? e.message : String(e) } satisfies CacheWriteReply);
  }
};
