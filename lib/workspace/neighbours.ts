// Link neighbours of a page, one entry per page (not per link): what
// get_related_pages lists and what a context pack's `related` is drawn from.
// Only links to pages and databases count (an image is no neighbour).
import type { Database } from "bun:sqlite";
import { inList } from "../semantic/store";

export interface Neighbour {
  path: string;
  title: string;
  /** Every link between the two is an embed (![[…]]): a child block rather than an inline mention. */
  embed: boolean;
}

const isPageOrDatabase = "(l.resolved LIKE '%.md' OR l.resolved LIKE '%.base')";

/** Pages and databases a note links to, in the order of their first link. */
export function linkedFrom(db: Database, noteId: number, limit: number): { items: Neighbour[]; total: number } {
  const where = `FROM links l WHERE l.note_id = ? AND l.resolved IS NOT NULL AND ${isPageOrDatabase}`;
  const total = (db.query(`SELECT count(DISTINCT l.resolved) AS n ${where}`).get(noteId) as { n: number }).n;
  const items = db
    .query(
      `SELECT l.resolved AS path, coalesce(n.title, l.resolved) AS title, min(l.embed) AS embed, min(l.ord) AS first
       ${where.replace("FROM links l", "FROM links l LEFT JOIN notes n ON n.path = l.resolved")}
       GROUP BY l.resolved ORDER BY first LIMIT ?`,
    )
    .all(noteId, limit) as { path: string; title: string; embed: number }[];
  return { items: items.map((r) => ({ path: r.path, title: r.title, embed: r.embed === 1 })), total };
}

/** Notes that link to a page or database, by path. */
export function linkingTo(db: Database, path: string, limit: number): { items: Neighbour[]; total: number } {
  const where = "FROM links l JOIN notes n ON n.id = l.note_id WHERE l.resolved = ? AND n.path != ?";
  const total = (db.query(`SELECT count(DISTINCT l.note_id) AS n ${where}`).get(path, path) as { n: number }).n;
  const items = db
    .query(`SELECT n.path AS path, n.title AS title, min(l.embed) AS embed ${where} GROUP BY n.path ORDER BY n.path LIMIT ?`)
    .all(path, path, limit) as { path: string; title: string; embed: number }[];
  return { items: items.map((r) => ({ path: r.path, title: r.title, embed: r.embed === 1 })), total };
}

/** How many distinct notes link to each of these paths (the link-graph prior). */
export function inboundCounts(db: Database, paths: string[]): Map<string, number> {
  if (!paths.length) return new Map();
  const rows = db
    .query(`SELECT l.resolved AS path, count(DISTINCT l.note_id) AS n FROM links l WHERE ${inList("l.resolved")} GROUP BY l.resolved`)
    .all(JSON.stringify(paths)) as { path: string; n: number }[];
  return new Map(rows.map((r) => [r.path, r.n]));
}
