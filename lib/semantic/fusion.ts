// How hybrid retrieval ranks: the fusion of its keyword and vector rankings,
// per embedding model, and the helpers that fusion needs. Measured choices are
// documented in docs/semantic.md ("What we tried"), figures from bench/retrieval.ts.

import { envNumber } from "../env-number";
import type { TermFeedback } from "./feedback";

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

/** Everything that decides a hybrid ranking, per embedding model (MODEL_RANKING). */
export interface RankingParams {
  /** "rrf": reciprocal-rank fusion; "convex": (1 - w) × BM25 / best BM25 + w × cosine / best cosine. */
  fusion: "rrf" | "convex";
  /** The RRF constant. */
  k: number;
  /** The vector list's weight (RRF; the keyword list weighs 1) or share (convex), when the keyword side is sure of itself. */
  vectorWeight: number;
  /**
   * The vector list's weight when none of the best keyword candidates holds the
   * query's words together (keywordConfidence 0); in between, linear. Questions
   * in other words than the page's are where vectors earn their keep.
   */
  vectorWeightWeak: number;
  /** How much a note's second-best passage adds to its vector score (0: best passage only). */
  secondPassage: number;
  /** How much the cosine of the note-level vector (mean of its passages) adds. */
  noteVector: number;
  /** Pseudo-relevance feedback, keyword to vector: the query vector moves this far toward the mean note vector of the top PRF_DEPTH BM25 hits (0: off). */
  prfVector: number;
  /** Pseudo-relevance feedback, vector to keyword: a second BM25 list, of the query plus the titles of the top PRF_DEPTH vector hits, at this weight (0: off). */
  prfKeyword: number;
  /**
   * Pseudo-relevance feedback, keyword to keyword (RM3-style; null: off): the words that the best
   * `docs` keyword hits share beyond the query (idf-weighted, `terms` of them) ask a second BM25
   * list, added to the keyword list's scores at `weight` (./feedback.ts).
   */
  termFeedback: TermFeedback | null;
  /**
   * Agreement gate (null: off). When none of the vector list's best `vectorTop`
   * notes is among the keyword list's best `keywordTop`, the vector list's
   * weight is multiplied by `without`: a vector ranking that agrees with
   * nothing the words found is weak evidence (the built-in model on the SRD
   * wiki's stat blocks), while one that shares even one note with it is about
   * the same thing. No keyword hit at all leaves the vector list alone.
   */
  agreement: { vectorTop: number; keywordTop: number; without: number } | null;
  /**
   * The vector side's own spread (null: off): when the vector list's first
   * note scores less than `below` above its `at`-th, the vector list weighs
   * nothing. A model that sees its best 30 notes as about equally close does
   * not know which is meant (the built-in model on SciFact, where a claim's
   * best abstracts all score 0.96–0.99), and BM25's order is
   * left alone; a paraphrase the model does recognise stands out of its list.
   * The more notes a vault has, the nearer its 30th comes to its first;
   * `perNotes` moves the place to `at` × √(notes / perNotes) past that many notes, and
   * `cone` also calls a list flat when the note at that place scores `cone` or more, and
   * `growBelowConfidence` lets the place grow only below that keyword confidence. All are
   * off in every row: they cost SciFact more than they gained (docs/semantic.md, twelfth pass).
   */
  vectorMargin: { at: number; below: number; perNotes?: number; cone?: number; growBelowConfidence?: number } | null;
  /**
   * What a flat vector list (vectorMargin) still adds (0: nothing, BM25's
   * order is left alone). Ranks exaggerate a flat list's differences, scores
   * do not: the keyword list is re-scored by (min-max BM25 + flatConvex ×
   * min-max vector score) / (1 + flatConvex), so the vectors break near-ties
   * between keyword hits and never overturn a clear BM25 lead (SciFact train
   * nDCG@10 0.703 → 0.711, over BM25's 0.708; docs/semantic.md, fourth pass).
   */
  flatConvex: number;
  /**
   * Notes outside the keyword list's best `depth` get `weight` × the vector
   * list's weight (null: all the same): the vector side mostly re-orders what
   * the words found, and adds new notes more cautiously. `perNotes`: the top grows
   * as vectorMargin's place does (off: a question gained in a 6,744-note vault, one
   * lost on the SRD wiki; docs/semantic.md, twelfth pass).
   */
  outside: { depth: number; weight: number; perNotes?: number } | null;
  /**
   * Places kept for the vector side's best `notes` notes (null: off): when the
   * keyword side is unsure (keywordConfidence below `belowConfidence`), the
   * vector list's i-th best (i from 0) is put at place `position` + i + 1 of
   * the final ranking unless it is already above that place. A paraphrased
   * question's page is often the vector list's first or second and nowhere
   * near the keyword list's; fusion alone then buries it. Not when
   * the vector margin (above) found the vector list flat: its first note is
   * then no better than its 30th (SciFact train: 11 → 8 questions lost from
   * BM25's top 5, nothing else changed).
   */
  vectorSlot: { position: number; belowConfidence: number; notes: number } | null;
  /**
   * A clear keyword lead keeps first place (null: off): when the keyword list's best note scores
   * more than 1 / (1 − `keywordLead`) times its second (BM25 with the fields and anchor text), it
   * is put first in the final ranking. A word that one note alone holds (a program's name in a
   * SciFact claim) makes such a lead, and a weak model's list of notes about the topic in general
   * pushed that note to 4th–10th (seventeenth pass).
   */
  keywordLead: number | null;
  /** How many fused candidates the model-free second stage re-scores (0: none). */
  rerankDepth: number;
  /** The second stage's feature weights (the fused score is scaled to 1 at the top). */
  rerank: { title: number; heading: number; proximity: number };
}

/**
 * The ranking per embedding model, with the reason for each. `match` is tried
 * against the provider's kind and model name, in order; the last row matches
 * everything. Only the built-in model can be measured here (no Ollama on these
 * machines); the others are set from what is published about them and should
 * be checked on a user's own vault with `lettuce eval` (docs/semantic.md).
 */
const SECOND_STAGE = { rerankDepth: 10, rerank: { title: 0.3, heading: 0.1, proximity: 0.1 } };
const NO_EXTRAS = { secondPassage: 0, noteVector: 0, prfVector: 0, prfKeyword: 0, termFeedback: null, agreement: null, vectorMargin: null, flatConvex: 0, outside: null, vectorSlot: null, keywordLead: null };

export const MODEL_RANKING: { name: string; match: (kind: string, model: string) => boolean; params: RankingParams; reason: string }[] = [
  {
    name: "builtin",
    match: (kind) => kind === "builtin",
    params: {
      fusion: "rrf",
      k: 10,
      vectorWeight: 0.25,
      vectorWeightWeak: 2,
      ...NO_EXTRAS,
      noteVector: 0.25,
      // No agreement gate since the keyword side reads anchor text (./anchors.ts): closing a vector list
      // that shares nothing with the keyword top 10 then cost Obsidian Help two paraphrases (tuning half).
      agreement: null,
      vectorMargin: { at: 30, below: 0.12 },
      flatConvex: 0.5,
      outside: { depth: 50, weight: 0.5 },
      vectorSlot: { position: 3, belowConfidence: 0.5, notes: 2 },
      keywordLead: 0.2,
      ...SECOND_STAGE,
    },
    reason:
      "USE-lite ranks far below BM25 on its own (SciFact nDCG@10 0.24 vs 0.69; SRD wiki paraphrases 7 of 20 vs 12) but finds paraphrased questions BM25 misses on Obsidian Help: the vector list counts only where the keyword side is unsure (0.25 while some keyword hit holds the query's words together, 2 when none does), only when its first note stands 0.12 above its 30th (USE-lite sees SciFact's abstracts all about equally close: there its scores only break near-ties between keyword hits, min-max BM25 + 0.5 × min-max vector score; SciFact train nDCG@10 0.666 → 0.711, BM25 0.708), at half weight for notes the words did not find, and its two best notes kept in 4th and 5th place when the keyword side is unsure, while a keyword hit that scores 1.25 times the next keeps first place; the family of settings that most often kept every set and kind at or above BM25 on the tuning halves (docs/semantic.md).",
  },
  {
    name: "nomic-embed-text",
    match: (_k, model) => /nomic-embed-text/i.test(model),
    params: { fusion: "rrf", k: 60, vectorWeight: 1, vectorWeightWeak: 2, ...NO_EXTRAS, ...SECOND_STAGE },
    reason:
      "Retrieval-trained (task prefixes set by the Ollama client) and about as good as BM25 on BEIR on its own: the peers' equal-weight RRF, the vector list counting twice when the query's words scatter (the built-in model's rule; not measured with this model here).",
  },
  {
    name: "mxbai-embed-large",
    match: (_k, model) => /mxbai-embed-large/i.test(model),
    params: { fusion: "rrf", k: 60, vectorWeight: 1.2, vectorWeightWeak: 2.4, ...NO_EXTRAS, ...SECOND_STAGE },
    reason: "Stronger than nomic-embed-text on MTEB retrieval and better than BM25 on its own: the vector list weighs a little more than the keyword list, twice that when the query's words scatter.",
  },
  {
    name: "bge-m3",
    match: (_k, model) => /bge-m3/i.test(model),
    params: { fusion: "rrf", k: 60, vectorWeight: 1.2, vectorWeightWeak: 2.4, ...NO_EXTRAS, ...SECOND_STAGE },
    reason:
      "Multilingual with long inputs (8k tokens); its dense vectors beat BM25 in most languages, where our English stop words and Porter stems do not help the keyword side: the vector list weighs a little more, twice that when the query's words scatter.",
  },
  {
    name: "other",
    match: () => true,
    params: { fusion: "rrf", k: 60, vectorWeight: 1, vectorWeightWeak: 1, ...NO_EXTRAS, ...SECOND_STAGE },
    reason: "An unknown (usually hosted, usually strong) model: the peers' k = 60 with equal weights, the RRF the spec describes, and the model-free second stage.",
  },
];

/**
 * The ranking for a provider. LETTUCE_HYBRID_FUSION (rrf|convex),
 * LETTUCE_RRF_K, LETTUCE_RRF_VECTOR_WEIGHT and LETTUCE_KEYWORD_LEAD override the table's fusion
 * (to compare on one's own vault with `lettuce eval`).
 */
export function rankingFor(kind: string, model = ""): RankingParams {
  const row = MODEL_RANKING.find((r) => r.match(kind, model))!;
  const p = { ...row.params, rerank: { ...row.params.rerank } };
  const method = process.env.LETTUCE_HYBRID_FUSION;
  if (method === "rrf" || method === "convex") p.fusion = method;
  const k = envNumber("LETTUCE_RRF_K", 0, { min: 0.001, max: 1e6 });
  const w = envNumber("LETTUCE_RRF_VECTOR_WEIGHT", 0, { min: 0.001, max: 1000 });
  if (k > 0) p.k = k;
  if (w > 0) p.vectorWeight = p.vectorWeightWeak = w;
  // LETTUCE_KEYWORD_LEAD: 0 turns the rule off.
  const lead = envNumber("LETTUCE_KEYWORD_LEAD", p.keywordLead ?? 0, { min: 0, max: 0.99 });
  p.keywordLead = lead > 0 ? lead : null;
  return p;
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
