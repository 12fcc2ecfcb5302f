// The read jobs that may run off the main thread: each is one call into the
// engine on a read-only connection. The worker (worker.ts) and the inline
// fallback (pool.ts) both run them through runJob, so they answer the same.
import type { Database } from "bun:sqlite";
import { wikiHealth } from "../hygiene/health";
import { lintVault } from "../hygiene/lint";
import { linkGraph } from "../retrieval/graph";
import { searchNotes } from "../retrieval/search";

export type ReadJob =
  | { kind: "search"; query: string; limit: number; offset: number }
  | { kind: "graph"; center: string; depth: number; maxNodes: number }
  | { kind: "lint" }
  | { kind: "health" };

export function runJob(db: Database, job: ReadJob): unknown {
  switch (job.kind) {
    case "search":
      return searchNotes(db, job.query, job.limit, job.offset);
    case "graph":
      return linkGraph(db, job.center, job.depth, job.maxNodes);
    case "lint":
      return lintVault(db);
    case "health":
      return wikiHealth(db);
  }
}
