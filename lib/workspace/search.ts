// search_workspace: find pages and databases by title and content.
// The full-text index answers first: title (and alias) matches above content
// matches, each word a prefix, all words required, case and accents ignored
// by the index's tokenizer. When it finds nothing, or the query is shorter
// than three letters, or is written in a script without spaces (where the
// index holds whole runs of text as one token), a substring match finds
// fragments inside words: over every title (folded in JS, cached), and over
// note bodies up to a byte budget per call (SUBSTRING_SCAN_BYTES), so that a
// keystroke never reads a whole large vault.
import type { Database } from "bun:sqlite";
import type { VaultContext } from "../vault-context";
import { classifyNotes, databaseTitle } from "./databases";
import { breadcrumbOf, folderOf } from "./items";
import { databaseEntries, titleEntries } from "./title-cache";
import { parseSearchQuery } from "../retrieval/fts-query";
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

export async function searchWorkspace(vault: VaultContext, query: string, limit: number): Promise<WorkspaceSearch> {
  const q = query.trim();
  if (!q) return { results: [] };
  let hits: RawHit[] = [];
  if (letterCount(q) >= 3 && !hasUnspacedRun(q)) hits = indexSearch(vault, q, limit);
  if (hits.length) return { results: shape(vault, hits) };
  const sub = await substringSearch(vault, q, limit);
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
// `words` null: title matches, which show no snippet (no body is read for them).
function ftsRows(db: Database, match: string, limit: number, words: string[] | null): { path: string; title: string; snippet: string }[] {
  let rows: { path: string; title: string; head: string | null }[];
  try {
    rows = db
      .query(
        `SELECT n.path AS path, n.title AS title, substr(fts.body, 1, ?) AS head
         FROM fts JOIN notes n ON n.id = fts.rowid WHERE fts MATCH ? ORDER BY bm25(fts, ${FTS_WEIGHTS}) LIMIT ?`,
      )
      .all(words ? SNIPPET_WINDOW + 1 : 0, match, limit) as { path: string; title: string; head: string | null }[];
  } catch {
    return []; // a query FTS5 cannot parse finds nothing through the index; the fallback may
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

function indexSearch(vault: VaultContext, q: string, limit: number): RawHit[] {
  // The raw words, not fold()ed: the index folds case and accents itself, and leaves Turkish ı alone.
  // Stopwords go when other words remain: as prefixes ("the"* = the, them, there, …) they match nearly
  // every note, which costs a full BM25 pass and narrows nothing.
  const raw = q.match(/[\p{L}\p{N}]+/gu) ?? [];
  const content = raw.filter((w) => !FUNCTION_WORDS.has(fold(w)));
  const words = content.length ? content : raw;
  if (!words.length) return [];
  const all = words.map((w) => `${ftsQuote(w)}*`).join(" AND ");
  const out: RawHit[] = [];
  const seen = new Set<string>();
  // Databases whose name holds every word as a prefix of one of its words.
  const fw = words.map(fold);
  for (const e of databaseEntries(vault)) {
    if (out.length >= limit) break;
    const tw = foldedWords(e.title);
    if (fw.every((w) => tw.some((t) => t.startsWith(w)))) out.push({ path: e.path, title: e.title, kind: "database", matchedOn: "title", snippet: "" });
  }
  for (const r of ftsRows(vault.indexDb, `{title} : (${all})`, limit, null)) {
    if (out.length >= limit) break;
    seen.add(r.path);
    out.push({ path: r.path, title: r.title, kind: "note", matchedOn: "title", snippet: "" });
  }
  if (out.length < limit) {
    for (const r of ftsRows(vault.indexDb, all, limit + seen.size, words)) {
      if (out.length >= limit) break;
      if (seen.has(r.path)) continue;
      out.push({ path: r.path, title: r.title, kind: "note", matchedOn: "content", snippet: r.snippet });
    }
  }
  return out;
}

// ---- the substring fallback ----
// The bounded scan and the fold are lib/retrieval/substring.ts's, shared with `search`.

function snippetAround(body: string, at: number, length: number): string {
  const start = Math.max(0, at - Math.floor((SNIPPET_CHARS - length) / 2));
  const text = body.slice(start, start + SNIPPET_CHARS).replace(/\s+/g, " ").trim();
  return (start > 0 ? "…" : "") + text + (start + SNIPPET_CHARS < body.length ? "…" : "");
}

const nextTurn = () => new Promise<void>((r) => setImmediate(r));

async function substringSearch(vault: VaultContext, q: string, limit: number): Promise<{ hits: RawHit[]; partial: boolean }> {
  const fq = fold(q);
  const hits: RawHit[] = [];
  const seen = new Set<string>();
  // Titles first: every one is checked (they are small and cached folded). A title starting with the query ranks first.
  const titled = titleEntries(vault)
    .filter((e) => e.folded.includes(fq))
    .sort((a, b) => Number(!fold(a.title).startsWith(fq)) - Number(!fold(b.title).startsWith(fq)) || a.title.length - b.title.length);
  for (const e of titled.slice(0, limit)) {
    seen.add(e.path);
    hits.push({ path: e.path, title: e.title, kind: e.kind, matchedOn: "title", snippet: "" });
  }
  if (hits.length >= limit) return { hits, partial: false };
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
