// Write-ahead-log checkpoints off the request thread. SQLite checkpoints from
// whichever connection commits past 1,000 WAL pages, and a checkpoint copies
// those pages into the database and fsyncs it: ~25 ms on this machine's disk,
// up to 65 ms seen, on the thread that serves requests, every dozen or so
// commits while a vault is embedded (then 128 vectors of the cache, 16 passages
// of the index per commit). A long-running server (serve, stdio) turns SQLite's
// automatic checkpoint off on its own connections and lets a worker thread do
// it on a connection of its own (checkpoint-worker.ts). One-shot commands keep
// SQLite's default: they write in one go and checkpoint when they close.
import type { Database } from "bun:sqlite";
import { workerEntry } from "../platform/embedded";
import type { CheckpointRequest } from "./checkpoint-worker";
import { startWorker } from "../platform/descriptors";

let worker: Worker | null = null;
let active = false;
// Each watched file and the connections of this thread that write it (state.db has two).
const files = new Map<string, Set<Database>>();

let longRunning = false;

/** This process serves a vault for a long time: connections handed to watchWal() from now on checkpoint off-thread. */
export function checkpointOffThread(): void {
  active = true;
  longRunning = true;
}

/** Whether checkpointOffThread() was called: this process serves a vault (other writers off the request thread ask too). */
export function servesForLong(): boolean {
  return longRunning;
}

function post(m: CheckpointRequest): boolean {
  if (!worker) {
    try {
      worker = startWorker(workerEntry("lib/store/checkpoint-worker.ts", import.meta.url, "./checkpoint-worker.ts"));
      (worker as unknown as { unref?: () => void }).unref?.();
      // No thread after all (a binary built without it): every connection checkpoints by itself again.
      worker.onerror = () => giveBack();
    } catch {
      active = false;
      return false;
    }
  }
  worker.postMessage(m);
  return true;
}

function giveBack(): void {
  active = false;
  worker?.terminate();
  worker = null;
  for (const db of new Set([...files.values()].flatMap((s) => [...s]))) {
    try {
      db.exec("PRAGMA wal_autocheckpoint = 1000");
    } catch {
      /* closed meanwhile */
    }
  }
  files.clear();
}

/**
 * Hand the WAL checkpoints of `file` (the main database of `db`, or one attached to it) to the checkpoint
 * thread, if this process serves: `db` then stops checkpointing by itself (wal_autocheckpoint is per
 * connection, so one call with its main file covers attached ones too; pass each file). Hand over every
 * connection that writes the file: one left out would still checkpoint it, on the request thread.
 */
export function watchWal(db: Database, file: string): void {
  if (!active || files.get(file)?.has(db) || process.env.LETTUCE_CHECKPOINT_THREAD === "0") return;
  if (!files.has(file) && !post({ add: file })) return;
  db.exec("PRAGMA wal_autocheckpoint = 0");
  files.set(file, (files.get(file) ?? new Set()).add(db));
}

/** `db` is closing: its files are no longer checkpointed (the close itself checkpoints what is left, when last). */
export function unwatchWal(db: Database): void {
  for (const [file, dbs] of files) {
    if (!dbs.delete(db) || dbs.size) continue;
    files.delete(file);
    worker?.postMessage({ remove: file } satisfies CheckpointRequest);
  }
}

/** Checkpoint every watched file now, without waiting for the next round (tests). */
export function checkpointNow(): void {
  if (files.size) worker?.postMessage({ now: true } satisfies CheckpointRequest);
}
