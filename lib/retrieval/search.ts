import type { Database } from "bun:sqlite";
import { ToolError } from "../errors";
import { parseSearchQuery, type ParsedQuery } from "./fts-query";
import { buildSnippet, SNIPPET_WINDOW } from "./snippet";

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

// At most this many notes named exactly as the query are put first (a vault
// may hold many notes with one title in different folders).
const EXACT_CANDIDATES = 50;

/**
 * Keyword search: BM25 (title and aliases weighted 10×) over the FTS5 index,
 * best first, except that notes whose title, file name or alias *is* the
 * query (case and accents aside) come first: someone searching
 * "zettelkasten" wants the note called Zettelkasten before the plugins that
 * mention it in their titles.
 *
 * Ranking reads only the index's posting lists; each hit's snippet is built
 * from the first SNIPPET_WINDOW characters of its text (lib/retrieval/snippet.ts),
 * never with FTS5's snippet(), whose cost grows with the note. The query
 * language has a budget (fts-query.ts): query-too-complex beyond it.
 */
export function searchNotes(db: Database, query: string, limit: number, offset = 0): SearchPage {
  const q = parseSearchQuery(query);
  if (!q) return { items: [], total: 0 };
  try {
    const exact = exactTitleMatches(db, q);
    const exactSet = new Set(exact.map((e) => e.id));
    // Everything before the page end is needed to place the exact matches; ids and ranks only (cheap).
    // `total` comes from the same pass (a window count): a second, unranked count(*) pass
    // cost as much again on phrase queries of common words, the slowest ones (measured: p99
    // 14.2 → 11.4 ms at 10k notes, and p50 lower too, as SQLite sorts once either way).
    const ranked = db
      .query("SELECT rowid AS id, rank AS score, count(*) OVER () AS n FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT ?")
      .all(q.match, offset + limit + exact.length) as { id: number; score: number; n: number }[];
    const ordered = [...exact, ...ranked.filter((r) => !exactSet.has(r.id))];
    const pageRows = ordered.slice(offset, offset + limit);
    const items = pageRows.map((r) => hitOf(db, r, q)).filter((h): h is SearchHit => h !== null);
    // Every match, exact-title ones included (they satisfy the same MATCH).
    const total = ranked[0]?.n ?? ordered.length;
    return { items, total };
  } catch (e) {
    if (e instanceof ToolError) throw e;
    // The spec: a malformed query returns no rows, never an error.
    return { items: [], total: 0 };
  }
}

function hitOf(db: Database, r: { id: number; score: number }, q: ParsedQuery): SearchHit | null {
  const note = db.query("SELECT path, title FROM notes WHERE id = ?").get(r.id) as { path: string; title: string } | null;
  if (!note) return null;
  // substr() reads only the pages it needs, however long the note is.
  const head = db.query("SELECT substr(body, 1, ?) AS head FROM fts WHERE rowid = ?").get(SNIPPET_WINDOW + 1, r.id) as { head: string | null } | null;
  return { path: note.path, title: note.title, snippet: buildSnippet(head?.head ?? "", q.positives), score: r.score };
}

/**
 * Notes matching the query whose title, file name or an alias equals the
 * query's words (for a query without OR), best ranked first. The indexer
 * keeps every note's folded names in name_keys, so finding them is one index
 * lookup, whatever the vault's size; only those few are ranked.
 */
function exactTitleMatches(db: Database, q: ParsedQuery): { id: number; score: number }[] {
  if (q.hasOr || q.positives.length === 0) return [];
  const words = q.positives.flatMap((t) => t.tokens);
  if (!words.length) return [];
  const ids = (db.query("SELECT note_id AS id FROM name_keys WHERE key = ? LIMIT ?").all(words.join(" "), EXACT_CANDIDATES) as { id: number }[]).map((r) => r.id);
  if (!ids.length) return [];
  // Still subject to the whole query (a -word can exclude the note), and ranked like any hit.
  return db
    .query("SELECT rowid AS id, rank AS score FROM fts WHERE fts MATCH ? AND rowid IN (SELECT value FROM json_each(?)) ORDER BY rank")
    .all(q.match, JSON.stringify(ids)) as { id: number; score: number }[];
}
