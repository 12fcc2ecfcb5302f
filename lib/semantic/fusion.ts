// Rank fusion and ranking helpers shared by semantic_search, eval and the bench.

/** One ranked list of ids (best first) and how much its ranks count. */
export interface RankedList {
  ids: number[];
  weight: number;
}

/** The constant of reciprocal-rank fusion; 60 is the value of the original paper (Cormack et al. 2009) and of the peers. */
export const RRF_K = 60;

/**
 * Reciprocal-rank fusion: each list adds weight / (k + rank) to every id it
 * holds (rank from 1). Robust to the lists' scores being on different scales,
 * which cosine similarities and BM25 are.
 */
export function rrf(lists: RankedList[], k = RRF_K): Map<number, number> {
  const out = new Map<number, number>();
  for (const l of lists) {
    l.ids.forEach((id, i) => out.set(id, (out.get(id) ?? 0) + l.weight / (k + i + 1)));
  }
  return out;
}

export interface PassageHit {
  id: number;
  owner: number;
  score: number;
}

export interface NoteHit {
  noteId: number;
  score: number;
  /** The passage that gave the note its score. */
  passageId: number;
}

/** Passage hits to notes, each scored by its best passage, best first. */
export function notesFromPassages(hits: PassageHit[]): NoteHit[] {
  const best = new Map<number, NoteHit>();
  for (const h of hits) {
    const cur = best.get(h.owner);
    if (!cur || h.score > cur.score) best.set(h.owner, { noteId: h.owner, score: h.score, passageId: h.id });
  }
  return [...best.values()].sort((a, b) => b.score - a.score);
}

/**
 * How much prefer_recent keeps of a note's score: 1 - 0.25 * (1 - 2^(-age / halfLife)).
 * Edited today: 100%; one half-life (90 days) ago: 87.5%; long ago: toward 75%.
 * Similarity scores of the top notes are close together, so this is enough to
 * lift a fresh note over a stale one of about the same relevance, while a
 * clearly better old note still wins.
 */
export const RECENCY_HALF_LIFE_DAYS = 90;
export const RECENCY_MAX_PENALTY = 0.25;
export function recencyFactor(mtimeMs: number, now = Date.now(), halfLifeDays = RECENCY_HALF_LIFE_DAYS): number {
  const ageDays = Math.max(0, (now - mtimeMs) / 86_400_000);
  return 1 - RECENCY_MAX_PENALTY * (1 - 2 ** (-ageDays / halfLifeDays));
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

export type Scored = Map<number, { score: number; passageId?: number }>;

/** Fuse keyword and vector lists into one score per note (see FUSION). */
export function fuseRankings(keyword: Scored[], vector: Scored[], providerKind: string): Map<number, number> {
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
