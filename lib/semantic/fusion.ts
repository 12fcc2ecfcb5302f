// How hybrid retrieval fuses its keyword and vector rankings: reciprocal-rank and
// convex fusion, the vector list's weighting, and the places kept for either side's
// best notes. What each embedding model sets them to is in ./ranking.ts. Measured
// choices are documented in docs/retrieval-experiments.md ("What we tried"), figures from bench/retrieval.ts.

import type { RankingParams } from "./ranking";

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
  /** The note's second-best passage's score (-1 when it has one passage among the hits). */
  second?: number;
}

/** Passage hits to notes, each scored by its best passage (and knowing its second best), best first. */
export function notesFromPassages(hits: PassageHit[]): NoteHit[] {
  const best = new Map<number, NoteHit>();
  for (const h of hits) {
    const cur = best.get(h.owner);
    if (!cur) best.set(h.owner, { noteId: h.owner, score: h.score, passageId: h.id, second: -1 });
    else if (h.score > cur.score) best.set(h.owner, { noteId: h.owner, score: h.score, passageId: h.id, second: cur.score });
    else if (h.score > (cur.second ?? -1)) cur.second = h.score;
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

/** Top hits that pseudo-relevance feedback reads. */
export const PRF_DEPTH = 3;

/** Candidates per ranking before fusion. */
export const FUSION_DEPTH = 100;

export type Scored = Map<number, { score: number; passageId?: number }>;

/** A ranking's note ids, best first. */
export const rankedIds = (m: Scored) => [...m].sort((a, b) => b[1].score - a[1].score).map(([id]) => id);

/**
 * The vector list's weight for one query: `weight` (already adapted to the
 * keyword side's confidence) times the agreement gate, and the factor each
 * note's vector share is multiplied by (RankingParams.agreement, .outside).
 */
export function vectorWeighting(
  keyword: Scored | undefined,
  vector: Scored | undefined,
  weight: number,
  p: Pick<RankingParams, "agreement" | "outside"> & Partial<Pick<RankingParams, "vectorMargin">>,
  vaultNotes = 0,
  confidence = 1,
): { weight: number; factor: (id: number) => number; flat: boolean } {
  const kw = keyword?.size ? rankedIds(keyword) : [];
  if (!kw.length || !vector?.size) return { weight, factor: () => 1, flat: false };
  let w = weight;
  if (p.agreement) {
    const best = new Set(kw.slice(0, p.agreement.keywordTop));
    if (!rankedIds(vector).slice(0, p.agreement.vectorTop).some((id) => best.has(id))) w *= p.agreement.without;
  }
  const margin = p.vectorMargin;
  let flat = false;
  const grows = margin?.growBelowConfidence === undefined || confidence < margin.growBelowConfidence;
  const at = margin ? (grows ? marginPlace(margin, vaultNotes) : margin.at) : 0;
  if (margin && vector.size >= at) {
    const scores = [...vector.values()].map((v) => v.score).sort((a, b) => b - a);
    flat = scores[0]! - scores[at - 1]! < margin.below || (margin.cone !== undefined && scores[at - 1]! >= margin.cone);
    if (flat) w = 0;
  }
  const outside = p.outside;
  if (!outside) return { weight: w, factor: () => 1, flat };
  const inside = new Set(kw.slice(0, grownWith(outside.depth, outside.perNotes, vaultNotes)));
  return { weight: w, factor: (id) => (inside.has(id) ? 1 : outside.weight), flat };
}

/** The place the vector margin compares the first note with, in a vault of `notes` notes (RankingParams.vectorMargin). */
export function marginPlace(margin: NonNullable<RankingParams["vectorMargin"]>, notes: number): number {
  return grownWith(margin.at, margin.perNotes, notes);
}

/** `n`, or n × √(notes / perNotes) in a vault of more than `perNotes` notes. */
function grownWith(n: number, perNotes: number | undefined, notes: number): number {
  return !perNotes || notes <= perNotes ? n : Math.round(n * Math.sqrt(notes / perNotes));
}

/** Move the vector list's best notes to places `position` + 1, + 2, … of a final ranking (best first) when RankingParams.vectorSlot says so; in place. */
export function keepVectorSlot(scored: [number, number][], vector: Scored | undefined, keywordConfidence: number, p: Pick<RankingParams, "vectorSlot">): void {
  const slot = p.vectorSlot;
  if (!slot || !vector || keywordConfidence >= slot.belowConfidence) return;
  rankedIds(vector).slice(0, slot.notes).forEach((id, i) => {
    const place = slot.position + i;
    if (scored.length <= place) return;
    const at = scored.findIndex(([n]) => n === id);
    if (at >= 0 && at <= place) return;
    const before = scored[place - 1]![1];
    const after = scored[place]![1];
    // A score between its new neighbours', so that a later re-sort keeps the place.
    const entry: [number, number] = [id, before > after ? (before + after) / 2 : after];
    if (at >= 0) scored.splice(at, 1);
    scored.splice(place, 0, entry);
  });
}

/** Put the keyword list's best note first in a final ranking (best first) when its lead says so (RankingParams.keywordLead); in place. */
export function keepKeywordLead(scored: [number, number][], keyword: Scored | undefined, p: Pick<RankingParams, "keywordLead">): void {
  if (p.keywordLead === null || !keyword || keyword.size < 2 || !scored.length) return;
  // The best two in one pass: every hybrid query comes here, and only they matter.
  let id = 0;
  let first = -Infinity;
  let second = -Infinity;
  for (const [n, { score }] of keyword) {
    if (score > first) [id, first, second] = [n, score, first];
    else if (score > second) second = score;
  }
  if (!(first > 0) || second >= first * (1 - p.keywordLead)) return;
  const at = scored.findIndex(([n]) => n === id);
  if (at === 0) return;
  if (at > 0) scored.splice(at, 1);
  // Above the first's score, so that a later re-sort keeps it there.
  scored.unshift([id, scored[0]![1] + Math.abs(scored[0]![1]) * 1e-6 + 1e-12]);
}

/**
 * The keyword list re-scored by its BM25 and the vector score, both min-max
 * scaled over the list: (bm25' + share × vector') / (1 + share), every
 * keyword hit above 0. Notes only the vector list holds follow below all of
 * them, in its order (as a closed vector list places them). RankingParams.flatConvex.
 */
export function convexOverKeyword(keyword: Scored, vector: Scored | undefined, share: number): Map<number, number> {
  const kw = [...keyword].sort((a, b) => b[1].score - a[1].score);
  // A loop, not Math.max(...xs): the keyword list grows with the page asked for (offset + limit).
  const scale = (xs: number[]) => {
    let hi = -Infinity;
    let lo = Infinity;
    for (const x of xs) {
      hi = Math.max(hi, x);
      lo = Math.min(lo, x);
    }
    return xs.map((x) => (hi > lo ? (x - lo) / (hi - lo) : 1));
  };
  const k = scale(kw.map(([, v]) => v.score));
  const v = scale(kw.map(([id]) => vector?.get(id)?.score ?? -1));
  const out = new Map<number, number>(kw.map(([id], i) => [id, (k[i]! + share * v[i]!) / (1 + share) + 1e-9]));
  if (vector) rankedIds(vector).forEach((id, r) => out.has(id) || out.set(id, 1e-12 / (r + 1)));
  return out;
}

/**
 * Fuse keyword and vector lists into one score per note; `keywordWeights[i]`
 * weighs keyword list i (default 1), `vectorFactor` scales each note's share
 * of the vector lists (RRF only; default 1).
 */
export function fuseRankings(
  keyword: Scored[],
  vector: Scored[],
  p: Pick<RankingParams, "fusion" | "k" | "vectorWeight">,
  keywordWeights: number[] = [],
  vectorFactor: (id: number) => number = () => 1,
): Map<number, number> {
  const kw = (i: number) => keywordWeights[i] ?? 1;
  if (p.fusion === "rrf") {
    const out = rrf(keyword.map((m, i) => ({ ids: rankedIds(m), weight: kw(i) })), p.k);
    // A gated-off vector list (weight 0) still places the notes only it found below all the others, in its order.
    const vw = p.vectorWeight > 0 ? p.vectorWeight : 1e-9;
    for (const m of vector) rankedIds(m).forEach((id, i) => out.set(id, (out.get(id) ?? 0) + (vw * vectorFactor(id)) / (p.k + i + 1)));
    return out;
  }
  const norm = (lists: Scored[], weight: (i: number) => number = () => 1) => {
    const out = new Map<number, number>();
    lists.forEach((m, i) => {
      let max = 0;
      for (const v of m.values()) max = Math.max(max, v.score);
      if (max <= 0) return;
      for (const [id, v] of m) out.set(id, Math.max(out.get(id) ?? 0, (weight(i) * v.score) / max));
    });
    return out;
  };
  const k = norm(keyword, kw);
  const v = norm(vector);
  const w = Math.min(1, p.vectorWeight);
  const out = new Map<number, number>();
  for (const id of new Set([...k.keys(), ...v.keys()])) out.set(id, (1 - w) * (k.get(id) ?? 0) + w * Math.max(0, v.get(id) ?? 0));
  return out;
}
