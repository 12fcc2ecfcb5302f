// A clear keyword lead keeps first place in the built-in model's hybrid
// (RankingParams.keywordLead in lib/semantic/ranking.ts; docs/retrieval-experiments.md,
// "seventeenth pass"): the rule on its own, the setting and its override, then
// through the real server with the real model, where a vector list weighed far
// above the keyword list would otherwise bury the one note that names the thing asked about.
import { afterEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { keepKeywordLead, type Scored } from "../lib/semantic/fusion";
import { rankingFor } from "../lib/semantic/ranking";
import { keywordRank } from "../lib/semantic/keyword";
import { SemanticService } from "../lib/semantic/service";
import { useEmbeddedVault } from "./helpers/builtin-model";

const keyword = (...scores: [number, number][]): Scored => new Map(scores.map(([id, score]) => [id, { score }]));
const list = (): [number, number][] => [1, 2, 3, 4, 5].map((id, i) => [id, 1 - i / 10]);
const ids = (l: [number, number][]) => l.map(([id]) => id);
const LEAD = { keywordLead: 0.2 };

describe("the rule", () => {
  test("the keyword list's best goes first when it scores more than 1.25 times its second, and scores stay in order", () => {
    const moved = list();
    keepKeywordLead(moved, keyword([4, 10], [2, 7.9]), LEAD);
    expect(ids(moved)).toEqual([4, 1, 2, 3, 5]);
    for (let i = 1; i < moved.length; i++) expect(moved[i - 1]![1]).toBeGreaterThan(moved[i]![1]);
    // Not in the fused list at all (a page past the fusion's depth): it is added first.
    const added = list();
    keepKeywordLead(added, keyword([9, 10], [2, 5]), LEAD);
    expect(ids(added)).toEqual([9, 1, 2, 3, 4, 5]);
  });

  test("no lead, a lone keyword hit, the rule off, or already first: the ranking stands", () => {
    for (const [kw, p] of [
      [keyword([4, 10], [2, 8]), LEAD], // exactly 1.25 times: not more
      [keyword([4, 10]), LEAD], // one hit: nothing to lead
      [keyword([4, 10], [2, 1]), { keywordLead: null }],
      [keyword([1, 10], [2, 1]), LEAD],
      [keyword([4, 0], [2, 0]), LEAD], // no score at all
    ] as const) {
      const same = list();
      keepKeywordLead(same, kw, p);
      expect(same).toEqual(list());
    }
  });

  describe("the setting", () => {
    const saved = process.env.LETTUCE_KEYWORD_LEAD;
    afterEach(() => {
      if (saved === undefined) delete process.env.LETTUCE_KEYWORD_LEAD;
      else process.env.LETTUCE_KEYWORD_LEAD = saved;
    });

    test("on for the built-in model at 0.2, off for the models not measured here; LETTUCE_KEYWORD_LEAD sets or clears it", () => {
      delete process.env.LETTUCE_KEYWORD_LEAD;
      expect(rankingFor("builtin").keywordLead).toBe(0.2);
      expect(rankingFor("ollama", "nomic-embed-text").keywordLead).toBeNull();
      process.env.LETTUCE_KEYWORD_LEAD = "0";
      expect(rankingFor("builtin").keywordLead).toBeNull();
      process.env.LETTUCE_KEYWORD_LEAD = "0.3";
      expect(rankingFor("ollama", "bge-m3").keywordLead).toBe(0.3);
      // Out of range: the row's own value (and one line on stderr).
      process.env.LETTUCE_KEYWORD_LEAD = "1.5";
      expect(rankingFor("builtin").keywordLead).toBe(0.2);
    });
  });
});

// One note names the programme asked about; eight others are about losing weight in general.
const NOTES: Record<string, string> = {
  "DESMOND.md": "# DESMOND\n\nThe DESMOND programme is a structured group education course for adults newly diagnosed with type 2 diabetes. In the trial, most participants lost some weight in the first year.\n",
  "Weight loss basics.md": "# Weight loss basics\n\nLosing weight comes down to eating fewer calories than you burn. Slow loss of half a kilo a week lasts longer than crash diets.\n",
  "Diet plans.md": "# Diet plans\n\nLow-carbohydrate and Mediterranean diets both help people lose weight; the best diet is the one you can keep.\n",
  "Exercise and weight.md": "# Exercise and weight\n\nExercise alone rarely causes large weight loss, but it helps people keep off the weight they have lost.\n",
  "Obesity treatment.md": "# Obesity treatment\n\nMedicines, surgery and lifestyle programmes reduce body weight in people with obesity; surgery gives the largest loss.\n",
  "Intermittent fasting.md": "# Intermittent fasting\n\nEating only within an eight-hour window led to modest weight loss in several small studies.\n",
  "Calorie counting.md": "# Calorie counting\n\nTracking what you eat in an app makes weight loss more likely, mostly because it makes people notice snacks.\n",
  "Sleep and appetite.md": "# Sleep and appetite\n\nShort sleep raises hunger hormones, and people who sleep badly find it harder to lose weight.\n",
  "Weight regain.md": "# Weight regain\n\nMost people who lose weight on a diet regain part of it within five years; maintenance needs a plan of its own.\n",
};
const QUERY = "The DESMOND program caused substantial weight loss in most participants.";

describe("through the server, with the built-in model", () => {
  const v = useEmbeddedVault("lettuce-keyword-lead-", (root) => {
    for (const [name, text] of Object.entries(NOTES)) writeFileSync(join(root, name), text);
  });
  const saved = { w: process.env.LETTUCE_RRF_VECTOR_WEIGHT, lead: process.env.LETTUCE_KEYWORD_LEAD };
  afterEach(() => {
    for (const [k, val] of [["LETTUCE_RRF_VECTOR_WEIGHT", saved.w], ["LETTUCE_KEYWORD_LEAD", saved.lead]] as const) {
      if (val === undefined) delete process.env[k];
      else process.env[k] = val;
    }
  });
  const top = async () => ((await v.s.call("semantic_search", { query: QUERY, hybrid: true, limit: 5 })).items as { path: string }[]).map((i) => i.path);

  test("the one note that holds the programme's name stays first when the vector list outweighs the keyword list", async () => {
    // The facts the test stands on: the note leads the keyword list by more than 1.25 times, and the vector list does not put it first.
    const db = v.s.vault.indexDb;
    await SemanticService.for(v.s.vault).syncKeywords(); // the keyword side's tables, as a hybrid call fills them
    const pathOf = (id: number) => (db.query("SELECT path FROM notes WHERE id = ?").get(id) as { path: string }).path;
    const kw = keywordRank(db, QUERY, 5);
    expect(pathOf(kw[0]!.noteId)).toBe("DESMOND.md");
    expect(kw[0]!.score).toBeGreaterThan(1.25 * kw[1]!.score);
    const vector = ((await v.s.call("semantic_search", { query: QUERY, limit: 5 })).items as { path: string }[]).map((i) => i.path);
    expect(vector[0]).not.toBe("DESMOND.md");
    // The vector list weighed 1,000 times the keyword list (a user's override): fusion alone follows the vectors.
    process.env.LETTUCE_RRF_VECTOR_WEIGHT = "1000";
    process.env.LETTUCE_KEYWORD_LEAD = "0";
    expect((await top())[0]).not.toBe("DESMOND.md");
    delete process.env.LETTUCE_KEYWORD_LEAD;
    expect((await top())[0]).toBe("DESMOND.md");
  }, 120_000);
});
