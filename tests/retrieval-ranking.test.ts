// The one retrieval module's ranking, through the real server: what is
// embedded (title and heading path in front of each passage, only what
// changed), the keyword side's fields (aliases, headings), the model-free
// second stage, the per-model ranking table, and hostile queries. The vectors
// come from a local server speaking the OpenAI wire format (a feature-hashing
// "model"), which records every text it was asked to embed.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MODEL_RANKING, rankingFor } from "../lib/semantic/ranking";
import { feedbackTerms, withTermFeedback } from "../lib/semantic/feedback";
import { keywordRank } from "../lib/semantic/keyword";
import { features, QueryTerms } from "../lib/semantic/rerank";
import { retrieve } from "../lib/semantic/retrieve";
import { SemanticService } from "../lib/semantic/service";
import { startModelServer, type ModelServer } from "./helpers/model-server";
import { startTestServer, type TestServer } from "./helpers/server";

let model: ModelServer;
let s: TestServer;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  model = startModelServer({ dim: 64 });
  const env = { LETTUCE_EMBED_PROVIDER: "openai", LETTUCE_EMBED_BASE_URL: model.url, LETTUCE_EMBED_MODEL: "hash-embed", LETTUCE_LLM_PROVIDER: "none", LETTUCE_PASSAGE_CHARS: "300" };
  for (const [k, v] of Object.entries(env)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  s = await startTestServer();
});

afterAll(async () => {
  await s?.close();
  await model?.stop();
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

/** Every text the model was asked to embed as a document since the last call. */
function embeddedTexts(): string[] {
  const texts = model.state.requests.filter((r) => r.path.endsWith("/embeddings")).flatMap((r) => (Array.isArray(r.body.input) ? r.body.input : [r.body.input]) as string[]);
  model.state.requests = [];
  return texts;
}

test("each passage is embedded with its note's title and heading path in front; the shown text has neither", async () => {
  const r = await s.call("reindex_embeddings");
  expect(r.notes).toBeGreaterThan(10);
  const texts = embeddedTexts();
  const db = s.vault.indexDb;
  const passages = db.query("SELECT p.text AS text, n.title AS title FROM passages p JOIN notes n ON n.id = p.note_id").all() as { text: string; title: string }[];
  expect(passages.length).toBeGreaterThan(r.notes);
  let prefixed = 0;
  for (const p of passages) {
    // The embedded input is the stored (shown) text with context lines in front, led by what names
    // the note: its title, or its outermost heading when the title starts with that heading.
    const input = texts.find((t) => t.endsWith(p.text));
    expect(input).toBeDefined();
    const first = input!.split("\n")[0]!.trim().toLowerCase();
    expect(p.title.toLowerCase().startsWith(first) || p.text.startsWith(p.title)).toBe(true);
    if (input !== p.text) {
      prefixed++;
      expect(p.text.startsWith(p.title)).toBe(false);
    }
  }
  expect(prefixed).toBeGreaterThan(passages.length / 2);
  // A window under a sub-heading carries the heading path: Garden/Compost.md's "What goes in" section.
  const file = readFileSync(join(s.root, "Garden/Compost.md"), "utf8");
  const line = file.split("\n").find((l) => l.startsWith("Turning it with a fork"))!;
  const input = texts.find((t) => t.includes(line.slice(0, 40)))!;
  expect(input.split("\n")[0]).toBe("Compost");
  expect(input).toContain("What goes in");
});

test("an edit re-embeds only the passages it changed", async () => {
  embeddedTexts();
  const path = join(s.root, "Garden/Compost.md");
  const before = readFileSync(path, "utf8");
  try {
    writeFileSync(path, before.replace("Turning it with a fork every couple of weeks", "Turning it with a fork every week"));
    await s.vault.indexer.update(["Garden/Compost.md"]);
    const r = await s.call("reindex_embeddings");
    expect(r.notes).toBe(1);
    const texts = embeddedTexts();
    expect(texts.length).toBe(r.embedded);
    // Only the changed section went to the model, the unchanged "Ratio" passage came from the cache.
    expect(texts.length).toBeGreaterThanOrEqual(1);
    expect(texts.every((t) => !t.includes("Roughly two parts"))).toBe(true);
    expect(texts.some((t) => t.includes("Turning it with a fork every week"))).toBe(true);
  } finally {
    writeFileSync(path, before);
    await s.vault.indexer.update(["Garden/Compost.md"]);
  }
});

test("the keyword side reads aliases and headings: a note found by its alias alone", async () => {
  // "Turkish scrambled eggs" is only Menemen's alias; "Ratio" is only a heading of Compost.
  const alias = await retrieve(SemanticService.for(s.vault), { query: "turkish scrambled", mode: "keyword", limit: 3 });
  expect(alias.notes[0]!.path).toBe("Recipes/Menemen.md");
  const hybrid = await s.call("semantic_search", { query: "turkish scrambled", hybrid: true, limit: 3 });
  expect(hybrid.items[0].path).toBe("Recipes/Menemen.md");
});

test("the second stage puts the note whose title is the query first, and keeps scores descending", async () => {
  for (const q of ["frost dates", "lettuce varieties", "garden plan"]) {
    const titled = (await s.call("semantic_search", { query: q, hybrid: true, limit: 10 })).items;
    const expected = s.vault.indexDb.query("SELECT path FROM notes WHERE lower(title) = ?").get(q) as { path: string };
    expect(titled[0].path).toBe(expected.path);
    for (let i = 1; i < titled.length; i++) expect(titled[i - 1].score).toBeGreaterThanOrEqual(titled[i].score);
  }
  // Paging past the re-scored head keeps the order and loses nobody.
  const all = (await s.call("semantic_search", { query: "lettuce", hybrid: true, limit: 40 })).items.map((i: { path: string }) => i.path);
  const pages: string[] = [];
  for (let off = 0; off < all.length; off += 7) pages.push(...(await s.call("semantic_search", { query: "lettuce", hybrid: true, limit: 7, offset: off })).items.map((i: { path: string }) => i.path));
  expect(pages).toEqual(all);
});

test("the second stage's title evidence is two-sided: a note the query names comes before one whose long title holds the same words among many", async () => {
  const short = "Garden/Soil acidity.md";
  const long = "Garden/Soil acidity, drainage, worms, mulch and compost from the allotment society meeting.md";
  const db = s.vault.indexDb;
  try {
    writeFileSync(join(s.root, short), "Lime raises the pH of soil acidity; sulphur lowers it. Test every spring.\n");
    // The long-titled note says the words more often: BM25 alone puts it first.
    writeFileSync(join(s.root, long), `${"Soil acidity came up again: soil acidity in the beds, soil acidity near the shed. ".repeat(4)}\n`);
    await s.vault.indexer.update([short, long]);
    await s.call("reindex_embeddings");
    await SemanticService.for(s.vault).syncKeywords();
    const q = "soil acidity";
    const ids = Object.fromEntries([short, long].map((p) => [p, (db.query("SELECT id FROM notes WHERE path = ?").get(p) as { id: number }).id]));
    const bm25 = keywordRank(db, q, 10).map((h) => h.noteId);
    expect(bm25.indexOf(ids[long]!)).toBeLessThan(bm25.indexOf(ids[short]!));
    // Both titles hold every word of the query: only the title's own words tell them apart.
    const qt = new QueryTerms(q);
    const doc = (p: string) => ({ noteId: ids[p]!, title: p.slice(7, -3), aliases: [], headings: [], body: "" });
    expect([features(qt, doc(short)).title, features(qt, doc(long)).title]).toEqual([1, 1]);
    expect(features(qt, doc(long)).named).toBeLessThan(0.3);
    const hybrid = (await s.call("semantic_search", { query: q, hybrid: true, limit: 5 })).items.map((i: { path: string }) => i.path);
    expect(hybrid.indexOf(short)).toBe(0);
    expect(hybrid).toContain(long);
  } finally {
    rmSync(join(s.root, short), { force: true });
    rmSync(join(s.root, long), { force: true });
    await s.vault.indexer.update([short, long]);
  }
});

test("keyword-to-keyword feedback (off in every row) finds a note in the words of the query's best hits, not the query's own", async () => {
  const notes: Record<string, string> = {
    "Garden/Bokashi bucket.md": "The bokashi bucket ferments kitchen scraps with inoculated bran. Drain the leachate every few days.\n",
    "Garden/Bokashi bran.md": "Bokashi bran is inoculated with microbes; it ferments kitchen scraps in a sealed bucket, and the leachate feeds plants.\n",
    "Garden/Pickled scraps.md": "Sealed and inoculated, the kitchen scraps ferment; pour off the leachate, then bury the fermented mass.\n",
  };
  const paths = Object.keys(notes);
  const db = s.vault.indexDb;
  try {
    for (const [p, text] of Object.entries(notes)) writeFileSync(join(s.root, p), text);
    await s.vault.indexer.update(paths);
    await SemanticService.for(s.vault).syncKeywords();
    const id = (p: string) => (db.query("SELECT id FROM notes WHERE path = ?").get(p) as { id: number }).id;
    const pickled = id(paths[2]!);
    const hits = keywordRank(db, "bokashi", 100);
    expect(hits.map((h) => h.noteId)).not.toContain(pickled);
    expect(feedbackTerms(db, "bokashi", hits, 2, 5)).toEqual(expect.arrayContaining(["leachate", "inoculated"]));
    for (const fb of [{ docs: 2, terms: 5, weight: 0.5, withQuery: true }, { docs: 2, terms: 5, weight: 0.5, withQuery: true, weighted: true }]) {
      const ranked = withTermFeedback(db, "bokashi", hits, fb, 100).map((h) => h.noteId);
      // Found, below the two notes that hold the query's word.
      expect(ranked.indexOf(pickled)).toBe(2);
      expect(ranked.slice(0, 2).sort()).toEqual([id(paths[0]!), id(paths[1]!)].sort());
    }
    for (const r of MODEL_RANKING) expect(r.params.termFeedback).toBeNull();
  } finally {
    for (const p of paths) rmSync(join(s.root, p), { force: true });
    await s.vault.indexer.update(paths);
  }
});

test("the ranking per embedding model is a table with a reason for each row, and env overrides it", () => {
  expect(MODEL_RANKING.map((r) => r.name)).toEqual(["builtin", "nomic-embed-text", "mxbai-embed-large", "bge-m3", "other"]);
  for (const r of MODEL_RANKING) expect(r.reason.length).toBeGreaterThan(40);
  expect(rankingFor("builtin").k).toBe(MODEL_RANKING[0]!.params.k);
  expect(rankingFor("ollama", "nomic-embed-text:latest")).toEqual(MODEL_RANKING[1]!.params);
  expect(rankingFor("openai", "mxbai-embed-large")).toEqual(MODEL_RANKING[2]!.params);
  expect(rankingFor("ollama", "bge-m3")).toEqual(MODEL_RANKING[3]!.params);
  expect(rankingFor("openai", "text-embedding-3-small")).toEqual(MODEL_RANKING[4]!.params);
  const old = { k: process.env.LETTUCE_RRF_K, f: process.env.LETTUCE_HYBRID_FUSION };
  process.env.LETTUCE_RRF_K = "7";
  process.env.LETTUCE_HYBRID_FUSION = "convex";
  try {
    expect(rankingFor("builtin")).toMatchObject({ k: 7, fusion: "convex" });
  } finally {
    if (old.k === undefined) delete process.env.LETTUCE_RRF_K;
    else process.env.LETTUCE_RRF_K = old.k;
    if (old.f === undefined) delete process.env.LETTUCE_HYBRID_FUSION;
    else process.env.LETTUCE_HYBRID_FUSION = old.f;
  }
});

test("hostile queries: FTS syntax, only function words, huge or odd input never crash or stall", async () => {
  const hostile = ['"unbalanced', "title:x OR body:y", "NEAR(a b) ^c *", "the of and to", "🥬🥬🥬", "a".repeat(2000), "'; DROP TABLE notes; --", "\u0000\u0007", "(((((", "-", "lettuce* AND NOT"];
  for (const query of hostile) {
    const r = await s.callRaw("semantic_search", { query, hybrid: true, limit: 5 });
    expect(r.isError ?? false).toBe(false);
    const body = JSON.parse(r.content[0].text);
    expect(Array.isArray(body.items)).toBe(true);
  }
  // The vault is intact.
  expect((s.vault.indexDb.query("SELECT count(*) AS n FROM notes").get() as { n: number }).n).toBeGreaterThan(10);
  // An empty query is refused as invalid arguments (a protocol error), not a crash.
  await expect(s.callRaw("semantic_search", { query: "", hybrid: true })).rejects.toThrow(/-32602/);
});
