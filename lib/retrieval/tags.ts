import type { Database } from "bun:sqlite";
import { getMeta } from "../store/index-db";

export type TagCount = { tag: string; count: number };

// The whole ranking, per connection and index generation: it is an aggregate over every tag row
// (22 ms at 10k notes, ~10× that at 100k, on the request thread), asked again for each page.
const rankings = new WeakMap<Database, { gen: string | null; items: TagCount[] }>();

function ranking(db: Database): TagCount[] {
  const gen = getMeta(db, "gen");
  const cached = rankings.get(db);
  if (cached && gen !== null && cached.gen === gen) return cached.items;
  const items = db
    .query("SELECT min(tag) AS tag, count(DISTINCT note_id) AS count FROM tags GROUP BY tag_lc ORDER BY count DESC, tag_lc")
    .all() as TagCount[];
  rankings.set(db, { gen, items });
  return items;
}

/** Tags (case-insensitive) with the number of notes carrying each, most used first. */
export function tagCounts(db: Database, limit = -1, offset = 0): { items: TagCount[]; total: number } {
  const all = ranking(db);
  const end = limit < 0 ? all.length : offset + limit;
  return { items: all.slice(offset, end).map((t) => ({ ...t })), total: all.length };
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
