import type { Database } from "bun:sqlite";
import { CARRIED_CTIMES } from "../store/index-db";
import { FtsSink } from "./fts-sink";
import type { KnownNote } from "./known-rows";
import { parseWorkerCount, spawnParseWorkers } from "./parse-pool";
import { envNumber } from "../env-number";

// What a first index of a vault does differently from the passes after it: the bulk load (secondary indexes
// dropped and rebuilt, full-text rows written from a thread of their own, started early), and the
// first-seen times carried over from an index of another format.

// A cold scan of at least this many notes is a bulk load. (An environment override lets the tests take
// this path on small vaults.)
export const bulkThreshold = () => envNumber("LETTUCE_BULK_THRESHOLD", 2000, { min: 1, max: 1e9, integer: true });

/** A cold scan's full-text writer and parse workers, started before the work is ready for them. */
export interface EarlyStart {
  sink: FtsSink;
  workers: Worker[];
  discard(): void;
}

/** Nothing indexed yet (`known` may be a subset of the rows: the table decides). */
export function isColdStart(db: Database, known: Map<string, KnownNote>): boolean {
  return known.size === 0 && db.query("SELECT 1 FROM notes LIMIT 1").get() === null;
}

/**
 * A cold scan of a big vault: start the full-text writer and the parse workers as soon as the
 * listing is in, so that their start-up (module loading, opening fts.db) overlaps the main
 * thread's preparation (the listing diff, the resolver, dropping indexes) instead of following it.
 */
export function startEarly(root: string, db: Database, known: Map<string, KnownNote>, notes: number): EarlyStart | undefined {
  if (notes < bulkThreshold() || !isColdStart(db, known)) return undefined;
  const sink = new FtsSink(root);
  const workers = spawnParseWorkers(parseWorkerCount(notes));
  return {
    sink,
    workers,
    discard() {
      for (const w of workers) w.terminate();
      void sink.abort();
    },
  };
}

/** After the first scan of an index rebuilt for another format: the notes' first-seen times the old one knew. */
export function restoreFirstSeenTimes(db: Database): void {
  if (!db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(CARRIED_CTIMES)) return;
  db.transaction(() => {
    db.exec(`UPDATE notes SET ctime = c.ctime FROM ${CARRIED_CTIMES} c WHERE c.path = notes.path AND c.ctime < notes.ctime`);
    db.exec(`DROP TABLE ${CARRIED_CTIMES}`);
  })();
}
