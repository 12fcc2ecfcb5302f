// The keyword side of retrieve(), as one call: the query's BM25 ranking (./keyword.ts), with term
// feedback when the ranking asks for it and the caller's keywords added. A read worker runs it
// (lib/offload/jobs.ts), as it does keyword mode's passages (./keyword-passages.ts): BM25 scores every
// matching note, at a cost that grows with how often the query's words occur in them, and on the event
// loop a question whose words 5,000 notes all hold held every other caller 90-260 ms (2-core machine).
import type { Database } from "bun:sqlite";
import { withTermFeedback, type TermFeedback } from "./feedback";
import { keywordRank } from "./keyword";

/** A caller's keywords count half as much as the query's words (the prepare_context spec): they widen it, they do not replace it. */
export const CALLER_KEYWORDS_WEIGHT = 0.5;

/** What the keyword side ranks: a query text, the caller's keywords for it, how deep, and term feedback (null: none). */
export interface KeywordScoresAsk {
  query: string;
  keywords?: string[];
  depth: number;
  feedback: TermFeedback | null;
}

/**
 * The keyword ranking of the query, with the caller's keywords' BM25 added at CALLER_KEYWORDS_WEIGHT:
 * [noteId, score] in the ranking's order (a Map's entries, which cross threads as they are).
 */
export function keywordScores(db: Database, a: KeywordScoresAsk): [number, number][] {
  const hits = keywordRank(db, a.query, a.depth);
  const out = new Map((a.feedback ? withTermFeedback(db, a.query, hits, a.feedback, a.depth) : hits).map((h) => [h.noteId, h.score]));
  if (a.keywords?.length) for (const h of keywordRank(db, a.keywords.join(" "), a.depth)) out.set(h.noteId, (out.get(h.noteId) ?? 0) + CALLER_KEYWORDS_WEIGHT * h.score);
  return [...out];
}
