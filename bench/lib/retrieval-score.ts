// Scores of ranked lists against a question set: per set, per kind and per half.
import { ndcg, rr, type Query } from "./retrieval-data";

export interface Scores {
  n: number;
  hit5: number;
  mrr: number;
  ndcg10: number;
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

export function score(queries: Query[], lists: Map<string, string[]>): Scores {
  const hit = (q: Query) => ((lists.get(q.id) ?? []).slice(0, 5).some((d) => q.relevant.has(d)) ? 1 : 0);
  return {
    n: queries.length,
    hit5: queries.reduce((s, q) => s + hit(q), 0),
    mrr: mean(queries.map((q) => rr(lists.get(q.id) ?? [], q.relevant, 10))),
    ndcg10: mean(queries.map((q) => ndcg(lists.get(q.id) ?? [], q.relevant, 10))),
  };
}

/** Scores of one half (or all), overall and per kind. */
export function byKind(queries: Query[], lists: Map<string, string[]>, half?: "tune" | "report"): Record<string, Scores> {
  const qs = half ? queries.filter((q) => q.half === half) : queries;
  const out: Record<string, Scores> = { all: score(qs, lists) };
  for (const kind of ["keyword", "paraphrase", "detail"]) out[kind] = score(qs.filter((q) => q.kind === kind), lists);
  return out;
}

/** "hit@5 a/b" cells for a table row: all, keyword, paraphrase, detail. */
export function hitCells(s: Record<string, Scores>): string[] {
  return ["all", "keyword", "paraphrase", "detail"].map((k) => `${s[k]!.hit5}/${s[k]!.n}`);
}
