// search_workspace: find pages and databases by title and content.
// The full-text index answers first: title (and alias) matches above content
// matches, each word a prefix, all words required, case and accents ignored
// by the index's tokenizer. A word of a script without spaces (Chinese,
// Japanese, Thai) is found inside a longer run through the index's n-gram
// columns, in every note, as `search` finds it. When the index finds nothing,
// or the query is shorter than three letters (and holds no such text), or its
// pairs of characters are past search's budget, a substring match finds
// fragments inside words: over every title (folded in JS, cached), and over
// note bodies up to a byte budget per call (SUBSTRING_SCAN_BYTES), so that a
// keystroke never reads a whole large vault.
import type { Database } from "bun:sqlite";
import type { VaultContext } from "../vault-context";
import { classifyNotes, databaseTitle } from "./databases";
import { breadcrumbOf, folderOf } from "./items";
import { databaseEntries, titleMatches, type TitleMatch } from "./title-cache";
import { MAX_QUERY_TERMS, ngramPhrase, parseSearchQuery, tokensOf } from "../retrieval/fts-query";
import { FTS_WEIGHTS } from "../store/fts-db";
import { buildSnippet, SNIPPET_WINDOW } from "../retrieval/snippet";
import { findText } from "../text-find";
import { foldBody, scanNotes, SUBSTRING_SCAN_BYTES, unfoldedOffset } from "../retrieval/substring";
import { fold, foldedWords, ftsQuote, letterCount, FUNCTION_WORDS } from "./text";
import { hasUnspacedRun } from "../vault/ngram";

export interface WorkspaceHit {
  id: string;
  type: "page" | "database" | "database_row";
  title: string;
  breadcrumb: string[];
  matchedOn: "title" | "content";
  snippet: string;
  databaseId?: string;
  parentId?: string;
}

export interface WorkspaceSearch {
  results: WorkspaceHit[];
  /** "substring" when the fallback answered. */
  fallback?: "substring";
  /** The substring scan stopped at its byte budget before reading every note. */
  partial?: true;
}

export { SUBSTRING_SCAN_BYTES };
const SNIPPET_CHARS = 120;

interface RawHit {
  path: string;
  title: string;
  kind: "note" | "database";
  matchedOn: "title" | "content";
  snippet: string;
}

/** How the substring fallback finds titles: the tool hands in one that runs in a read worker (lib/workspace/title-cache.ts). */
export type TitleMatcher = (query: string, limit: number) => TitleMatch[] | Promise<TitleMatch[]>;

export async function searchWorkspace(
  vault: VaultContext,
  query: string,
  limit: number,
  matchTitles: TitleMatcher = (q, n) => titleMatches(vault.indexDb, q, n),
): Promise<WorkspaceSearch> {
  const q = query.trim();
  if (!q) return { results: [] };
  const found = letterCount(q) >= 3 || hasUnspacedRun(q) ? indexSearch(vault, q, limit) : null;
  if (found?.hits.length) return { results: shape(vault, found.hits) };
  // A query of such text alone that the n-grams did not find is in no note's text (the scan reads no more of a
  // note than they hold): only the titles are looked at again, for file names, which the index does not hold.
  const sub = await substringSearch(vault, q, limit, !found?.onlyRuns, matchTitles);
  return { results: shape(vault, sub.hits), fallback: "substring", ...(sub.partial ? { partial: true as const } : {}) };
}

function shape(vault: VaultContext, hits: RawHit[]): WorkspaceHit[] {
  const classes = classifyNotes(
    vault,
    hits.filter((h) => h.kind === "note").map((h) => h.path),
  );
  return hits.map((h) => {
    const parent = folderOf(h.path);
    const cls = h.kind === "note" ? classes.get(h.path)! : null;
    return {
      id: h.path,
      type: cls ? cls.type : "database",
      title: h.title,
      // A database row's breadcrumb ends with its database's name, as the spec says.
      breadcrumb: cls?.databaseId ? [...breadcrumbOf(h.path), databaseTitle(cls.databaseId)] : breadcrumbOf(h.path),
      matchedOn: h.matchedOn,
      snippet: h.matchedOn === "title" ? "" : h.snippet,
      ...(cls?.databaseId ? { databaseId: cls.databaseId } : {}),
      ...(parent ? { parentId: parent } : {}),
    };
  });
}

// ---- the index ----

// The snippet is built from the opening of the note (lib/retrieval/snippet.ts), as search's is:
// FTS5's snippet() scans the whole note, and on large ones (and a 500 KB "word", which it kept
// whole) one call took 16 s and answered a megabyte.
// `words` null: title matches, which show no snippet (no body is read for them). null when FTS5 refused the query.
function ftsRows(db: Database, match: string, limit: number, words: string[] | null): { path: string; title: string; snippet: string }[] | null {
  let rows: { path: string; title: string; head: string | null }[];
  try {
    rows = db
      .query(
        `SELECT n.path AS path, n.title AS title, substr(fts.body, 1, ?) AS head
         FROM fts JOIN notes n ON n.id = fts.rowid WHERE fts MATCH ? ORDER BY bm25(fts, ${FTS_WEIGHTS}) LIMIT ?`,
      )
      .all(words ? SNIPPET_WINDOW + 1 : 0, match, limit) as { path: string; title: string; head: string | null }[];
  } catch {
    return null; // a query FTS5 cannot parse finds nothing through the index; the fallback may
  }
  if (!words) return rows.map((r) => ({ path: r.path, title: r.title, snippet: "" }));
  let terms: NonNullable<ReturnType<typeof parseSearchQuery>>["positives"] = [];
  try {
    terms = parseSearchQuery(words.join(" "))?.positives ?? [];
  } catch {
    /* more words than a search takes: the snippet opens the note instead */
  }
  return rows.map((r) => ({ path: r.path, title: r.title, snippet: buildSnippet(r.head ?? "", terms) }));
}

/** A query word as the index matches it: in titles alone, and anywhere (title or body). */
interface IndexWord {
  /** The word as typed, for the snippet's terms. */
  raw: string;
  title: string;
  any: string;
  /** Text of a script written without spaces, matched on the n-gram columns (found inside a run, not as a prefix). */
  run: boolean;
  cost: number;
}

/**
 * The query's words. A word holding Chinese, Japanese or Thai text (hasUnspacedRun) is the phrase of its pairs of
 * characters on title_ng and body_ng (fts-query.ts ngramPhrase, as `search` matches it), which finds it inside
 * a longer run; it keeps its marks (Thai vowel signs, which the n-grams fold away, would split it). Any other
 * word, split at marks as before, is a prefix on title and body, as the index folds it.
 */
function indexWords(q: string): IndexWord[] {
  const out: IndexWord[] = [];
  for (const chunk of q.match(/[\p{L}\p{N}\p{M}]+/gu) ?? []) {
    const ng = hasUnspacedRun(chunk) ? ngramPhrase(tokensOf(chunk), true) : null;
    if (ng) {
      out.push({ raw: chunk, title: `{title_ng} : ${ng.phrases}`, any: `{title_ng body_ng} : ${ng.phrases}`, run: true, cost: ng.cost });
      continue;
    }
    // The raw words, not fold()ed: the index folds case and accents itself, and leaves Turkish ı alone.
    for (const w of chunk.match(/[\p{L}\p{N}]+/gu) ?? []) out.push({ raw: w, title: `{title} : ${ftsQuote(w)}*`, any: `${ftsQuote(w)}*`, run: false, cost: 1 });
  }
  return out;
}

/**
 * The index's hits, and whether the query is text of scripts without spaces alone (every letter in a run),
 * which the n-gram columns find in every note that holds it, so that a substring scan of bodies finds no more.
 */
function indexSearch(vault: VaultContext, q: string, limit: number): { hits: RawHit[]; onlyRuns: boolean } {
  // Stopwords go when other words remain: as prefixes ("the"* = the, them, there, …) they match nearly
  // every note, which costs a full BM25 pass and narrows nothing.
  const raw = indexWords(q);
  const content = raw.filter((w) => w.run || !FUNCTION_WORDS.has(fold(w.raw)));
  const words = content.length ? content : raw;
  if (!words.length) return { hits: [], onlyRuns: false };
  // `search`'s budget for one FTS5 statement, which cannot be interrupted: a long run of Chinese is a phrase of
  // as many pairs. Past it the substring scan answers, as it did every such query before the n-grams.
  if (words.some((w) => w.run) && words.reduce((n, w) => n + w.cost, 0) > MAX_QUERY_TERMS) return { hits: [], onlyRuns: false };
  const out: RawHit[] = [];
  const seen = new Set<string>();
  // Databases whose name holds every word as a prefix of one of its words (a word of those scripts anywhere in it).
  const fw = words.map((w) => fold(w.raw));
  for (const e of databaseEntries(vault)) {
    if (out.length >= limit) break;
    const tw = foldedWords(e.title);
    const ft = fold(e.title);
    if (words.every((w, i) => (w.run ? ft.includes(fw[i]!) : tw.some((t) => t.startsWith(fw[i]!))))) {
      out.push({ path: e.path, title: e.title, kind: "database", matchedOn: "title", snippet: "" });
    }
  }
  const titled = ftsRows(vault.indexDb, words.map((w) => w.title).join(" AND "), limit, null);
  for (const r of titled ?? []) {
    if (out.length >= limit) break;
    seen.add(r.path);
    out.push({ path: r.path, title: r.title, kind: "note", matchedOn: "title", snippet: "" });
  }
  let bodied: ReturnType<typeof ftsRows> = [];
  if (out.length < limit) {
    bodied = ftsRows(vault.indexDb, words.map((w) => w.any).join(" AND "), limit + seen.size, words.map((w) => w.raw));
    for (const r of bodied ?? []) {
      if (out.length >= limit) break;
      if (seen.has(r.path)) continue;
      out.push({ path: r.path, title: r.title, kind: "note", matchedOn: "content", snippet: r.snippet });
    }
  }
  const answered = titled !== null && bodied !== null;
  return { hits: out, onlyRuns: answered && raw.every((w) => w.run) && (q.match(/[\p{L}\p{N}]/gu) ?? []).every(hasUnspacedRun) };
}

// ---- the substring fallback ----
// The bounded scan and the fold are lib/retrieval/substring.ts's, shared with `search`.

function snippetAround(body: string, at: number, length: number): string {
  const start = Math.max(0, at - Math.floor((SNIPPET_CHARS - length) / 2));
  const text = body.slice(start, start + SNIPPET_CHARS).replace(/\s+/g, " ").trim();
  return (start > 0 ? "…" : "") + text + (start + SNIPPET_CHARS < body.length ? "…" : "");
}

const nextTurn = () => new Promise<void>((r) => setImmediate(r));

async function substringSearch(vault: VaultContext, q: string, limit: number, bodies: boolean, matchTitles: TitleMatcher): Promise<{ hits: RawHit[]; partial: boolean }> {
  const fq = fold(q);
  const hits: RawHit[] = [];
  const seen = new Set<string>();
  // Titles first: every one is checked (they are small and cached folded). A title starting with the query ranks first.
  for (const e of await matchTitles(q, limit)) {
    seen.add(e.path);
    hits.push({ path: e.path, title: e.title, kind: e.kind, matchedOn: "title", snippet: "" });
  }
  if (hits.length >= limit || !bodies) return { hits, partial: false };
  // Then bodies, in index order, a bounded number of bytes, with a turn for other requests between slices.
  const slices = scanNotes(vault.indexDb);
  for (let n = slices.next(), first = true; ; n = slices.next(), first = false) {
    if (n.done) return { hits, partial: n.value };
    if (!first) await nextTurn();
    for (const r of n.value) {
      if (seen.has(r.path)) continue;
      const at = findText(foldBody(r.body), fq);
      if (at === -1) continue;
      seen.add(r.path);
      const start = unfoldedOffset(r.body, at);
      hits.push({ path: r.path, title: r.title, kind: "note", matchedOn: "content", snippet: snippetAround(r.body, start, q.length) });
      if (hits.length >= limit) return { hits, partial: false };
    }
  }
}
