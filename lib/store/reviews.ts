// Human reviews (state.db): a person's statement that a note, at one exact
// content hash, is right. Set with `lettuce review <vault> PATH`; any later
// change of the note's bytes leaves the review behind (the note reads as
// unreviewed again) until someone reviews it anew. One review per path: the
// latest. A moved note loses its review (the path is the identity).
import type { Database } from "bun:sqlite";

// One entry of STATE_MIGRATIONS (lib/store/state-db.ts). IF NOT EXISTS so that
// the migration stays harmless whatever order parallel branches land in.
export const REVIEWS_TABLE_SQL = `
  CREATE TABLE IF NOT EXISTS reviews (
    path TEXT PRIMARY KEY,       -- vault-relative note path
    hash TEXT NOT NULL,          -- sha256 of the note's bytes when it was reviewed
    reviewer TEXT NOT NULL,      -- who reviewed it (a person's name)
    reviewed_at TEXT NOT NULL    -- ISO 8601
  );
`;

export interface Review {
  path: string;
  hash: string;
  reviewer: string;
  reviewedAt: string;
}

function toReview(r: { path: string; hash: string; reviewer: string; reviewed_at: string }): Review {
  return { path: r.path, hash: r.hash, reviewer: r.reviewer, reviewedAt: r.reviewed_at };
}

export function setReview(db: Database, path: string, hash: string, reviewer: string, at = new Date().toISOString()): Review {
  db.query("INSERT OR REPLACE INTO reviews(path, hash, reviewer, reviewed_at) VALUES (?, ?, ?, ?)").run(path, hash, reviewer, at);
  return { path, hash, reviewer, reviewedAt: at };
}

/** Forget a note's review; false when it had none. */
export function removeReview(db: Database, path: string): boolean {
  return db.query("DELETE FROM reviews WHERE path = ?").run(path).changes > 0;
}

export function reviewOf(db: Database, path: string): Review | null {
  const r = db.query("SELECT path, hash, reviewer, reviewed_at FROM reviews WHERE path = ?").get(path) as Parameters<typeof toReview>[0] | null;
  return r ? toReview(r) : null;
}

/** Reviews of these paths (one statement whatever the number). */
export function reviewsOf(db: Database, paths: string[]): Map<string, Review> {
  if (!paths.length) return new Map();
  const rows = db
    .query("SELECT path, hash, reviewer, reviewed_at FROM reviews WHERE path IN (SELECT value FROM json_each(?))")
    .all(JSON.stringify(paths)) as Parameters<typeof toReview>[0][];
  return new Map(rows.map((r) => [r.path, toReview(r)]));
}

export function listReviews(db: Database): Review[] {
  return (db.query("SELECT path, hash, reviewer, reviewed_at FROM reviews ORDER BY path").all() as Parameters<typeof toReview>[0][]).map(toReview);
}
