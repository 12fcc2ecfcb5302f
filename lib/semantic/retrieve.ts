// The one retrieval module: every tool that needs "the notes (and passages)
// that answer this query" — semantic_search, answer's context, prepare_context,
// eval — calls retrieve(). It ranks notes by keyword (BM25 over any of the
// query's words, stemmed), by vector (each note's best passage), or both fused
// (see FUSION in ./fusion.ts), and returns for each note its best passages with
// heading and ordinal, so that a caller can quote and cite them.
import type { Database } from "bun:sqlite";
import { ToolError } from "../errors";
import { expandQuery } from "./expand";
import { FUSION, fuseRankings, notesFromPassages, recencyFactor, type NoteHit, type Scored } from "./fusion";
import { keywordRank } from "./keyword";
import { splitPassages } from "./passages";
import type { SemanticService } from "./service";
import type { VectorIndex } from "./vector-index";
import { inList, notesByIds } from "./store";

export type RetrievalMode = "hybrid" | "vector" | "keyword";

export interface RetrieveOptions {
  query: string;
  /** Notes wanted (after offset). */
  limit: number;
  offset?: number;
  /** "auto" (the default): hybrid when embeddings can be used now, keyword otherwise. */
  mode?: "auto" | RetrievalMode;
  preferRecent?: boolean;
  /** LLM query expansion (HyDE + paraphrases); needs a chat provider. */
  expand?: boolean;
  /** How many passages to return per note, best first (default 1). */
  passagesPerNote?: number;
  signal?: AbortSignal;
}

export interface RetrievedPassage {
  /** Ordinal of the passage within its note (0-based, document order). */
  ord: number;
  /** The nearest heading above it ("" before the first heading). */
  heading: string;
  /** Cleaned passage text (Markdown syntax removed). */
  text: string;
  /** Cosine similarity to the query (vector modes) or the share of query words it holds (keyword mode). */
  score: number;
}

export interface RetrievedNote {
  noteId: number;
  path: string;
  title: string;
  /** Higher is better: cosine (vector), fused score (hybrid) or -bm25 (keyword). */
  score: number;
  passages: RetrievedPassage[];
}

export interface Retrieval {
  mode: RetrievalMode;
  notes: RetrievedNote[];
  /** How many notes the ranking holds in all (for paging). */
  total: number;
  /** Why an "auto" call fell back to keyword ranking, when it did. */
  fallback?: string;
}

/** Notes nearest to a query vector, by their best passage. */
export function vectorRank(passages: VectorIndex, query: Float32Array, depth: number): NoteHit[] {
  // Several passages of one note can crowd the top: ask for more passages than notes wanted.
  return notesFromPassages(passages.search(query, depth * 4)).slice(0, depth);
}

/** The best passage of each note for a query, with its cosine (for notes the vector side did not rank). */
export function bestPassages(db: Database, passages: VectorIndex, noteIds: number[], query: Float32Array): Map<number, { passageId: number; score: number }> {
  const out = new Map<number, { passageId: number; score: number }>();
  if (!noteIds.length) return out;
  const rows = db.query(`SELECT id, note_id AS noteId FROM passages WHERE ${inList("note_id")}`).all(JSON.stringify(noteIds)) as { id: number; noteId: number }[];
  const scores = passages.scoreIds(
    rows.map((r) => r.id),
    query,
  );
  for (const r of rows) {
    const s = scores.get(r.id);
    if (s === undefined) continue;
    const cur = out.get(r.noteId);
    if (!cur || s > cur.score) out.set(r.noteId, { passageId: r.id, score: s });
  }
  return out;
}

/** Passage size used when a note is split at query time (keyword mode has no stored passages). */
const KEYWORD_PASSAGE_CHARS = 1000;

export async function retrieve(svc: SemanticService, o: RetrieveOptions): Promise<Retrieval> {
  let mode = o.mode ?? "auto";
  let fallback: string | undefined;
  if (mode === "auto") {
    try {
      await svc.ensureFresh();
      mode = "hybrid";
    } catch (e) {
      // No embedder, or the first build still running: keyword ranking answers now.
      if (!(e instanceof ToolError) || !["not-configured", "index-not-ready"].includes(e.kind)) throw e;
      mode = "keyword";
      fallback = e.message;
    }
  }
  const r = mode === "keyword" ? await keywordRetrieve(svc, o) : await vectorRetrieve(svc, o, mode);
  return fallback ? { ...r, fallback } : r;
}

async function rankedTexts(svc: SemanticService, o: RetrieveOptions): Promise<{ vectorTexts: string[]; keywordTexts: string[] }> {
  const vectorTexts = [o.query];
  const keywordTexts = [o.query];
  if (o.expand) {
    const x = await expandQuery(await svc.chat(), o.query, o.signal);
    vectorTexts.push(...x.paraphrases);
    keywordTexts.push(...x.paraphrases);
    if (x.hypothetical) vectorTexts.push(x.hypothetical);
  }
  return { vectorTexts, keywordTexts };
}

function applyRecency(db: Database, scored: [number, number][]): [number, number][] {
  if (!scored.length) return scored;
  const ids = scored.map(([id]) => id);
  const mtimes = new Map((db.query(`SELECT id, mtime FROM notes WHERE ${inList("id")}`).all(JSON.stringify(ids)) as { id: number; mtime: number }[]).map((r) => [r.id, r.mtime]));
  const now = Date.now();
  // A negative score (keyword mode's -bm25 is positive; cosines can be negative) must not gain from age.
  return scored.map(([id, s]) => [id, s >= 0 ? s * recencyFactor(mtimes.get(id) ?? now, now) : s / recencyFactor(mtimes.get(id) ?? now, now)]);
}

async function vectorRetrieve(svc: SemanticService, o: RetrieveOptions, mode: "hybrid" | "vector"): Promise<Retrieval> {
  const db = svc.vault.indexDb;
  const offset = o.offset ?? 0;
  const provider = await svc.ensureFresh();
  const { vectorTexts, keywordTexts } = await rankedTexts(svc, o);
  const depth = Math.max(FUSION.depth, (offset + o.limit) * 2);
  const idx = svc.indexes();
  const queryVector = await svc.queryVector(provider, o.query, o.signal);
  const vector: Scored[] = [];
  if (idx) {
    for (const text of vectorTexts) {
      const v = text === o.query ? queryVector : await svc.queryVector(provider, text, o.signal);
      vector.push(new Map(vectorRank(idx.passages, v, depth).map((h) => [h.noteId, { score: h.score, passageId: h.passageId }])));
    }
  }
  const keyword: Scored[] = [];
  if (mode === "hybrid") {
    await svc.syncKeywords();
    for (const text of keywordTexts) keyword.push(new Map(keywordRank(db, text, depth).map((h) => [h.noteId, { score: h.score }])));
    // Keyword hits the query's vector list missed get their true similarity (and best passage) too.
    if (idx && vector[0]) {
      const missing = [...new Set(keyword.flatMap((m) => [...m.keys()]))].filter((id) => !vector[0]!.has(id));
      for (const [id, b] of bestPassages(db, idx.passages, missing, queryVector)) vector[0].set(id, b);
    }
  }
  let scored: [number, number][];
  if (mode === "hybrid") scored = [...fuseRankings(keyword, vector, provider.kind)];
  else {
    // Vector mode: the cosine of the best passage (the best over the query and its expansions).
    const best = new Map<number, number>();
    for (const m of vector) for (const [id, v] of m) best.set(id, Math.max(best.get(id) ?? -1, v.score));
    scored = [...best];
  }
  if (o.preferRecent) scored = applyRecency(db, scored);
  scored.sort((a, b) => b[1] - a[1]);
  const page = scored.slice(offset, offset + o.limit);
  const refs = notesByIds(
    db,
    page.map(([id]) => id),
  );
  const want = o.passagesPerNote ?? 1;
  const notes: RetrievedNote[] = [];
  for (const [id, score] of page) {
    const n = refs.get(id);
    if (!n) continue; // deleted between ranking and now
    const passages = idx ? notePassagesByVector(db, idx.passages, id, queryVector, want) : [];
    notes.push({ noteId: id, path: n.path, title: n.title, score, passages });
  }
  return { mode, notes, total: scored.length };
}

/** A note's stored passages, the `want` nearest to the query first. */
function notePassagesByVector(db: Database, index: { scoreIds(ids: number[], q: Float32Array): Map<number, number> }, noteId: number, query: Float32Array, want: number): RetrievedPassage[] {
  const rows = db.query("SELECT id, ord, heading, text FROM passages WHERE note_id = ? ORDER BY ord").all(noteId) as { id: number; ord: number; heading: string; text: string }[];
  const scores = index.scoreIds(
    rows.map((r) => r.id),
    query,
  );
  return rows
    .map((r) => ({ ord: r.ord, heading: r.heading, text: r.text, score: scores.get(r.id) ?? -1 }))
    .sort((a, b) => b.score - a.score || a.ord - b.ord)
    .slice(0, want);
}

async function keywordRetrieve(svc: SemanticService, o: RetrieveOptions): Promise<Retrieval> {
  const db = svc.vault.indexDb;
  const offset = o.offset ?? 0;
  const { keywordTexts } = o.expand ? await rankedTexts(svc, o) : { keywordTexts: [o.query] };
  await svc.syncKeywords();
  const depth = Math.max(FUSION.depth, (offset + o.limit) * 2);
  // Several query texts (expansion): a note keeps its best score.
  const best = new Map<number, number>();
  for (const text of keywordTexts) for (const h of keywordRank(db, text, depth)) best.set(h.noteId, Math.max(best.get(h.noteId) ?? -Infinity, h.score));
  let scored = [...best];
  if (o.preferRecent) scored = applyRecency(db, scored);
  scored.sort((a, b) => b[1] - a[1]);
  const page = scored.slice(offset, offset + o.limit);
  const bodies = noteBodies(
    db,
    page.map(([id]) => id),
  );
  const words = queryWords(o.query);
  const want = o.passagesPerNote ?? 1;
  const notes: RetrievedNote[] = [];
  for (const [id, score] of page) {
    const n = bodies.get(id);
    if (!n) continue;
    const passages = splitPassages(n.body, KEYWORD_PASSAGE_CHARS)
      .map((p) => ({ ord: p.ord, heading: p.heading, text: p.text, score: wordShare(p.text, words) }))
      .sort((a, b) => b.score - a.score || a.ord - b.ord)
      .slice(0, want);
    notes.push({ noteId: id, path: n.path, title: n.title, score, passages });
  }
  return { mode: "keyword", notes, total: scored.length };
}

function noteBodies(db: Database, ids: number[]): Map<number, { path: string; title: string; body: string }> {
  if (!ids.length) return new Map();
  const rows = db
    .query(`SELECT n.id AS id, n.path AS path, n.title AS title, f.body AS body FROM notes n JOIN fts f ON f.rowid = n.id WHERE ${inList("n.id")}`)
    .all(JSON.stringify(ids)) as { id: number; path: string; title: string; body: string }[];
  return new Map(rows.map((r) => [r.id, r]));
}

const fold = (s: string) => s.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();

function queryWords(query: string): string[] {
  return [...new Set((fold(query).match(/[\p{L}\p{N}]{3,}/gu) ?? []))];
}

/** The share of the query's words (as prefixes of the passage's words) that a passage holds. */
function wordShare(text: string, words: string[]): number {
  if (!words.length) return 0;
  const have = new Set(fold(text).match(/[\p{L}\p{N}]+/gu) ?? []);
  let hits = 0;
  for (const w of words) {
    const stem = w.length > 5 ? w.slice(0, w.length - 2) : w;
    for (const h of have) {
      if (h.startsWith(stem)) {
        hits++;
        break;
      }
    }
  }
  return hits / words.length;
}
