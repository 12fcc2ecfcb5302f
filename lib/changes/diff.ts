// Which notes the change journal is behind on: the whole-vault comparison of
// the index with the journal that a catch-up starts from. Every note's hash is
// read from both files (~0.2 s at 100k notes), so it runs in a read worker
// (lib/offload/jobs.ts) with its own read-only connections; the journal then
// records only the notes named here, in small steps on the request thread.
// The two files are read at two moments: a note recorded in between only
// shows up as a candidate, which the journal checks again before it writes.
import { Database } from "bun:sqlite";

export interface JournalDiff {
  /** Notes whose content the journal has not reported (new, changed, or back after a delete), "\0"-separated, oldest first. */
  changed: string;
  /** Notes the journal lists as present that the index does not have, "\0"-separated. */
  gone: string;
}

/** "\0"-joined (no path holds it): one string crosses from a worker without a clone per path. */
export const splitIds = (ids: string): string[] => (ids ? ids.split("\0") : []);

/** The comparison in a read worker: state.db opened read-only for it. */
export function journalDiffOf(indexDb: Database, stateFile: string): JournalDiff {
  const state = new Database(stateFile, { readonly: true });
  try {
    state.exec("PRAGMA busy_timeout = 5000");
    return journalDiff(indexDb, state);
  } finally {
    state.close();
  }
}

export function journalDiff(indexDb: Database, state: Database): JournalDiff {
  const notes = indexDb.query("SELECT path, hash, mtime FROM notes").all() as { path: string; hash: string; mtime: number }[];
  const journal = state.query("SELECT id, change, hash FROM change_journal WHERE kind = 'note'").all() as { id: string; change: string; hash: string | null }[];
  const lastDated = (state.query("SELECT coalesce((SELECT max(updated_at) FROM change_journal), 0) AS t").get() as { t: number }).t;
  const known = new Map<string, string | null>();
  for (const j of journal) known.set(j.id, j.change === "deleted" ? null : j.hash);
  const changed = notes.filter((n) => {
    const hash = known.get(n.path);
    return hash === undefined || hash === null || hash !== n.hash;
  });
  // The order the journal dates a pass in (ChangeJournal.apply): by mtime, and those older than the feed's
  // last date after them. Kept across its steps, so that each step's dates follow the one before.
  const now = Date.now();
  const old = (mtime: number) => (Math.min(now, Math.round(mtime)) < lastDated ? 1 : 0);
  changed.sort((a, b) => old(a.mtime) - old(b.mtime) || a.mtime - b.mtime);
  const here = new Set(notes.map((n) => n.path));
  const gone = journal.filter((j) => j.change !== "deleted" && !here.has(j.id)).map((j) => j.id);
  return { changed: changed.map((n) => n.path).join("\0"), gone: gone.join("\0") };
}
