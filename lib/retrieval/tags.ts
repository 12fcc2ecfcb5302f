import type { Database } from "bun:sqlite";

/** Tags (case-insensitive) with the number of notes carrying each, most used first. */
export function tagCounts(db: Database, limit = -1, offset = 0): { items: { tag: string; count: number }[]; total: number } {
  const total = (db.query("SELECT count(DISTINCT tag_lc) AS n FROM tags").get() as { n: number }).n;
  const items = db
    .query("SELECT min(tag) AS tag, count(DISTINCT note_id) AS count FROM tags GROUP BY tag_lc ORDER BY count DESC, tag_lc LIMIT ? OFFSET ?")
    .all(limit, offset) as { tag: string; count: number }[];
  return { items, total };
}

/** Each note's tags, lower-cased (notes without tags are absent). */
export function tagsOfNotes(db: Database, noteIds: number[]): Map<number, string[]> {
  const out = new Map<number, string[]>();
  if (!noteIds.length) return out;
  const rows = db.query("SELECT DISTINCT note_id AS id, tag_lc AS tag FROM tags WHERE note_id IN (SELECT value FROM json_each(?))").all(JSON.stringify(noteIds)) as { id: number; tag: string }[];
  for (const r of rows) {
    const list = out.get(r.id);
    if (list) list.push(r.tag);
    else out.set(r.id, [r.tag]);
  }
  return out;
}
