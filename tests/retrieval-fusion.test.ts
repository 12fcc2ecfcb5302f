// Confidence-aware fusion (lib/semantic/fusion.ts): the built-in model's vector
// list counts only where it agrees with the keyword side and only where the
// keyword side is unsure, and its best note keeps a place when the words
// scatter. The rules on their own, then through the real server with the real
// built-in model on a slice of the SRD wiki: hybrid never drops a note that the
// keyword ranking alone puts in the top 5 for a question in the page's words,
// and prepare_context, which ranks by retrieve() when there are vectors, keeps
// the page its keywords find first and orders pages as semantic_search does.
import { describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fuseRankings, keepVectorSlot, marginPlace, vectorWeighting, type Scored } from "../lib/semantic/fusion";
import { rankingFor } from "../lib/semantic/ranking";
import { keywordRank } from "../lib/semantic/keyword";
import { features, QueryTerms } from "../lib/semantic/rerank";
import { describeWithCorpus, DND_SRD } from "./helpers/corpora";
import { useEmbeddedVault } from "./helpers/builtin-model";

const scored = (ids: number[]): Scored => new Map(ids.map((id, i) => [id, { score: 100 - i }]));
const GATE = { agreement: { vectorTop: 5, keywordTop: 10, without: 0 }, outside: { depth: 3, weight: 0.5 } };

describe("the rules", () => {
  test("a vector list that shares none of its best 5 with the keyword top 10 gets no weight; one shared note opens it", () => {
    const keyword = scored([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(vectorWeighting(keyword, scored([20, 21, 22, 23, 24, 1]), 2, GATE).weight).toBe(0);
    expect(vectorWeighting(keyword, scored([20, 21, 22, 23, 11]), 2, GATE).weight).toBe(0); // 11 is 11th: not in the top 10
    expect(vectorWeighting(keyword, scored([20, 21, 22, 23, 10]), 2, GATE).weight).toBe(2);
    // No keyword hit at all: the vector list stands alone, unchanged.
    expect(vectorWeighting(new Map(), scored([20, 21]), 2, GATE).weight).toBe(2);
    expect(vectorWeighting(keyword, scored([20, 3]), 2, { agreement: null, outside: null }).weight).toBe(2);
  });

  test("notes the words did not find count half; a closed gate still lists them, below every keyword hit", () => {
    const keyword = scored([1, 2, 3, 4]);
    const w = vectorWeighting(keyword, scored([4, 2, 9]), 1, GATE);
    expect([w.factor(1), w.factor(3), w.factor(4), w.factor(9)]).toEqual([1, 1, 0.5, 0.5]);
    // A top that grows with the vault (a bench variant, off in every row): 3 × √(1,600 / 400) = 6 notes inside.
    const grown = vectorWeighting(scored([1, 2, 3, 4, 5, 6, 7]), scored([6, 7]), 1, { ...GATE, outside: { depth: 3, weight: 0.5, perNotes: 400 } }, 1600);
    expect([grown.factor(6), grown.factor(7)]).toEqual([1, 0.5]);
    const open = fuseRankings([keyword], [scored([9, 1])], { fusion: "rrf", k: 10, vectorWeight: 1 }, [], w.factor);
    expect(open.get(9)).toBeCloseTo(0.5 / 11);
    const closed = fuseRankings([keyword], [scored([9, 8])], { fusion: "rrf", k: 10, vectorWeight: 0 });
    const order = [...closed].sort((a, b) => b[1] - a[1]).map(([id]) => id);
    expect(order).toEqual([1, 2, 3, 4, 9, 8]);
  });

  test("a vector list whose first note stands less than the margin above its 30th is flat; the place may grow with the vault (a bench variant)", () => {
    // Scores 1, 0.995, 0.99, …: the first stands 0.145 above the 30th and 0.245 above the 50th.
    const vec = new Map(Array.from({ length: 60 }, (_, i) => [i + 1, { score: 1 - i * 0.005 }] as [number, { score: number }]));
    const keyword = scored([1, 2, 3]);
    const margin = { at: 30, below: 0.15 };
    const p = { agreement: null, outside: null };
    expect(vectorWeighting(keyword, vec, 2, { ...p, vectorMargin: margin }).flat).toBe(true);
    expect(vectorWeighting(keyword, vec, 2, { ...p, vectorMargin: margin }).weight).toBe(0);
    // Off (every model's row): the place stays 30th whatever the vault's size.
    expect(marginPlace(margin, 100_000)).toBe(30);
    const growing = { ...margin, perNotes: 400 };
    expect([marginPlace(growing, 200), marginPlace(growing, 400), marginPlace(growing, 1600)]).toEqual([30, 30, 60]);
    expect(vectorWeighting(keyword, vec, 2, { ...p, vectorMargin: growing }, 400).flat).toBe(true);
    expect(vectorWeighting(keyword, vec, 2, { ...p, vectorMargin: growing }, 1600)).toMatchObject({ flat: false, weight: 2 });
    // Growing only while the keyword side is unsure: a sure one keeps the 30th.
    const unsure = { ...growing, growBelowConfidence: 0.5 };
    expect(vectorWeighting(keyword, vec, 2, { ...p, vectorMargin: unsure }, 1600, 0.9).flat).toBe(true);
    expect(vectorWeighting(keyword, vec, 2, { ...p, vectorMargin: unsure }, 1600, 0.2).flat).toBe(false);
    // A cone: the 60th scores 0.705, so a list is flat at or below that level whatever its spread.
    expect(vectorWeighting(keyword, vec, 2, { ...p, vectorMargin: { ...growing, cone: 0.7 } }, 1600).flat).toBe(true);
    expect(vectorWeighting(keyword, vec, 2, { ...p, vectorMargin: { ...growing, cone: 0.71 } }, 1600).flat).toBe(false);
  });

  test("the vector side's best notes are put 4th and 5th when the keyword side is unsure, and scores stay in order", () => {
    const p = { vectorSlot: { position: 3, belowConfidence: 0.5, notes: 1 } };
    const list = (): [number, number][] => [1, 2, 3, 4, 5, 6, 7].map((id, i) => [id, 1 - i / 10]);
    // A vector list whose notes rank in the order given (keepVectorSlot picks its best itself).
    const vec = (...ids: number[]): Scored => new Map(ids.map((id, i) => [id, { score: 0.9 - i / 10 }]));
    const moved = list();
    keepVectorSlot(moved, vec(7), 0.2, p);
    expect(moved.map(([id]) => id)).toEqual([1, 2, 3, 7, 4, 5, 6]);
    for (let i = 1; i < moved.length; i++) expect(moved[i - 1]![1]).toBeGreaterThan(moved[i]![1]);
    const absent = list();
    keepVectorSlot(absent, vec(99), 0.2, p);
    expect(absent.map(([id]) => id)).toEqual([1, 2, 3, 99, 4, 5, 6, 7]);
    for (const [best, confidence] of [
      [7, 0.5], // the keyword side holds the query's words together: its order stands
      [2, 0.1], // already in the top 3
    ] as const) {
      const same = list();
      keepVectorSlot(same, vec(best), confidence, p);
      expect(same).toEqual(list());
    }
    // Two places: the second best goes 5th, unless it is already above; the best's place is taken first.
    const two = { vectorSlot: { position: 3, belowConfidence: 0.5, notes: 2 } };
    const both = list();
    keepVectorSlot(both, vec(7, 6), 0.2, two);
    expect(both.map(([id]) => id)).toEqual([1, 2, 3, 7, 6, 4, 5]);
    for (let i = 1; i < both.length; i++) expect(both[i - 1]![1]).toBeGreaterThan(both[i]![1]);
    const secondHigh = list();
    keepVectorSlot(secondHigh, vec(7, 2), 0.2, two);
    expect(secondHigh.map(([id]) => id)).toEqual([1, 2, 3, 7, 4, 5, 6]);
    const secondOnly = list();
    keepVectorSlot(secondOnly, vec(1, 6), 0.2, two);
    expect(secondOnly.map(([id]) => id)).toEqual([1, 2, 3, 4, 6, 5, 7]);
    // The built-in model's row uses the measured rules (the agreement gate no longer: it cost paraphrases once
    // the keyword side read anchor text); the other models' rows none (not measured with them).
    expect(rankingFor("builtin")).toMatchObject({ agreement: null, vectorMargin: { at: 30, below: 0.12 }, vectorSlot: { position: 3, notes: 2 }, outside: { depth: 50 } });
    expect(rankingFor("ollama", "nomic-embed-text")).toMatchObject({ agreement: null, vectorMargin: null, flatConvex: 0, outside: null, vectorSlot: null });
  });

  test("a vector list whose first note stands less than the margin above its 30th gets no weight; one that stands out keeps it", () => {
    const keyword = scored([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const list = (top: number, step: number, n = 40): Scored => new Map(Array.from({ length: n }, (_, i) => [i === 0 ? 1 : 100 + i, { score: i === 0 ? top : 0.8 - i * step }]));
    const rule = { agreement: null, outside: null, vectorMargin: { at: 30, below: 0.12 } };
    // Flat: 0.85 first, the 30th at 0.8 - 29 × 0.001 = 0.771: a spread of 0.079.
    expect(vectorWeighting(keyword, list(0.85, 0.001), 2, rule)).toMatchObject({ weight: 0, flat: true });
    // The first note stands out (0.95 against 0.771).
    expect(vectorWeighting(keyword, list(0.95, 0.001), 2, rule)).toMatchObject({ weight: 2, flat: false });
    // A spread list (0.85 against 0.8 - 29 × 0.01 = 0.51).
    expect(vectorWeighting(keyword, list(0.85, 0.01), 2, rule).weight).toBe(2);
    // Fewer than 30 notes: no spread to measure, the list keeps its weight; no keyword hit: the vectors stand alone.
    expect(vectorWeighting(keyword, list(0.85, 0.001, 20), 2, rule).weight).toBe(2);
    expect(vectorWeighting(new Map(), list(0.85, 0.001), 2, rule).weight).toBe(2);
  });

  test("the second stage's title evidence is two-sided, and a heading that repeats the title is not counted again", () => {
    const q = new QueryTerms("vitamin D deficiency raises the risk of fractures");
    const doc = (title: string, headings: string[] = []) => ({ noteId: 1, title, aliases: [], headings, body: "" });
    // A paper title holding three of the claim's six content words (vitamin, d, deficiency), and five of its own the claim lacks.
    const long = features(q, doc("Vitamin D receptor polymorphisms and deficiency in a cohort of elderly women", ["Vitamin D receptor polymorphisms and deficiency in a cohort of elderly women"]));
    expect(long.title).toBeCloseTo(3 / 6);
    expect(long.named).toBeCloseTo(3 / 8);
    expect(long.heading).toBe(0); // the H1 that repeats the title
    // A title the query names outright keeps its full weight.
    const named = features(new QueryTerms("frost dates"), doc("Frost dates", ["Frost dates", "Last frost"]));
    expect([named.title, named.named]).toEqual([1, 1]);
    expect(named.heading).toBeCloseTo(0.5); // "Last frost": a heading of its own still counts
  });
});

describeWithCorpus("dnd-srd-wiki", "hybrid is never below the keyword ranking on questions in the page's words (built-in model)", () => {
  const v = useEmbeddedVault("lettuce-fusion-srd-", (root) => {
    // Stat blocks and spells: where the built-in model's vectors are poorest.
    for (const dir of ["Monsters", "Spells"]) {
      mkdirSync(join(root, dir));
      const files = readdirSync(join(DND_SRD, dir)).filter((f) => f.endsWith(".md")).sort().slice(0, 30);
      for (const f of files) cpSync(join(DND_SRD, dir, f), join(root, dir, f));
    }
  });

  test("each note's own title, asked as a question: wherever the keyword ranking has the note in its top 5, hybrid does too", async () => {
    const notes = v.s.vault.indexDb.query("SELECT id, path, title FROM notes ORDER BY path").all() as { id: number; path: string; title: string }[];
    expect(notes.length).toBe(60);
    let keywordHits = 0;
    for (const n of notes) {
      const question = `what is ${n.title.replace(/\(.*?\)/g, "").trim()}`;
      const keyword = keywordRank(v.s.vault.indexDb, question, 5).map((h) => h.noteId);
      const hybrid = (await v.s.call("semantic_search", { query: question, hybrid: true, limit: 5 })).items.map((i: { path: string }) => i.path);
      if (keyword.includes(n.id)) {
        keywordHits++;
        expect({ question, hybrid }).toEqual({ question, hybrid: expect.arrayContaining([n.path]) });
      }
    }
    // The check is not empty: the keyword side finds most notes by their title.
    expect(keywordHits).toBeGreaterThan(40);
  }, 600_000);

  test("prepare_context fuses the vector ranking by the same rules: a page its keyword ranking finds first stays in the pack", async () => {
    const notes = v.s.vault.indexDb.query("SELECT id, path, title FROM notes ORDER BY path").all() as { id: number; path: string; title: string }[];
    let checked = 0;
    for (const n of notes.filter((_, i) => i % 3 === 0)) {
      const task = `look up the rules for ${n.title.replace(/\(.*?\)/g, "").trim()}`;
      const pack = await v.s.call("prepare_context", { task, maxConcepts: 6 });
      expect(pack.ranking).toBe("keyword+vector");
      if (keywordRank(v.s.vault.indexDb, task, 1)[0]?.noteId !== n.id) continue;
      checked++;
      expect({ task, ids: pack.concepts.map((c: { id: string }) => c.id) }).toEqual({ task, ids: expect.arrayContaining([n.path]) });
    }
    expect(checked).toBeGreaterThan(10);
  }, 600_000);
});

describeWithCorpus("dnd-srd-wiki", "prepare_context ranks by retrieve() when the vault has vectors (built-in model)", () => {
  // Folders that link nowhere: the pack's own priors (backlinks, co-links; no reviews, nothing stale) are all 1.
  const v = useEmbeddedVault("lettuce-context-srd-", (root) => {
    for (const dir of ["Monsters", "Treasure", "Classes"]) {
      mkdirSync(join(root, dir));
      const files = readdirSync(join(DND_SRD, dir)).filter((f) => f.endsWith(".md")).sort().slice(0, 40);
      for (const f of files) cpSync(join(DND_SRD, dir, f), join(root, dir, f));
    }
  });

  test("prepare_context's ranking is semantic_search's: on pages with no links, reviews or age to weigh, its concepts come in hybrid's order", async () => {
    const titles = (v.s.vault.indexDb.query("SELECT title FROM notes ORDER BY path").all() as { title: string }[]).map((r) => r.title.replace(/\(.*?\)/g, "").trim());
    const tasks = [...titles.filter((_, i) => i % 6 === 0).map((t) => `what should the party know about the ${t}`), "a flying beast that breathes fire", "gold and gems the heroes can sell", "how a wizard learns new spells"];
    for (const task of tasks) {
      const pack = await v.s.call("prepare_context", { task, maxConcepts: 6, maxTokens: 16000 });
      const hybrid = (await v.s.call("semantic_search", { query: task, hybrid: true, limit: 6 })).items.map((i: { path: string }) => i.path);
      const ids = pack.concepts.map((c: { id: string }) => c.id);
      expect(pack.ranking).toBe("keyword+vector");
      expect(ids.length).toBeGreaterThan(0);
      expect({ task, ids }).toEqual({ task, ids: hybrid.slice(0, ids.length) });
    }
  }, 600_000);

  test("prepare_context's keywords reach the hybrid ranking: a task in other words finds the page its keywords name", async () => {
    const note = v.s.vault.indexDb.query("SELECT path, title FROM notes WHERE path LIKE 'Treasure/%' ORDER BY path LIMIT 1 OFFSET 7").get() as { path: string; title: string };
    const task = "prepare tonight's encounter for the party";
    const without = await v.s.call("prepare_context", { task, maxConcepts: 6 });
    const withKeywords = await v.s.call("prepare_context", { task, keywords: [note.title], maxConcepts: 6 });
    expect(withKeywords.ranking).toBe("keyword+vector");
    expect(without.concepts.map((c: { id: string }) => c.id)).not.toContain(note.path);
    expect(withKeywords.concepts.map((c: { id: string }) => c.id)).toContain(note.path);
  }, 600_000);
});
