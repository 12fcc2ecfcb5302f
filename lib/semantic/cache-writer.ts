// The embedding cache's writes, off the request thread while a vault is served. A build commits a batch's
// new vectors every few seconds; on the request thread those transactions took 3-13 ms each and now and
// then 40 ms (measured with bench/request-thread.ts and a CPU profile), time a request arriving then
// waited. A worker with a connection of its own writes them instead (cache-writer-worker.ts). Only it
// writes embeddings.db meanwhile: the request thread's connection only reads, and in WAL mode a reader
// never waits for a writer, so the request thread never waits on this worker's lock either. Processes
// that do not serve (lettuce embed, one-shot commands) write on their own thread, as before.
import { keepAlive, workerEntry } from "../platform/embedded";
import { servesForLong } from "../store/checkpointer";
import type { CacheWriteReply, CacheWriteRequest } from "./cache-writer-worker";
import { startWorker } from "../platform/descriptors";

// Cleared for good if the writer thread cannot start or stops.
let available = true;
let worker: Worker | null = null;
let nextId = 1;
const pending = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();

/** Whether writes go to the writer thread: while this process serves a vault, unless the thread failed. */
export function cacheWritesOffThread(): boolean {
  return available && servesForLong() && process.env.LETTUCE_CACHE_WRITER !== "0";
}

function ensureWorker(): Worker | null {
  if (worker) return worker;
  try {
    worker = startWorker(workerEntry("lib/semantic/cache-writer-worker.ts", import.meta.url, "./cache-writer-worker.ts"));
  } catch {
    available = false;
    return null;
  }
  keepAlive(worker, false);
  worker.onmessage = (ev: MessageEvent<CacheWriteReply>) => {
    const p = pending.get(ev.data.id);
    pending.delete(ev.data.id);
    if (ev.data.error) p?.reject(new Error(ev.data.error));
    else p?.resolve();
    if (worker && !pending.size) keepAlive(worker, false);
  };
  // No thread after all (a binary built without it): what waits fails, and writes go back to the caller's thread.
  worker.onerror = () => {
    available = false;
    for (const p of pending.values()) p.reject(new Error("the embedding cache's writer thread stopped"));
    pending.clear();
    worker?.terminate();
    worker = null;
  };
  return worker;
}

/** Send the writer thread a request it answers (by `id`): resolves once it is done, null without the thread. */
function ask(request: (id: number) => CacheWriteRequest, transfer: ArrayBuffer[] = []): Promise<void> | null {
  const w = ensureWorker();
  if (!w) return null;
  const id = nextId++;
  const done = new Promise<void>((resolve, reject) => pending.set(id, { resolve, reject }));
  keepAlive(w, true);
  w.postMessage(request(id), transfer);
  return done;
}

/** Write vectors (all of one dimension) to the cache file in one transaction on the writer thread; resolves once committed, null without the thread. */
export function putOffThread(file: string, model: string, entries: [string, Float32Array][]): Promise<void> | null {
  const dim = entries[0]![1].length;
  const vectors = new Float32Array(entries.length * dim);
  entries.forEach(([, v], i) => vectors.set(v, i * dim));
  return ask((id) => ({ id, file, model, hashes: entries.map(([h]) => h), vectors, dim }), [vectors.buffer]);
}

/** Forget cached vectors no passage of `indexFile` uses and nothing used for long (EmbeddingCache.pruneAgainstIndex), on the writer thread. */
export function pruneOffThread(file: string, model: string, indexFile: string): Promise<void> | null {
  return ask((id) => ({ id, prune: file, model, indexFile }));
}

/** Mark vectors as used (no answer awaited). Returns false when the writer thread is not there. */
export function touchOffThread(file: string, model: string, hashes: string[]): boolean {
  const w = ensureWorker();
  if (!w) return false;
  w.postMessage({ touch: file, model, hashes } satisfies CacheWriteRequest);
  return true;
}

/** The cache file is closing: the writer's connection to it goes too. */
export function closeOffThread(file: string): void {
  worker?.postMessage({ close: file } satisfies CacheWriteRequest);
}
