import type { Database } from "bun:sqlite";
import { toFtsQuery } from "./fts-query";

export interface SearchHit {
  path: string;
  title: string;
  snippet: string;
  score: number;
}

export interface SearchPage {
  items: SearchHit[];
  total: number;
}

/**
 * Keyword search: BM25 (title weighted 10×) over the FTS5 index, best first.
 * FTS5 refuses snippet() next to a window count, so the total comes from a
 * second, unranked count, and only when the page is full (otherwise the page
 * itself tells the total).
 */
export function searchNotes(db: Database, query: string, limit: number, offset = 0): SearchPage {
  const match = toFtsQuery(query);
  if (!match) return { items: [], total: 0 };
  try {
    const items = db
      .query(
        `SELECT n.path AS path, n.title AS title, snippet(fts, 1, '', '', '…', 16) AS snippet, rank AS score
         FROM fts JOIN notes n ON n.id = fts.rowid
         WHERE fts MATCH ? ORDER BY rank LIMIT ? OFFSET ?`,
      )
      .all(match, limit, offset) as SearchHit[];
    const total = items.length > 0 && items.length < limit ? offset + items.length : countMatches(db, match);
    return { items, total };
  } catch {
    // The spec: a malformed query returns no rows, never an error.
    return { items: [], total: 0 };
  }
}

export function countMatches(db: Database, match: string): number {
  return (db.query("SELECT count(*) AS n FROM fts WHERE fts MATCH ?").get(match) as { n: number }).n;
}
