import type { Database } from "bun:sqlite";

/** Tags (case-insensitive) with the number of notes carrying each, most used first. */
export function tagCounts(db: Database, limit = -1, offset = 0): { items: { tag: string; count: number }[]; total: number } {
  const total = (db.query("SELECT count(DISTINCT tag_lc) AS n FROM tags").get() as { n: number }).n;
  const items = db
    .query("SELECT min(tag) AS tag, count(DISTINCT note_id) AS count FROM tags GROUP BY tag_lc ORDER BY count DESC, tag_lc LIMIT ? OFFSET ?")
    .all(limit, offset) as { tag: string; count: number }[];
  return { items, total };
}
