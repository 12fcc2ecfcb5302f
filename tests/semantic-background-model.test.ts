// The built-in model's speed-ups (lib/providers/builtin-tokenizer.ts, builtin-kernels.ts,
// length-sorted chunks in builtin.ts) must not change a single token, and the vectors only
// by float rounding: checked against the library's own tokenizer and kernels on real notes.
import { afterAll, expect, test } from "bun:test";
import { EmbeddingsModel } from "@energetic-ai/embeddings";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { BuiltinEmbedder } from "../lib/providers/builtin";
import { MODEL_FILES } from "../lib/providers/builtin-assets";
import { PieceTokenizer } from "../lib/providers/builtin-tokenizer";
import { splitPassages } from "../lib/semantic/passages";
import { splitFrontmatter } from "../lib/vault/parse";
import { describeWithCorpus, OBSIDIAN_HELP } from "./helpers/corpora";

const HOSTILE = [
  "",
  " ",
  "   leading and trailing   ",
  "a",
  "ünïcödé ﬁ ligature Ⅻ ＦＵＬＬＷＩＤＴＨ",
  "emoji 🥬🥬 and ZWJ 👩‍👩‍👧 family",
  "e\u0301\u0301\u0301 combining marks",
  "\u0000\u0001 control \uFFFD replacement",
  "lone surrogate \uD800 here",
  "x".repeat(3000),
  "日本語のテキストと中文文本",
  "[[wikilink]] `code` **bold** #tag https://example.com/a?b=c",
];

function walk(dir: string, out: string[] = []): string[] {
  for (const f of readdirSync(dir).sort()) {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (f.endsWith(".md")) out.push(p);
  }
  return out;
}

const vocabulary = () => JSON.parse(readFileSync(MODEL_FILES.vocabJson, "utf8")) as [string, number][];
// The library's tokenizer, as its EmbeddingsModel makes it (the class itself is not exported).
const libraryTokenizer = (v: [string, number][]) => (new EmbeddingsModel({ model: null as never, vocabulary: v }) as unknown as { tokenizer: { encode(s: string): number[] } }).tokenizer;

test("our tokenizer gives the library's tokens for hostile strings", () => {
  const v = vocabulary();
  const ours = new PieceTokenizer(v);
  const theirs = libraryTokenizer(v);
  for (const s of HOSTILE) expect(ours.encode(s)).toEqual(theirs.encode(s));
});

describeWithCorpus("obsidian-help", "built-in model speed-ups on Obsidian Help", () => {
  let passages: string[] = [];
  const embedders: BuiltinEmbedder[] = [];
  const plainBefore = process.env.LETTUCE_EMBED_PLAIN;
  afterAll(() => {
    for (const e of embedders) e.close();
    if (plainBefore === undefined) delete process.env.LETTUCE_EMBED_PLAIN;
    else process.env.LETTUCE_EMBED_PLAIN = plainBefore;
  });

  test("our tokenizer gives the library's tokens for every passage", () => {
    const v = vocabulary();
    const ours = new PieceTokenizer(v);
    const theirs = libraryTokenizer(v);
    passages = walk(OBSIDIAN_HELP).flatMap((f) => splitPassages(splitFrontmatter(readFileSync(f, "utf8")).body, 500).map((p) => p.input));
    expect(passages.length).toBeGreaterThan(500);
    for (const p of passages) expect(ours.encode(p)).toEqual(theirs.encode(p));
  });

  test("the fast kernels and sorted chunks give the library's vectors, in the caller's order", async () => {
    // A small slice of varied lengths (the model is slow on 2 cores).
    const sample = passages.filter((_, i) => i % Math.floor(passages.length / 20) === 0).slice(0, 20);
    process.env.LETTUCE_EMBED_PLAIN = "1";
    const plain = new BuiltinEmbedder(1);
    embedders.push(plain);
    // One text per call: no sorting, no padding against other texts, the library's kernels.
    const reference: Float32Array[] = [];
    for (const s of sample) reference.push((await plain.embed([s], { purpose: "query" }))[0]!);
    plain.close();
    process.env.LETTUCE_EMBED_PLAIN = "0";
    const fast = new BuiltinEmbedder(1);
    embedders.push(fast);
    // Bulk: sorted by length into chunks of 8 (while requests come) and of 16 (a quiet server, `lettuce embed`).
    for (const chunk of ["8", "16"]) {
      process.env.LETTUCE_EMBED_CHUNK = chunk;
      const got = await fast.embed(sample);
      expect(got.length).toBe(sample.length);
      for (let i = 0; i < sample.length; i++) {
        let dot = 0;
        for (let j = 0; j < 512; j++) dot += got[i]![j]! * reference[i]![j]!;
        const norm = Math.hypot(...got[i]!) * Math.hypot(...reference[i]!);
        expect(dot / norm).toBeGreaterThan(0.9999);
      }
    }
    delete process.env.LETTUCE_EMBED_CHUNK;
  }, 180_000);
});
