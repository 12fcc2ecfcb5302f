// Which notes the change journal is behind on: the whole-vault comparison of
// the index with the journal that a catch-up starts from. Every note's hash is
// compared (~0.1 s at 100k notes), so a server runs it in a read worker
// (lib/offload/jobs.ts) on its read-only connection; the journal then records
// only the notes named here, in small steps on the request thread.
// The two files are read at two moments: a note recorded in between only
// shows up as a candidate, which the journal checks again before it writes.
import type { Database } from "bun:sqlite";

export interface JournalDiff {
  /** Notes whose content the journal has not reported (new, changed, or back after a delete), "\0"-separated, oldest first. */
  changed: string;
  /** Notes the journal lists as present that the index does not have, "\0"-separated. */
  gone: string;
}

/** "\0"-joined (no path holds it): one string crosses from a worker without a clone per path. */
export const splitIds = (ids: string): string[] => (ids ? ids.split("\0") : []);

/**
 * The comparison in a read worker: state.db attached to the worker's read-only connection, so that only the
 * notes that differ come into memory (reading every note's and every journal row's hash into the worker held
 * ~100 MB at 100k notes, for a moment, at every start-up).
 */
export function journalDiffOf(indexDb: Database, stateFile: string): JournalDiff {
  return attached(indexDb, stateFile, "journal_state", () => compare(indexDb, "notes", "journal_state.change_journal"));
}

/** The same comparison on the request thread, for a vault of a few thousand notes: index.db attached to state.db's connection. */
export function journalDiff(indexDb: Database, state: Database): JournalDiff {
  return attached(state, indexDb.filename, "journal_index", () => compare(state, "journal_index.notes", "change_journal"));
}

function attached<T>(db: Database, file: string, as: string, fn: () => T): T {
  db.query(`ATTACH DATABASE ? AS ${as}`).run(file);
  try {
    return fn();
  } finally {
    db.exec(`DETACH DATABASE ${as}`);
  }
}

/** Notes whose content the journal has not reported, and journalled notes the index no longer has, in SQL. */
function compare(db: Database, notes: string, journal: string): JournalDiff {
  const changed = db
    .query(
      `SELECT n.path AS path, n.mtime AS mtime FROM ${notes} n LEFT JOIN ${journal} j ON j.id = n.path
       WHERE j.id IS NULL OR j.change = 'deleted' OR j.hash IS NOT n.hash`,
    )
    .all() as Note[];
  const gone = db
    .query(`SELECT j.id AS id FROM ${journal} j WHERE j.kind = 'note' AND j.change <> 'deleted' AND NOT EXISTS (SELECT 1 FROM ${notes} n WHERE n.path = j.id)`)
    .all() as { id: string }[];
  const last = db.query(`SELECT coalesce((SELECT max(updated_at) FROM ${journal}), 0) AS t`).get() as { t: number };
  return { changed: inDatingOrder(changed, last.t), gone: gone.map((g) => g.id).join("\0") };
}

interface Note {
  path: string;
  mtime: number;
}

/**
 * The order the journal dates a pass in (ChangeJournal.apply): by mtime, and those older than the feed's last
 * date after them. Kept across its steps, so that each step's dates follow the one before.
 */
function inDatingOrder(changed: Note[], lastDated: number): string {
  const now = Date.now();
  const old = (mtime: number) => (Math.min(now, Math.round(mtime)) < lastDated ? 1 : 0);
  changed.sort((a, b) => old(a.mtime) - old(b.mtime) || a.mtime - b.mtime);
  return changed.map((n) => n.path).join("\0");
}
