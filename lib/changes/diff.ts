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
 * The comparison in a read worker: state.db attached to the worker's read-only connection, and the two
 * compared in SQL, so that only the notes that differ come into memory (reading every note's and every
 * journal row's hash into the worker held ~100 MB at 100k notes, for a moment, at every start-up).
 */
export function journalDiffOf(indexDb: Database, stateFile: string): JournalDiff {
  indexDb.query("ATTACH DATABASE ? AS journal_state").run(stateFile);
  try {
    const changed = indexDb
      .query(
        `SELECT n.path AS path, n.mtime AS mtime FROM notes n LEFT JOIN journal_state.change_journal j ON j.id = n.path
         WHERE j.id IS NULL OR j.change = 'deleted' OR j.hash IS NOT n.hash`,
      )
      .all() as Note[];
    const gone = indexDb
      .query(
        `SELECT j.id AS id FROM journal_state.change_journal j
         WHERE j.kind = 'note' AND j.change <> 'deleted' AND NOT EXISTS (SELECT 1 FROM notes n WHERE n.path = j.id)`,
      )
      .all() as { id: string }[];
    const last = indexDb.query("SELECT coalesce((SELECT max(updated_at) FROM journal_state.change_journal), 0) AS t").get() as { t: number };
    return { changed: inDatingOrder(changed, last.t), gone: gone.map((g) => g.id).join("\0") };
  } finally {
    indexDb.exec("DETACH DATABASE journal_state");
  }
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

/** The comparison on the request thread, for a vault of a few thousand notes (or where no worker runs). */
export function journalDiff(indexDb: Database, state: Database): JournalDiff {
  const notes = indexDb.query("SELECT path, hash, mtime FROM notes").all() as (Note & { hash: string })[];
  const journal = state.query("SELECT id, change, hash FROM change_journal WHERE kind = 'note'").all() as { id: string; change: string; hash: string | null }[];
  const lastDated = (state.query("SELECT coalesce((SELECT max(updated_at) FROM change_journal), 0) AS t").get() as { t: number }).t;
  const known = new Map<string, string | null>();
  for (const j of journal) known.set(j.id, j.change === "deleted" ? null : j.hash);
  const changed = notes.filter((n) => {
    const hash = known.get(n.path);
    return hash === undefined || hash === null || hash !== n.hash;
  });
  const here = new Set(notes.map((n) => n.path));
  const gone = journal.filter((j) => j.change !== "deleted" && !here.has(j.id)).map((j) => j.id);
  return { changed: inDatingOrder(changed, lastDated), gone: gone.join("\0") };
}
