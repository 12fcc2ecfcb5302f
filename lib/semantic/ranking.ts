// What decides a hybrid ranking for each embedding model: the parameters, the
// table of their values per model with the reason for each, and the environment
// overrides. The mechanics that apply them are in ./fusion.ts. Measured choices
// are documented in docs/retrieval-experiments.md ("What we tried"), figures from bench/retrieval.ts.

import { envNumber } from "../env-number";
import type { TermFeedback } from "./feedback";

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
   * off in every row: they cost SciFact more than they gained (docs/retrieval-experiments.md, twelfth pass).
   */
  vectorMargin: { at: number; below: number; perNotes?: number; cone?: number; growBelowConfidence?: number } | null;
  /**
   * What a flat vector list (vectorMargin) still adds (0: nothing, BM25's
   * order is left alone). Ranks exaggerate a flat list's differences, scores
   * do not: the keyword list is re-scored by (min-max BM25 + flatConvex ×
   * min-max vector score) / (1 + flatConvex), so the vectors break near-ties
   * between keyword hits and never overturn a clear BM25 lead (SciFact train
   * nDCG@10 0.703 → 0.711, over BM25's 0.708; docs/retrieval-experiments.md, fourth pass).
   */
  flatConvex: number;
  /**
   * Notes outside the keyword list's best `depth` get `weight` × the vector
   * list's weight (null: all the same): the vector side mostly re-orders what
   * the words found, and adds new notes more cautiously. `perNotes`: the top grows
   * as vectorMargin's place does (off: a question gained in a 6,744-note vault, one
   * lost on the SRD wiki; docs/retrieval-experiments.md, twelfth pass).
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
      "USE-lite ranks far below BM25 on its own (SciFact nDCG@10 0.24 vs 0.69; SRD wiki paraphrases 7 of 20 vs 12) but finds paraphrased questions BM25 misses on Obsidian Help: the vector list counts only where the keyword side is unsure (0.25 while some keyword hit holds the query's words together, 2 when none does), only when its first note stands 0.12 above its 30th (USE-lite sees SciFact's abstracts all about equally close: there its scores only break near-ties between keyword hits, min-max BM25 + 0.5 × min-max vector score; SciFact train nDCG@10 0.666 → 0.711, BM25 0.708), at half weight for notes the words did not find, and its two best notes kept in 4th and 5th place when the keyword side is unsure, while a keyword hit that scores 1.25 times the next keeps first place; the family of settings that most often kept every set and kind at or above BM25 on the tuning halves (docs/retrieval-experiments.md).",
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
