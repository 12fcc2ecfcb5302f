// Worker entry: checkpoints the WAL of the databases a long-running server
// writes, on a connection of its own (see checkpointer.ts for why). Every
// CHECK_MS it stats each WAL file (no SQLite call, and never an open: closing
// any descriptor of a file drops every POSIX lock this process holds on it,
// SQLite's included) and runs a PASSIVE checkpoint, one that never waits for
// a lock and never blocks the writer or a reader, where the WAL has changed
// and either EVERY_MS have passed since its last one or it has grown by
// GROWTH bytes (~1,000 frames, SQLite's own threshold). Not at every change:
// once a checkpoint has copied every frame back, the next commit starts the
// WAL over and fsyncs its header, on the thread that commits (the request
// thread). Checkpointing whatever had changed every half second cost that
// thread an fsync ~twice a second while a build wrote the index, and one per
// audit-log flush (measured: 1-28 ms each).
import { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import { lowerThreadPriority } from "../platform/thread-priority";

declare const self: Worker;

// Background work: on a busy machine the threads that answer requests get the core first.
lowerThreadPriority();

export type CheckpointRequest = { add: string } | { remove: string } | { now: true };

const CHECK_MS = 500;
const EVERY_MS = 30_000;
const GROWTH = 4 * 1024 * 1024;

interface Watched {
  db: Database;
  /** The WAL's size and mtime when last looked at. */
  seen: string;
  changed: boolean;
  lastAt: number;
  /** The WAL file's size at the last checkpoint: it keeps its largest size, and grows past it only with new frames. */
  lastSize: number;
}
const open = new Map<string, Watched>();

function walStat(file: string): { size: number; stamp: string } | null {
  try {
    const st = statSync(file + "-wal");
    return { size: st.size, stamp: `${st.size}:${st.mtimeMs}` };
  } catch {
    return null;
  }
}

function checkpoint(force = false): void {
  const now = performance.now(); // monotonic: a wall-clock step back held checkpoints off for its length
  for (const [file, w] of open) {
    const st = walStat(file);
    if (!st) continue;
    if (st.stamp !== w.seen) w.changed = true;
    w.seen = st.stamp;
    if (!force && (!w.changed || (now - w.lastAt < EVERY_MS && st.size - w.lastSize < GROWTH))) continue;
    try {
      w.db.query("PRAGMA wal_checkpoint(PASSIVE)").get();
    } catch {
      /* busy or gone: the next round tries again */
      continue;
    }
    w.changed = false;
    w.lastAt = now;
    w.lastSize = st.size;
  }
}

self.onmessage = (ev: MessageEvent<CheckpointRequest>) => {
  const m = ev.data;
  if ("add" in m) {
    if (open.has(m.add)) return;
    try {
      const db = new Database(m.add);
      const st = walStat(m.add);
      open.set(m.add, { db, seen: st?.stamp ?? "", changed: false, lastAt: performance.now(), lastSize: st?.size ?? 0 });
    } catch {
      /* not openable here: that file's WAL grows until its own connection closes */
    }
  } else if ("remove" in m) {
    const w = open.get(m.remove);
    open.delete(m.remove);
    w?.db.close();
  } else checkpoint(true);
};

setInterval(() => checkpoint(), CHECK_MS);
