// Our own retrieval question sets (bench/data/*.jsonl, issue 11 part 1) keep the rules that make
// their figures mean something: enough questions of each kind, a fixed tune/report split that
// alternates within each kind, paraphrases that leave out the page's title words, and expected
// pages that exist in the vault the set is about.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describeWithCorpus, DND_SRD, OBSIDIAN_HELP } from "./helpers/corpora";

interface Question {
  id: string;
  kind: string;
  half: string;
  question: string;
  expected: string[];
}

const SETS = [
  { file: "obsidian-help.jsonl", corpus: "obsidian-help", vault: OBSIDIAN_HELP },
  { file: "srd-wiki.jsonl", corpus: "dnd-srd-wiki", vault: DND_SRD },
];
const KINDS = ["keyword", "paraphrase", "detail"];

function load(file: string): Question[] {
  const text = readFileSync(resolve(import.meta.dir, "../bench/data", file), "utf8");
  return text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Question);
}

const words = (s: string) => s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
// Words a title and a question share without the question naming the page.
const FUNCTION_WORDS = new Set("a an and the of to in on for with from by at as or is are how what".split(" "));

/** The title words of `path` (its file name) that `question` uses, allowing a plural or a verb ending. */
function titleWordsUsed(question: string, path: string): { used: string[]; of: number } {
  const title = words(path.slice(path.lastIndexOf("/") + 1).replace(/\.md$/, "")).filter((w) => !FUNCTION_WORDS.has(w));
  const asked = words(question);
  const stem = (w: string) => (w.length > 4 ? w.replace(/(es|s|ed|ing)$/, "") : w);
  const used = title.filter((t) => asked.some((a) => a === t || stem(a) === stem(t)));
  return { used, of: title.length };
}

describe("the retrieval question sets (bench/data)", () => {
  for (const set of SETS) {
    test(`${set.file}: at least 60 questions, ids unique, every kind in both halves`, () => {
      const qs = load(set.file);
      expect(qs.length).toBeGreaterThanOrEqual(60);
      expect(new Set(qs.map((q) => q.id)).size).toBe(qs.length);
      for (const q of qs) {
        expect(KINDS).toContain(q.kind);
        expect(["tune", "report"]).toContain(q.half);
        expect(q.question.trim().length).toBeGreaterThan(0);
        expect(q.expected.length).toBeGreaterThan(0);
      }
      for (const kind of KINDS) {
        const ofKind = qs.filter((q) => q.kind === kind);
        expect(ofKind.length).toBeGreaterThanOrEqual(10);
        // The fixed split: within a kind, in file order, tune, report, tune, report …
        expect(ofKind.map((q) => q.half)).toEqual(ofKind.map((_, i) => (i % 2 === 0 ? "tune" : "report")));
      }
    });

    // Issue 11: "paraphrased so that the page's title words are mostly absent". A question may share one
    // common word with a longer title ("peek at a linked page …" for Page preview), never the whole title.
    test(`${set.file}: a paraphrased question uses at most one of its page's title words, and never all of them`, () => {
      const offenders = load(set.file)
        .filter((q) => q.kind === "paraphrase")
        .map((q) => ({ q, ...titleWordsUsed(q.question, q.expected[0]!) }))
        .filter(({ used, of }) => used.length > 1 || (used.length > 0 && used.length >= of));
      expect(offenders.map(({ q, used }) => `${q.id}: ${used.join(", ")}`)).toEqual([]);
    });
  }

  test("the title-word check catches a question that names its page", () => {
    expect(titleWordsUsed("how do I use the page preview", "Plugins/Page preview.md").used).toEqual(["page", "preview"]);
    expect(titleWordsUsed("peek at a linked page without leaving the one I am on", "Plugins/Page preview.md")).toEqual({ used: ["page"], of: 2 });
    expect(titleWordsUsed("a sword that beheads its victim", "Treasure/Vorpal Swords.md").used).toEqual(["swords"]);
    expect(titleWordsUsed("what does fireball do", "Spells/Fireball.md")).toEqual({ used: ["fireball"], of: 1 });
  });
});

describeWithCorpus(
  SETS.map((s) => s.corpus),
  "every expected page of the question sets is in its vault",
  () => {
    for (const set of SETS) {
      test(`${set.file}: each expected path names a note of ${set.corpus}`, () => {
        const missing = load(set.file).flatMap((q) => q.expected.filter((p) => !existsSync(join(set.vault, p))).map((p) => `${q.id}: ${p}`));
        expect(missing).toEqual([]);
      });
    }
  },
);
