import type { Database } from "bun:sqlite";
import { ToolError } from "../errors";
import { parseSearchQuery, type ParsedQuery, type QueryTerm } from "./fts-query";
import { buildSnippet, SNIPPET_WINDOW } from "./snippet";
import { foldBody, scanNotes } from "./substring";
import { foldMatch } from "../vault/fold";
import { findText } from "../text-find";

export interface SearchHit {
  path: string;
  title: string;
  snippet: string;
  score: number;
}

export interface SearchPage {
  items: SearchHit[];
  total: number;
  /** The substring scan (a query word written with marks the index splits at: substring.ts outOfIndexReach) stopped at its budget: more notes may match. */
  partial?: true;
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
    // A query the index's words can miss (substring.ts outOfIndexReach: Greek accents, vowel points, Turkish ı)
    // is also looked for as substrings (a scan), and an excluded word then excludes every scanned note holding
    // it, the index's matches too. A word of Chinese, Japanese or Thai needs no scan: the index's n-gram
    // columns (lib/vault/ngram.ts) find it anywhere in a run, and a Latin word glued to such a run, in every note.
    const inside = q.scan ? scanInside(db, q) : null;
    const excluded = inside?.excluded.size ? JSON.stringify([...inside.excluded]) : null;
    const exact = exactTitleMatches(db, q).filter((e) => !inside?.excluded.has(e.id));
    const exactSet = new Set(exact.map((e) => e.id));
    // Everything before the page end is needed to place the exact matches; ids and ranks only (cheap).
    // `total` comes from the same pass (a window count): a second, unranked count(*) pass
    // cost as much again on phrase queries of common words, the slowest ones (measured: p99
    // 14.2 → 11.4 ms at 10k notes, and p50 lower too, as SQLite sorts once either way).
    const ranked = (
      excluded
        ? db
            .query("SELECT rowid AS id, rank AS score, count(*) OVER () AS n FROM fts WHERE fts MATCH ? AND rowid NOT IN (SELECT value FROM json_each(?)) ORDER BY rank LIMIT ?")
            .all(q.match, excluded, offset + limit + exact.length)
        : db.query("SELECT rowid AS id, rank AS score, count(*) OVER () AS n FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT ?").all(q.match, offset + limit + exact.length)
    ) as { id: number; score: number; n: number }[];
    const rest = ranked.filter((r) => !exactSet.has(r.id));
    // The spec: results come back best first by score. A named note put first keeps its own rank unless
    // that is worse than the best one below it; then it takes that one (lower is better), so the scores
    // a client sorts or merges by stay in the order shown.
    const floor = rest[0]?.score;
    const ordered = [...(floor === undefined ? exact : exact.map((e) => (e.score > floor ? { ...e, score: floor } : e))), ...rest];
    // Every match, exact-title ones included (they satisfy the same MATCH).
    const total = ranked[0]?.n ?? ordered.length;
    if (inside) return withInsideMatches(db, q, inside, ordered, total, limit, offset);
    return { items: hitsOf(db, ordered.slice(offset, offset + limit), q), total };
  } catch (e) {
    // The spec: a malformed query returns no rows, never an error. Only the query's own faults (FTS5's): a
    // locked, busy or damaged index answered "no matches" too, a wrong answer no caller could tell from a true one.
    if (e instanceof ToolError || !isQueryFault(e)) throw e;
    return { items: [], total: 0 };
  }
}

/**
 * An error FTS5's parser raises about the MATCH expression itself. Every term is quoted, so these are rare: a
 * NUL in a term ends SQLite's copy of the string there ("unterminated string"), a tree too deep.
 */
function isQueryFault(e: unknown): boolean {
  return /fts5|MATCH|unterminated string|no such column|special query/.test((e as Error)?.message ?? "");
}

/** Notes by id or path with the opening of their text (what a snippet is cut from), in one statement. */
function headsOf(db: Database, by: "id" | "path", keys: (number | string)[]): { id: number; path: string; title: string; head: string | null }[] {
  return db
    .query(`SELECT n.id, n.path, n.title, substr(f.body, 1, ?) AS head FROM json_each(?) j JOIN notes n ON n.${by} = j.value JOIN fts f ON f.rowid = n.id`)
    .all(SNIPPET_WINDOW + 1, JSON.stringify(keys)) as { id: number; path: string; title: string; head: string | null }[];
}

/**
 * The page's hits, in its order: path, title and the opening of the text for the snippet, in one
 * statement for the whole page (two per hit cost ~0.2 ms of a ~1 ms search at 10k notes).
 * substr() reads only the pages it needs, however long the note is.
 */
function hitsOf(db: Database, rows: { id: number; score: number }[], q: ParsedQuery): SearchHit[] {
  if (!rows.length) return [];
  const found = headsOf(db, "id", rows.map((r) => r.id));
  const byId = new Map(found.map((f) => [f.id, f]));
  const hits: SearchHit[] = [];
  for (const r of rows) {
    const note = byId.get(r.id);
    if (note) hits.push({ path: note.path, title: note.title, snippet: buildSnippet(note.head ?? "", q.positives), score: r.score });
  }
  return hits;
}

/**
 * Keyword snippets for notes by path: what a semantic answer shows for a note that has no passage
 * vectors yet (found by the keyword side while the vault is still being embedded).
 */
export function keywordSnippets(db: Database, paths: string[], query: string): Map<string, string> {
  const out = new Map<string, string>();
  if (!paths.length) return out;
  let terms: QueryTerm[] = [];
  try {
    terms = parseSearchQuery(query)?.positives ?? [];
  } catch {
    /* a question over the query budget (a sentence of Chinese counts a word per pair of characters): the snippet opens the note */
  }
  for (const r of headsOf(db, "path", paths)) out.set(r.path, buildSnippet(r.head ?? "", terms));
  return out;
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

interface InsideScan {
  /** Notes holding the query's words as substrings, those matching in their title or aliases first. */
  found: number[];
  /** Notes holding the words but also an excluded one. */
  excluded: Set<number>;
  /** The scan stopped at its byte budget. */
  partial: boolean;
}

/**
 * For a query holding words the index splits at their marks or does not fold (substring.ts outOfIndexReach):
 * the notes whose title, aliases or body hold every word as a substring (a bounded scan). Runs in a read
 * worker: nothing else waits on its thread between slices, so no turn is given.
 */
function scanInside(db: Database, q: ParsedQuery): InsideScan {
  const needles = (terms: QueryTerm[]) => terms.map((t) => t.tokens.map(foldMatch)).filter((t) => t.length);
  const pos = needles(q.positives);
  const neg = needles(q.negatives);
  const holds = (text: string, t: string[]) => t.every((w) => findText(text, w) !== -1);
  const any = (text: string) => (q.hasOr ? pos.some((t) => holds(text, t)) : pos.every((t) => holds(text, t)));
  if (!pos.length) return { found: [], excluded: new Set(), partial: false }; // no letters left to look for
  const wanted = any;
  const byTitle: number[] = [];
  const byBody: number[] = [];
  const excluded = new Set<number>();
  const slices = scanNotes(db);
  let n = slices.next();
  for (; !n.done; n = slices.next()) {
    for (const r of n.value) {
      const names = foldMatch(`${r.title}\n${r.names}`);
      const inTitle = wanted(names);
      const text = inTitle && !neg.length ? names : `${names}\n${foldBody(r.body)}`;
      if (!inTitle && !wanted(text)) continue;
      if (neg.some((t) => holds(text, t))) excluded.add(r.id);
      else (inTitle ? byTitle : byBody).push(r.id);
    }
  }
  return { found: [...byTitle, ...byBody], excluded, partial: n.value };
}

/**
 * The page of such a query: the notes found only as substrings follow the index's matches, titles first,
 * with score 0 (BM25 scores are below 0), so the scores stay in the order shown; `total` counts both.
 */
function withInsideMatches(db: Database, q: ParsedQuery, inside: InsideScan, ordered: { id: number; score: number }[], ftsTotal: number, limit: number, offset: number): SearchPage {
  const inIndex = new Set(
    (db.query("SELECT rowid AS id FROM fts WHERE fts MATCH ? AND rowid IN (SELECT value FROM json_each(?))").all(q.match, JSON.stringify(inside.found)) as { id: number }[]).map((r) => r.id),
  );
  const only = inside.found.filter((id) => !inIndex.has(id)).map((id) => ({ id, score: 0 }));
  const rows: { id: number; score: number }[] = [];
  for (let p = offset; p < offset + limit; p++) {
    const r = p < ftsTotal ? ordered[p] : only[p - ftsTotal];
    if (!r) break;
    rows.push(r);
  }
  return { items: hitsOf(db, rows, q), total: ftsTotal + only.length, ...(inside.partial ? { partial: true as const } : {}) };
}
