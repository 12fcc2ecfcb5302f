import { availableParallelism } from "node:os";
import { workerEntry } from "../platform/embedded";
import { BIG_NOTE_BYTES, readAndParse, unpackBatch, type PackedBatch, type ParseRequest, type ParseResult } from "./parse-job";
import type { LinkResolver } from "./resolver";
import { startWorker } from "../platform/descriptors";
import { envNumber } from "../env-number";
import { inTurns } from "../platform/turns";

// Below this many files a worker's start-up costs more than it saves...
const INLINE_LIMIT = 256;
// ...unless one of them is BIG_NOTE_BYTES or more (./parse-job.ts).
export { BIG_NOTE_BYTES } from "./parse-job";
const BATCH = 48;
const IN_FLIGHT = envNumber("LETTUCE_PARSE_IN_FLIGHT", 6, { min: 1, max: 64, integer: true });

function spawnWorker(): Worker {
  // In a compiled binary every module's import.meta.url is the binary's own
  // (/$bunfs/root/lettuce, B:/~BUN/root/lettuce.exe on Windows), and compile.sh embeds the worker under its source path.
  return startWorker(workerEntry("lib/index/parse-worker.ts", import.meta.url, "./parse-worker.ts"));
}

/** How many parse workers a batch of `count` files gets (0: parsed inline). */
export function parseWorkerCount(count: number, hasBig = false): number {
  if (count <= INLINE_LIMIT) return hasBig ? 1 : 0;
  // The main thread is busy inserting for the whole scan, so leave it its core.
  // A few files with a big one among them need one worker only.
  return envNumber("LETTUCE_PARSE_WORKERS", Math.max(1, Math.min(4, availableParallelism() - 1)), { min: 1, max: 16, integer: true });
}

/**
 * Start parse workers before their work is known: a cold scan spawns them as soon as the
 * listing is in, so that their start-up (~0.1 s of module loading each) overlaps the main
 * thread's own preparation instead of following it. Hand them to parseAll.
 */
export function spawnParseWorkers(n: number): Worker[] {
  const workers: Worker[] = [];
  try {
    for (let i = 0; i < n; i++) workers.push(spawnWorker());
  } catch {
    // No worker support (should not happen under Bun): parseAll parses inline instead.
    for (const w of workers) w.terminate();
    return [];
  }
  return workers;
}

/**
 * Parse files in parallel, handing each finished batch to `onBatch` in the
 * calling thread as soon as it arrives (the caller inserts while workers parse).
 * `early`: workers from spawnParseWorkers, used (and terminated) instead of new ones.
 */
export async function parseAll(
  root: string,
  requests: ParseRequest[],
  resolver: LinkResolver,
  onBatch: (results: ParseResult[]) => void,
  /** A cold bulk load: a port to the full-text writer for each parse worker (requests carry ftsId). */
  ftsPort?: () => MessagePort,
  early: Worker[] = [],
  /**
   * Take each batch in the event loop's shared turns (lib/platform/turns.ts), for a pass while the server
   * answers requests: the workers' replies come back to back, and taken as they came, 20,000 notes saved by a
   * checkout held every caller 0.3-1.2 s at a time. A cold bulk load, which nobody waits beside, takes them at once.
   */
  shareTurns = false,
): Promise<void> {
  const inline = () => {
    for (const w of early) w.terminate();
    for (let i = 0; i < requests.length; i += BATCH) onBatch(requests.slice(i, i + BATCH).map((r) => readAndParse(root, r, resolver)));
  };
  const nWorkers = parseWorkerCount(requests.length, requests.some((r) => r.entry.size >= BIG_NOTE_BYTES));
  if (nWorkers === 0) return inline();
  const snapshot = resolver.snapshot();
  const workers = early.slice(0, nWorkers);
  for (const w of early.slice(nWorkers)) w.terminate();
  if (workers.length < nWorkers) workers.push(...spawnParseWorkers(nWorkers - workers.length));
  if (!workers.length) return inline();
  // A bulk load numbered every note (ftsId) before parsing: links resolved to a note come back as its id.
  let idPaths: string[] | undefined = ftsPort ? [] : undefined;
  for (const r of requests) {
    if (!idPaths) break;
    if (r.ftsId === undefined) idPaths = undefined;
    else idPaths[r.ftsId - 1] = r.entry.path;
  }
  for (const w of workers) {
    const port = ftsPort?.();
    if (port) w.postMessage({ snapshot, ftsPort: port, idPaths }, [port]);
    else w.postMessage({ snapshot });
  }
  let next = 0;
  let pending = 0;
  let nextId = 0;
  await new Promise<void>((resolve, reject) => {
    const feed = (w: Worker) => {
      if (next < requests.length) {
        const batch = requests.slice(next, next + BATCH);
        next += batch.length;
        pending++;
        w.postMessage({ id: nextId++, root, batch });
      } else if (pending === 0) resolve();
    };
    let failed = false;
    const take = (w: Worker, data: PackedBatch) => {
      if (failed) return;
      pending--;
      try {
        onBatch(unpackBatch(data, idPaths));
      } catch (e) {
        failed = true;
        reject(e);
        return;
      }
      feed(w);
    };
    for (const w of workers) {
      w.onmessage = (ev: MessageEvent<PackedBatch>) => {
        if (shareTurns) void inTurns(1, () => take(w, ev.data));
        else take(w, ev.data);
      };
      w.onerror = (e) => {
        failed = true; // batches still waiting for their turn must not write after the pass has failed
        reject(new Error(`parse worker failed: ${e.message}`));
      };
    }
    // Several batches queued per worker keep it busy while the main thread, busy
    // inserting, has not yet read its earlier results.
    for (let i = 0; i < IN_FLIGHT; i++) for (const w of workers) feed(w);
  }).finally(() => {
    for (const w of workers) w.terminate();
  });
}
