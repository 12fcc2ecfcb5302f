// semantic_search: vector ranking of notes by their best passage, optionally
// fused with BM25 (any-term, stemmed; see FUSION for how), optionally
// pulled toward recent notes, optionally widened by LLM query expansion.
import type { Database } from "bun:sqlite";
import { expandQuery } from "./expand";
import { notesFromPassages, recencyFactor, rrf, type NoteHit } from "./fusion";
import { keywordRank } from "./keyword";
import type { SemanticService } from "./service";
import { inList, notesByIds, passagesByIds } from "./store";
import type { VectorIndex } from "./vector-index";

export interface SemanticQuery {
  query: string;
  hybrid?: boolean;
  preferRecent?: boolean;
  expand?: boolean;
  limit: number;
  offset?: number;
  signal?: AbortSignal;
}

export interface SemanticHit {
  path: string;
  title: string;
  snippet: string;
  score: number;
}

/**
 * How hybrid mode fuses its two rankings: reciprocal-rank fusion, as the
 * spec says, sum over lists of weight / (k + rank). bench/retrieval.ts
 * (--tune) measured the choices on BEIR SciFact and the Anthropic docs QA set:
 * - With the built-in model, whose ranking is far weaker than BM25's, the
 *   peers' k = 60 with equal weights falls well below BM25 (SciFact nDCG@10
 *   0.495 vs 0.695). A small k and a vector weight of 0.25 is the setting
 *   that beats BM25 on both sets (0.697; docs recall@3 0.653 vs 0.643).
 * - For Ollama and OpenAI-compatible models (stronger vectors, not measured
 *   here) the peers' k = 60 with equal weights.
 * - "convex": (1 - w) * bm25 / best bm25 + w * cosine / best cosine over the
 *   union of both top-`depth` lists, w = 0.5. Better than RRF with the
 *   built-in model on the docs set (recall@3 0.689, MRR 0.837); opt in with
 *   LETTUCE_HYBRID_FUSION=convex.
 * LETTUCE_RRF_K and LETTUCE_RRF_VECTOR_WEIGHT override the RRF parameters.
 */
export const FUSION = {
  method: "rrf" as "convex" | "rrf",
  vectorWeight: 0.5,
  rrf: { builtin: { k: 2, vectorWeight: 0.25 }, other: { k: 60, vectorWeight: 1 } },
  depth: 100,
};
function fusionMethod(): "convex" | "rrf" {
  const env = process.env.LETTUCE_HYBRID_FUSION;
  return env === "convex" || env === "rrf" ? env : FUSION.method;
}
export function rrfParams(providerKind: string): { k: number; vectorWeight: number } {
  const base = providerKind === "builtin" ? FUSION.rrf.builtin : FUSION.rrf.other;
  const k = Number(process.env.LETTUCE_RRF_K);
  const w = Number(process.env.LETTUCE_RRF_VECTOR_WEIGHT);
  return { k: k > 0 ? k : base.k, vectorWeight: w > 0 ? w : base.vectorWeight };
}

const SNIPPET_CHARS = 320;

export function snippetOf(text: string): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length <= SNIPPET_CHARS ? t : `${t.slice(0, SNIPPET_CHARS).replace(/\s+\S*$/, "")}…`;
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

/** Each note's snippet: from the passage `chosen` names for it, else from its passage nearest to `query`. */
export function snippetsFor(
  db: Database,
  passages: VectorIndex | null,
  noteIds: number[],
  query: Float32Array,
  chosen: (noteId: number) => number | undefined = () => undefined,
): Map<number, string> {
  const passageFor = new Map<number, number>();
  for (const id of noteIds) {
    const p = chosen(id);
    if (p !== undefined) passageFor.set(id, p);
  }
  if (passages) {
    const missing = noteIds.filter((id) => !passageFor.has(id));
    for (const [noteId, b] of bestPassages(db, passages, missing, query)) passageFor.set(noteId, b.passageId);
  }
  const texts = passagesByIds(db, [...passageFor.values()]);
  const out = new Map<number, string>();
  for (const [noteId, passageId] of passageFor) {
    const p = texts.get(passageId);
    if (p) out.set(noteId, snippetOf(p.text));
  }
  return out;
}

type Scored = Map<number, { score: number; passageId?: number }>;

/** Fuse keyword and vector lists into one score per note (see FUSION). */
function fuse(keyword: Scored[], vector: Scored[], providerKind: string): Map<number, number> {
  if (fusionMethod() === "rrf") {
    const { k, vectorWeight } = rrfParams(providerKind);
    const ranked = (m: Scored) => [...m].sort((a, b) => b[1].score - a[1].score).map(([id]) => id);
    return rrf([...keyword.map((m) => ({ ids: ranked(m), weight: 1 })), ...vector.map((m) => ({ ids: ranked(m), weight: vectorWeight }))], k);
  }
  const norm = (lists: Scored[]) => {
    const out = new Map<number, number>();
    for (const m of lists) {
      let max = 0;
      for (const v of m.values()) max = Math.max(max, v.score);
      if (max <= 0) continue;
      for (const [id, v] of m) out.set(id, Math.max(out.get(id) ?? 0, v.score / max));
    }
    return out;
  };
  const k = norm(keyword);
  const v = norm(vector);
  const w = FUSION.vectorWeight;
  const out = new Map<number, number>();
  for (const id of new Set([...k.keys(), ...v.keys()])) out.set(id, (1 - w) * (k.get(id) ?? 0) + w * Math.max(0, v.get(id) ?? 0));
  return out;
}

export async function semanticSearch(svc: SemanticService, q: SemanticQuery): Promise<{ items: SemanticHit[]; total: number }> {
  const db = svc.vault.indexDb;
  const offset = q.offset ?? 0;
  const provider = await svc.ensureFresh();
  const vectorTexts = [q.query];
  const keywordTexts = [q.query];
  if (q.expand) {
    const x = await expandQuery(await svc.chat(), q.query, q.signal);
    vectorTexts.push(...x.paraphrases);
    keywordTexts.push(...x.paraphrases);
    if (x.hypothetical) vectorTexts.push(x.hypothetical);
  }
  const depth = Math.max(FUSION.depth, (offset + q.limit) * 2);
  const idx = svc.indexes();
  const queryVector = await svc.queryVector(provider, q.query, q.signal);
  const vector: Scored[] = [];
  if (idx) {
    for (const text of vectorTexts) {
      const v = text === q.query ? queryVector : await svc.queryVector(provider, text, q.signal);
      vector.push(new Map(vectorRank(idx.passages, v, depth).map((h) => [h.noteId, { score: h.score, passageId: h.passageId }])));
    }
  }
  const keyword: Scored[] = [];
  if (q.hybrid) {
    await svc.syncKeywords();
    for (const text of keywordTexts) keyword.push(new Map(keywordRank(db, text, depth).map((h) => [h.noteId, { score: h.score }])));
    // Keyword hits the query's vector list missed get their true similarity (and best passage) too.
    if (idx && vector[0]) {
      const missing = [...new Set(keyword.flatMap((m) => [...m.keys()]))].filter((id) => !vector[0]!.has(id));
      for (const [id, b] of bestPassages(db, idx.passages, missing, queryVector)) vector[0].set(id, b);
    }
  }
  let scored: [number, number][];
  if (q.hybrid) scored = [...fuse(keyword, vector, provider.kind)];
  else {
    // Vector mode: the cosine of the best passage (the best over the query and its expansions).
    const best = new Map<number, number>();
    for (const m of vector) for (const [id, v] of m) best.set(id, Math.max(best.get(id) ?? -1, v.score));
    scored = [...best];
  }
  if (q.preferRecent && scored.length) {
    const ids = scored.map(([id]) => id);
    const mtimes = new Map((db.query(`SELECT id, mtime FROM notes WHERE ${inList("id")}`).all(JSON.stringify(ids)) as { id: number; mtime: number }[]).map((r) => [r.id, r.mtime]));
    const now = Date.now();
    scored = scored.map(([id, s]) => [id, s * recencyFactor(mtimes.get(id) ?? now, now)]);
  }
  scored.sort((a, b) => b[1] - a[1]);
  const pageIds = scored.slice(offset, offset + q.limit);
  if (!pageIds.length) return { items: [], total: scored.length };
  const ids = pageIds.map(([id]) => id);
  const notes = notesByIds(db, ids);
  // The snippet: the passage that matched the query itself best.
  const snippets = snippetsFor(db, idx?.passages ?? null, ids, queryVector, (id) => vector[0]?.get(id)?.passageId);
  const items: SemanticHit[] = [];
  for (const [id, score] of pageIds) {
    const n = notes.get(id);
    if (!n) continue; // deleted between ranking and now
    items.push({ path: n.path, title: n.title, snippet: snippets.get(id) ?? "", score: Math.round(score * 1e6) / 1e6 });
  }
  return { items, total: scored.length };
}
