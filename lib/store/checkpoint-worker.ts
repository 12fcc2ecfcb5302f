// Worker entry: checkpoints the WAL of the databases a long-running server
// writes, on a connection of its own (see checkpointer.ts for why). Every
// CHECK_MS it looks at each WAL file's size and mtime (a stat, no SQLite) and
// runs a PASSIVE checkpoint where the WAL has changed: one that never waits
// for a lock and never blocks the writer or a reader.
import { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import { lowerThreadPriority } from "../platform/thread-priority";

declare const self: Worker;

// Background work: on a busy machine the threads that answer requests get the core first.
lowerThreadPriority();

export type CheckpointRequest = { add: string } | { remove: string } | { now: true };

const CHECK_MS = 500;
const open = new Map<string, { db: Database; seen: string }>();

function walStamp(file: string): string {
  try {
    const st = statSync(file + "-wal");
    return `${st.size}:${st.mtimeMs}`;
  } catch {
    return "";
  }
}

function checkpoint(force = false): void {
  for (const [file, c] of open) {
    const stamp = walStamp(file);
    if (!force && (stamp === c.seen || stamp === "")) continue;
    try {
      c.db.query("PRAGMA wal_checkpoint(PASSIVE)").get();
    } catch {
      /* busy or gone: the next round tries again */
    }
    c.seen = walStamp(file);
  }
}

self.onmessage = (ev: MessageEvent<CheckpointRequest>) => {
  const m = ev.data;
  if ("add" in m) {
    if (open.has(m.add)) return;
    try {
      const db = new Database(m.add);
      open.set(m.add, { db, seen: "" });
    } catch {
      /* not openable here: that file's WAL grows until its own connection closes */
    }
  } else if ("remove" in m) {
    const c = open.get(m.remove);
    open.delete(m.remove);
    c?.db.close();
  } else checkpoint(true);
};

setInterval(() => checkpoint(), CHECK_MS);
