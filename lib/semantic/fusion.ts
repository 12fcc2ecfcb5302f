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
