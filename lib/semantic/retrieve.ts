// The one retrieval module: every tool that needs "the notes (and passages)
// that answer this query" — semantic_search, answer's context, prepare_context,
// eval — calls retrieve(). It ranks notes by keyword (BM25 over any of the
// query's words, stemmed, with title/alias/heading fields), by vector (each
// note's best passage), or both fused and then re-scored by a model-free
// second stage (the ranking per embedding model is MODEL_RANKING in
// ./fusion.ts), and returns for each note its best passages with heading and
// ordinal, so that a caller can quote and cite them.
import type { Database } from "bun:sqlite";
import { ToolError } from "../errors";
import { expandQuery } from "./expand";
import { rerankDocs, secondStage, towardKeywordHits } from "./candidates";
import { convexOverKeyword, FUSION_DEPTH, fuseRankings, notesFromPassages, PRF_DEPTH, keepKeywordLead, keepVectorSlot, rankedIds, recencyFactor, vectorWeighting, type NoteHit, type Scored } from "./fusion";
import { rankingFor, type RankingParams } from "./ranking";
import type { TermFeedback } from "./feedback";
import { offloaded } from "../offload/offloaded";
import { keywordConfidence, type RerankDoc } from "./rerank";
import type { EmbeddingProgress, Freshness, SemanticService } from "./service";
import type { VectorIndex } from "./vector-index";
import type { EmbeddingProvider } from "../providers/types";
import { inList, notesByIds, noteVector } from "./store";

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
  /** Replace the ranking chosen for the provider (benchmarks, `lettuce eval` comparisons). */
  ranking?: Partial<RankingParams>;
  /**
   * The caller's own words for what it wants, beside the query (prepare_context's
   * keywords, often in the vault's words where the task is not): their BM25, times
   * CALLER_KEYWORDS_WEIGHT, is added to the query's on the keyword side.
   */
  keywords?: string[];
}

export { CALLER_KEYWORDS_WEIGHT } from "./keyword-scores";

/**
 * The keyword ranking of the query, with the caller's keywords' BM25 added (./keyword-scores.ts), ranked in a
 * read worker: BM25 over thousands of matching notes held the event loop for every other caller.
 */
async function keywordScores(svc: SemanticService, query: string, keywords: string[] | undefined, depth: number, feedback: TermFeedback | null, signal?: AbortSignal): Promise<Map<number, number>> {
  return new Map(await offloaded.keywordScores(svc.vault, { query, keywords, depth, feedback }, signal));
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
  /** Higher is better: cosine (vector), fused and re-scored score (hybrid) or -bm25 (keyword). */
  score: number;
  passages: RetrievedPassage[];
  /** Its place (from 1) in the query's own vector ranking, when it has one (vector and hybrid modes). */
  vectorRank?: number;
}

export interface Retrieval {
  mode: RetrievalMode;
  notes: RetrievedNote[];
  /** How many notes the ranking holds in all (for paging). */
  total: number;
  /** Why an "auto" call fell back to keyword ranking, when it did. */
  fallback?: string;
  /** Set while the first build (or a model change) is embedded: the answer came from what is ready. */
  partial?: EmbeddingProgress;
}

/** Notes nearest to a query vector, by their best passage. */
export function vectorRank(passages: VectorIndex, query: Float32Array, depth: number): NoteHit[] {
  // Several passages of one note can crowd the top: ask for more passages than notes wanted.
  return notesFromPassages(passages.search(query, depth * 4)).slice(0, depth);
}

/** The passage ids of these notes (read while the query embeds: bestPassages needs only the vector on top). */
export function passagesOf(db: Database, noteIds: number[]): { id: number; noteId: number }[] {
  if (!noteIds.length) return [];
  return db.query(`SELECT id, note_id AS noteId FROM passages WHERE ${inList("note_id")}`).all(JSON.stringify(noteIds)) as { id: number; noteId: number }[];
}

/** The best passage of each note for a query, with its cosine and its second-best's (for notes the vector side did not rank). */
export function bestPassages(rows: { id: number; noteId: number }[], passages: VectorIndex, query: Float32Array): Map<number, { passageId: number; score: number; second: number }> {
  const out = new Map<number, { passageId: number; score: number; second: number }>();
  if (!rows.length) return out;
  const scores = passages.scoreIds(
    rows.map((r) => r.id),
    query,
  );
  for (const r of rows) {
    const s = scores.get(r.id);
    if (s === undefined) continue;
    const cur = out.get(r.noteId);
    if (!cur) out.set(r.noteId, { passageId: r.id, score: s, second: -1 });
    else if (s > cur.score) out.set(r.noteId, { passageId: r.id, score: s, second: cur.score });
    else if (s > cur.second) cur.second = s;
  }
  return out;
}

/** How many of the best keyword candidates keywordConfidence looks at. */
const CONFIDENCE_DEPTH = 3;

export async function retrieve(svc: SemanticService, o: RetrieveOptions): Promise<Retrieval> {
  let mode = o.mode ?? "auto";
  let fallback: string | undefined;
  let fresh: Freshness | null = null;
  if (mode !== "keyword") {
    try {
      fresh = await svc.freshness();
    } catch (e) {
      // No embedder: keyword ranking answers an "auto" call now.
      if (mode !== "auto" || !(e instanceof ToolError) || e.kind !== "not-configured") throw e;
      fallback = e.message;
    }
    // While a large backlog is embedded: vectors for the embedded notes, fused with BM25 for the rest.
    mode = !fresh ? "keyword" : mode === "auto" || fresh.building ? "hybrid" : mode;
  }
  const r = mode === "keyword" || !fresh ? await keywordRetrieve(svc, o) : await vectorRetrieve(svc, o, mode, fresh.provider);
  return { ...r, ...(fallback ? { fallback } : {}), ...(fresh?.building ? { partial: fresh.building } : {}) };
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

/** A note's vector score: its best passage, plus its second best and its note vector as the ranking says. */
function vectorScore(best: number, second: number, noteCos: number | undefined, p: RankingParams): number {
  return best + p.secondPassage * Math.max(0, second) + p.noteVector * (noteCos ?? 0);
}

/**
 * Candidates per ranking: by the page's size, never its offset. Drawn deeper for a later page, the lists
 * fused into another order, and paging on skipped and repeated notes (the review of 2026-12-07): every page
 * of one limit is cut from one ranking, and `total` counts that ranking.
 */
const poolDepth = (limit: number) => Math.max(FUSION_DEPTH, limit * 2);

/** Best first; equal scores in note order, so that two pages of one ranking agree on where a tie falls. */
const byScore = (a: [number, number], b: [number, number]) => b[1] - a[1] || a[0] - b[0];

async function vectorRetrieve(svc: SemanticService, o: RetrieveOptions, mode: "hybrid" | "vector", provider: EmbeddingProvider): Promise<Retrieval> {
  const db = svc.vault.indexDb;
  const offset = o.offset ?? 0;
  const p: RankingParams = { ...rankingFor(provider.kind, provider.model), ...o.ranking };
  const { vectorTexts, keywordTexts } = await rankedTexts(svc, o);
  const depth = poolDepth(o.limit);
  // The query's embedding (a worker thread for the built-in model, a request for the others) runs while BM25 ranks.
  const pending = svc.queryVector(provider, o.query, o.signal);
  pending.catch(() => undefined);
  const keyword: Scored[] = [];
  if (mode === "hybrid") {
    await svc.syncKeywords();
    for (const text of keywordTexts) {
      const own = text === o.query;
      keyword.push(new Map([...(await keywordScores(svc, text, own ? o.keywords : undefined, depth, own ? p.termFeedback : null, o.signal))].map(([id, score]) => [id, { score }])));
    }
  }
  // What needs only the keyword side is read while the query embeds: how sure the keyword side is,
  // the passages of its hits (scored once the vector is here) and its best notes' texts for the second stage.
  let confidence = 1;
  const keywordIds = [...new Set(keyword.flatMap((m) => [...m.keys()]))];
  // Every keyword list's hits (an expanded query's paraphrases too, even when the query's own list is empty).
  const keywordPassages = mode === "hybrid" ? passagesOf(db, keywordIds) : [];
  const docs = new Map<number, RerankDoc>();
  if (mode === "hybrid" && keyword[0]?.size) {
    const keywordOrder = rankedIds(keyword[0]);
    for (const [id, d] of rerankDocs(db, keywordOrder.slice(0, Math.max(p.rerankDepth, CONFIDENCE_DEPTH)))) docs.set(id, d);
    if (p.vectorWeightWeak !== p.vectorWeight || p.vectorSlot) {
      confidence = keywordConfidence(
        o.query,
        keywordOrder.slice(0, CONFIDENCE_DEPTH).flatMap((id) => docs.get(id) ?? []),
      );
    }
  }
  let queryVector = await pending;
  const idx = await svc.indexes();
  const vector: Scored[] = [];
  if (idx && mode === "hybrid" && p.prfVector > 0 && keyword[0]?.size) queryVector = towardKeywordHits(db, queryVector, keyword[0], p.prfVector);
  if (idx) {
    for (const text of vectorTexts) {
      const v = text === o.query ? queryVector : await svc.queryVector(provider, text, o.signal);
      const hits = vectorRank(idx.passages, v, depth);
      const noteCos = p.noteVector ? idx.notes.scoreIds(hits.map((h) => h.noteId), v) : null;
      vector.push(new Map(hits.map((h) => [h.noteId, { score: vectorScore(h.score, h.second ?? -1, noteCos?.get(h.noteId), p), passageId: h.passageId }])));
    }
    // Keyword hits the query's vector list missed get their true similarity (and best passage) too.
    if (mode === "hybrid" && vector[0]) {
      const missing = keywordIds.filter((id) => !vector[0]!.has(id));
      const noteCos = p.noteVector ? idx.notes.scoreIds(missing, queryVector) : null;
      const rows = keywordPassages.filter((r) => !vector[0]!.has(r.noteId));
      for (const [id, b] of bestPassages(rows, idx.passages, queryVector)) vector[0].set(id, { score: vectorScore(b.score, b.second, noteCos?.get(id), p), passageId: b.passageId });
    }
  }
  const keywordWeights: number[] = [];
  if (mode === "hybrid" && p.prfKeyword > 0 && vector[0]?.size) {
    // The titles of the best vector hits name what the query is about in the vault's own words.
    const top = rankedIds(vector[0]).slice(0, PRF_DEPTH);
    const titles = [...notesByIds(db, top).values()].map((n) => n.title).join(" ");
    keyword.push(new Map([...(await keywordScores(svc, `${o.query} ${titles}`, undefined, depth, null, o.signal))].map(([id, score]) => [id, { score }])));
    keywordWeights[keyword.length - 1] = p.prfKeyword;
  }
  let scored: [number, number][];
  if (mode === "hybrid") {
    // How much the vector list counts depends on how well the keyword side did (see RankingParams.vectorWeightWeak).
    const vectorWeight = p.vectorWeightWeak + (p.vectorWeight - p.vectorWeightWeak) * confidence;
    // ... and on whether the vector list agrees with the keyword side at all (RankingParams.agreement, .outside).
    const w = vectorWeighting(keyword[0], vector[0], vectorWeight, p, idx?.notes.size ?? 0, confidence);
    // A flat vector list only breaks near-ties between keyword hits (RankingParams.flatConvex); with expansions' lists, it is closed.
    const convex = w.flat && p.flatConvex > 0 && keyword.length === 1 && vector.length === 1;
    const fused = convex ? convexOverKeyword(keyword[0]!, vector[0], p.flatConvex) : fuseRankings(keyword, vector, { ...p, vectorWeight: w.weight }, keywordWeights, w.factor);
    scored = secondStage(db, o.query, [...fused], p, docs);
    scored.sort(byScore);
    // A flat vector list (RankingParams.vectorMargin) has no best notes worth a place.
    if (!w.flat) keepVectorSlot(scored, vector[0], confidence, p);
    keepKeywordLead(scored, keyword[0], p);
  }
  else {
    // Vector mode: the cosine of the best passage (the best over the query and its expansions).
    const best = new Map<number, number>();
    for (const m of vector) for (const [id, v] of m) best.set(id, Math.max(best.get(id) ?? -1, v.score));
    scored = [...best];
  }
  if (o.preferRecent) scored = applyRecency(db, scored);
  scored.sort(byScore);
  const page = scored.slice(offset, offset + o.limit);
  const refs = notesByIds(
    db,
    page.map(([id]) => id),
  );
  const want = o.passagesPerNote ?? 1;
  const vectorRanks = new Map((vector[0] ? rankedIds(vector[0]) : []).map((id, i) => [id, i + 1]));
  const notes: RetrievedNote[] = [];
  for (const [id, score] of page) {
    const n = refs.get(id);
    if (!n) continue; // deleted between ranking and now
    const passages = idx ? notePassagesByVector(db, idx.passages, id, queryVector, want) : [];
    const vectorRank = vectorRanks.get(id);
    notes.push({ noteId: id, path: n.path, title: n.title, score, passages, ...(vectorRank ? { vectorRank } : {}) });
  }
  return { mode, notes, total: scored.length };
}

/**
 * Notes nearest in meaning to one note (related_notes): by the cosine of the
 * note-level vectors, the note itself and the paths in `exclude` left out.
 * Each comes with its passages nearest to the note (as a query's would).
 */
export async function retrieveRelated(svc: SemanticService, noteId: number, o: { limit: number; offset?: number; exclude?: Set<string>; passagesPerNote?: number }): Promise<Retrieval> {
  const { building } = await svc.freshness();
  const partial = building ? { partial: building } : {};
  const db = svc.vault.indexDb;
  const idx = await svc.indexes();
  const v = idx ? noteVector(db, noteId) : null;
  // An empty note has nothing to compare; during a build, the note may not be embedded yet.
  if (!idx || !v) return { mode: "vector", notes: [], total: 0, ...partial };
  const offset = o.offset ?? 0;
  const exclude = o.exclude ?? new Set<string>();
  // Enough neighbours to survive dropping the note itself and the excluded ones, as many for every page (poolDepth).
  const hits = idx.notes
    .search(v, poolDepth(o.limit) + exclude.size + 1)
    .filter((h) => h.owner !== noteId)
    .sort((a, b) => b.score - a.score || a.owner - b.owner);
  const refs = notesByIds(
    db,
    hits.map((h) => h.owner),
  );
  const kept = hits.filter((h) => refs.has(h.owner) && !exclude.has(refs.get(h.owner)!.path));
  const notes = kept.slice(offset, offset + o.limit).map((h) => {
    const n = refs.get(h.owner)!;
    return { noteId: h.owner, path: n.path, title: n.title, score: h.score, passages: notePassagesByVector(db, idx.passages, h.owner, v, o.passagesPerNote ?? 1) };
  });
  return { mode: "vector", notes, total: kept.length, ...partial };
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
  const depth = poolDepth(o.limit);
  // Several query texts (expansion): a note keeps its best score.
  const best = new Map<number, number>();
  for (const text of keywordTexts) for (const [id, score] of await keywordScores(svc, text, text === o.query ? o.keywords : undefined, depth, null, o.signal)) best.set(id, Math.max(best.get(id) ?? -Infinity, score));
  let scored = [...best];
  if (o.preferRecent) scored = applyRecency(db, scored);
  scored.sort(byScore);
  const page = scored.slice(offset, offset + o.limit);
  // Split at query time (the first megabyte of an 8 MB note ~0.1 s), in the read worker too.
  const found = new Map((await offloaded.keywordPassages(svc.vault, page.map(([id]) => id), o.query, o.passagesPerNote ?? 1, o.signal)).map((n) => [n.noteId, n]));
  const notes: RetrievedNote[] = [];
  for (const [id, score] of page) {
    const n = found.get(id);
    if (n) notes.push({ noteId: id, path: n.path, title: n.title, score, passages: n.passages });
  }
  return { mode: "keyword", notes, total: scored.length };
}
