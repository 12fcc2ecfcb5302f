// A flat vector list breaks near-ties between keyword hits and nothing more
// (RankingParams.flatConvex, lib/semantic/ranking.ts and fusion.ts): the rule on its own,
// then through the real server with the real built-in model, on a vault of
// near-identical notes where the model finds its best 30 notes about equally
// close to the query (as it finds SciFact's abstracts, the set this rule is
// for). The expected order is computed from the keyword scores and the
// vector-mode scores the server gives, by the formula, not from hybrid's answer.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { convexOverKeyword, type Scored } from "../lib/semantic/fusion";
import { rankingFor } from "../lib/semantic/ranking";
import { keywordRank } from "../lib/semantic/keyword";
import { useEmbeddedVault } from "./helpers/builtin-model";

const scored = (pairs: [number, number][]): Scored => new Map(pairs.map(([id, score]) => [id, { score }]));

describe("convexOverKeyword", () => {
  test("vectors break near-ties between keyword hits, never overturn a clear lead; notes only the vectors found come last, in their order", () => {
    // BM25: 1 leads clearly, 2 and 3 are nearly tied, 4 is last.
    const keyword = scored([
      [1, 20],
      [2, 12],
      [3, 11.8],
      [4, 10],
    ]);
    // The vectors prefer 4, then 3, then 2, then 1 (and 9, which the words did not find).
    const vector = scored([
      [9, 0.99],
      [4, 0.98],
      [3, 0.97],
      [2, 0.96],
      [1, 0.95],
    ]);
    const out = convexOverKeyword(keyword, vector, 0.5);
    const order = [...out].sort((a, b) => b[1] - a[1]).map(([id]) => id);
    expect(order).toEqual([1, 3, 4, 2, 9]);
    // (bm25' + 0.5 × vector') / 1.5, both scaled over the keyword hits: 1 has bm25' 1, vector' 0.
    expect(out.get(1)).toBeCloseTo(1 / 1.5, 6);
    expect(out.get(4)).toBeCloseTo((0 + 0.5 * 1) / 1.5, 6);
    expect(out.get(9)!).toBeLessThan(Math.min(...[1, 2, 3, 4].map((id) => out.get(id)!)));
    // Share 0: BM25's order; a keyword hit the vector side has no score for counts as its worst.
    expect([...convexOverKeyword(keyword, vector, 0)].sort((a, b) => b[1] - a[1]).map(([id]) => id)).toEqual([1, 2, 3, 4, 9]);
    const partial = convexOverKeyword(keyword, scored([[2, 0.9]]), 0.5);
    expect(partial.get(2)!).toBeGreaterThan(partial.get(3)!);
    // One keyword hit (nothing to scale against) and no vector list at all: still a score above 0.
    expect(convexOverKeyword(scored([[5, 3]]), undefined, 0.5).get(5)).toBeGreaterThan(0);
  });
});


/** Minutes of one council meeting, forty times over: the same text but for an item number, one or two mentions of the harbour, and some filler. */
function minutes(i: number): string {
  const harbour = i % 2 ? " The harbour came up, and the harbour again." : " The harbour came up.";
  return `The council met to review the yearly budget, line by line, as every year.${harbour} Item ${i + 1} was closed.${" Tea was served.".repeat(i % 5)}\n`;
}

describe("through the server: a flat vector list re-orders the keyword list's near-ties (built-in model)", () => {
  const v = useEmbeddedVault("lettuce-flat-", (root) => {
    for (let i = 0; i < 40; i++) writeFileSync(join(root, `Minutes ${String(i + 1).padStart(2, "0")}.md`), minutes(i));
  });

  test("semantic_search hybrid ranks by (min-max BM25 + 0.5 × min-max vector score): not BM25's order, and the vector list is flat", async () => {
    const query = "harbour";
    const db = v.s.vault.indexDb;
    const pathOf = new Map((db.query("SELECT id, path FROM notes").all() as { id: number; path: string }[]).map((r) => [r.id, r.path]));
    expect(pathOf.size).toBe(40);
    // The vector side's scores as the server ranks them (one passage per note), and BM25's.
    const vector = (await v.s.call("semantic_search", { query, limit: 40 })).items as { path: string; score: number }[];
    expect(vector.length).toBe(40);
    const margin = rankingFor("builtin").vectorMargin!;
    expect(vector[0]!.score - vector[margin.at - 1]!.score).toBeLessThan(margin.below);
    // (The hybrid call brings the keyword table in step: ask it first.)
    const hybrid = (await v.s.call("semantic_search", { query, hybrid: true, limit: 10 })).items.map((i: { path: string }) => i.path);
    const keyword = keywordRank(db, query, 100).map((h) => ({ path: pathOf.get(h.noteId)!, score: h.score }));
    expect(keyword.length).toBe(40);
    // The formula, by hand.
    const scale = (xs: number[]) => xs.map((x) => (x - Math.min(...xs)) / (Math.max(...xs) - Math.min(...xs)));
    const vs = new Map(vector.map((x) => [x.path, x.score]));
    const k = scale(keyword.map((x) => x.score));
    const vv = scale(keyword.map((x) => vs.get(x.path)!));
    const share = rankingFor("builtin").flatConvex;
    expect(share).toBe(0.5);
    const expected = keyword
      .map((x, i) => ({ path: x.path, score: (k[i]! + share * vv[i]!) / (1 + share) }))
      .sort((a, b) => b.score - a.score)
      .map((x) => x.path);
    // The second stage adds the same to every note here (no title or heading holds the word; each holds it): the order is the formula's.
    expect(hybrid).toEqual(expected.slice(0, 10));
    // ... which is not BM25's: the old rule (the flat list closed) would fail here.
    expect(hybrid).not.toEqual(keyword.slice(0, 10).map((x) => x.path));
    // Whatever comes first scores at least BM25's best there: (bm25' + 0.5 × vector') ≥ 1, so bm25' ≥ 0.5.
    expect(k[keyword.findIndex((x) => x.path === hybrid[0])]!).toBeGreaterThanOrEqual(1 - share - 1e-9);
  }, 600_000);
});
