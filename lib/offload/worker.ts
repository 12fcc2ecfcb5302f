// Worker entry: runs read jobs (search, link graph, lint) on its own read-only
// connection to the index, so that a slow SQLite statement, which cannot be
// interrupted, never holds the server's event loop. A worker that runs the
// whole-vault passes runs at a lower CPU priority (pool.ts).
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { ToolError } from "../errors";
import { ftsPath } from "../store/fts-db";
import { runJob, type ReadJob } from "./jobs";
import { transferables } from "./json-text";
import { lowerThreadPriority } from "../platform/thread-priority";

declare const self: Worker;

// Lowered with the first heavy job (pool.ts decides which worker runs those), and never raised again:
// an unprivileged thread cannot take its priority back.
let lowered = false;

export type WorkerRequest = { id: number; root: string; job: ReadJob; lowPriority?: boolean };
export type WorkerReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; kind: string; message: string; data?: Record<string, unknown> };

let db: Database | null = null;

function open(root: string): Database {
  if (!db) {
    db = new Database(join(root, ".lettuce", "index.db"), { readonly: true });
    db.query("ATTACH DATABASE ? AS ftsdb").run(ftsPath(root));
    db.exec("PRAGMA busy_timeout = 5000");
  }
  return db;
}

self.onmessage = (ev: MessageEvent<WorkerRequest>) => {
  const { id, root, job, lowPriority } = ev.data;
  if (lowPriority && !lowered) {
    lowered = true;
    lowerThreadPriority();
  }
  let reply: WorkerReply;
  try {
    reply = { id, ok: true, value: runJob(open(root), job) };
  } catch (e) {
    reply =
      e instanceof ToolError
        ? { id, ok: false, kind: e.kind, message: e.message, data: e.data }
        : { id, ok: false, kind: "internal", message: e instanceof Error ? (e.stack ?? e.message) : String(e) };
  }
  self.postMessage(reply, reply.ok ? transferables(reply.value) : []);
};
