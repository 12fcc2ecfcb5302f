// Worker entry: checkpoints the WAL of the databases a long-running server
// writes, on a connection of its own (see checkpointer.ts for why). Every
// CHECK_MS it reads how many frames of each WAL are not yet copied back (the
// wal-index in the -shm file, no SQLite call) and runs a PASSIVE checkpoint, one that never
// waits for a lock and never blocks the writer or a reader, where that passes
// FRAMES, SQLite's own threshold. Not sooner: once a checkpoint has copied
// every frame back, the next commit starts the WAL over and fsyncs its header,
// on the thread that commits (the request thread). Checkpointing whatever had
// changed every half second cost that thread an fsync ~twice a second while a
// build wrote the index, and one per audit-log flush (measured: 1-28 ms each).
import { Database } from "bun:sqlite";
import { closeSync, openSync, readSync } from "node:fs";
import { endianness } from "node:os";
import { lowerThreadPriority } from "../platform/thread-priority";

declare const self: Worker;

// Background work: on a busy machine the threads that answer requests get the core first.
lowerThreadPriority();

export type CheckpointRequest = { add: string } | { remove: string } | { now: true };

const CHECK_MS = 500;
const FRAMES = 1000;
const open = new Map<string, Database>();
const header = new Uint8Array(100);
const little = endianness() === "LE";

/**
 * Frames in `file`'s WAL not yet copied back: mxFrame (byte 16 of the wal-index header that starts the
 * -shm file) less nBackfill (byte 96), in the machine's byte order (https://www.sqlite.org/walformat.html).
 * -1 when they cannot be read.
 */
function framesBehind(file: string): number {
  let fd: number | null = null;
  try {
    fd = openSync(file + "-shm", "r");
    if (readSync(fd, header, 0, header.length, 0) < header.length) return -1;
    const v = new DataView(header.buffer);
    return v.getUint32(16, little) - v.getUint32(96, little);
  } catch {
    return -1;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

function checkpoint(force = false): void {
  for (const [file, db] of open) {
    if (!force && framesBehind(file) < FRAMES) continue;
    try {
      db.query("PRAGMA wal_checkpoint(PASSIVE)").get();
    } catch {
      /* busy or gone: the next round tries again */
    }
  }
}

self.onmessage = (ev: MessageEvent<CheckpointRequest>) => {
  const m = ev.data;
  if ("add" in m) {
    if (open.has(m.add)) return;
    try {
      open.set(m.add, new Database(m.add));
    } catch {
      /* not openable here: that file's WAL grows until its own connection closes */
    }
  } else if ("remove" in m) {
    const db = open.get(m.remove);
    open.delete(m.remove);
    db?.close();
  } else checkpoint(true);
};

setInterval(() => checkpoint(), CHECK_MS);
