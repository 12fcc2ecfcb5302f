// The semantic review of 2026-12-07, through the real server where it can be:
// - paging on with `offset` through hybrid semantic_search and related_notes among many notes of equal score
//   skipped some and repeated others (the candidate lists were drawn deeper for a later page, ties unordered);
// - a model's reply: a 5 MB quote, 30,000 quotes, an answer of megabytes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MAX_ANSWER_CHARS, readAnswer } from "../lib/answer/answer";
import { validateAnswer } from "../lib/answer/validate";
import { startModelServer, type ModelServer } from "./helpers/model-server";
import { copyVault, startTestServer, type TestServer } from "./helpers/server";

/** Every page of `limit` until an empty one: the paths, in order. */
async function pageThrough(s: TestServer, tool: string, args: Record<string, unknown>, limit: number) {
  const seen: string[] = [];
  let total = 0;
  for (let offset = 0; offset < 1000; offset += limit) {
    const r = await s.call(tool, { ...args, limit, offset });
    total = r.total;
    if (!r.items.length) break;
    seen.push(...r.items.map((i: { path: string }) => i.path));
  }
  return { seen, total };
}

describe("paging through rankings of tied notes", () => {
  let model: ModelServer;
  let s: TestServer;
  let root = "";
  const saved: Record<string, string | undefined> = {};
  beforeAll(async () => {
    model = startModelServer({ dim: 64 });
    const env = { LETTUCE_EMBED_PROVIDER: "openai", LETTUCE_EMBED_BASE_URL: model.url, LETTUCE_EMBED_MODEL: "hash-embed", LETTUCE_LLM_PROVIDER: "none" };
    for (const [k, v] of Object.entries(env)) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
    root = copyVault();
    for (let i = 0; i < 200; i++) writeFileSync(join(root, `Inbox/t${String(i).padStart(4, "0")}.md`), "zebra quokka meadow\n");
    s = await startTestServer({ root });
    await s.call("reindex_embeddings");
  }, 120_000);
  afterAll(async () => {
    await s?.close();
    await model?.stop();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(root, { recursive: true, force: true });
  });

  test("hybrid semantic_search: pages are disjoint and add up to total", async () => {
    const { seen, total } = await pageThrough(s, "semantic_search", { query: "zebra quokka meadow", hybrid: true }, 7);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBe(total);
  }, 60_000);

  test("related_notes: pages are disjoint and add up to total", async () => {
    const { seen, total } = await pageThrough(s, "related_notes", { path: "Inbox/t0000.md" }, 7);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBe(total);
  }, 60_000);
});

describe("a model's reply", () => {
  const pages = [{ path: "Garden/Frost.md", title: "Frost", passages: [{ ord: 0, heading: "", text: "The last frost date decides when to plant." }] }];

  test("a quote of megabytes and thousands of quotes are dropped without folding each", () => {
    const quotes = [{ path: "Garden/Frost.md", quote: "frost ".repeat(1_000_000) }, ...Array.from({ length: 30_000 }, () => ({ path: "Garden/Frost.md", quote: "x".repeat(960) }))];
    const t0 = performance.now();
    const v = validateAnswer(pages, [], quotes);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(v.dropped.quotes).toBe(quotes.length);
    expect(validateAnswer(pages, [], [{ path: "Garden/Frost.md", quote: "last frost date" }]).quotedSpans).toHaveLength(1);
  });

  test("an answer far past what was asked for is cut", () => {
    const r = readAnswer({ answer: "word ".repeat(1_000_000), citations: [], quotes: [] })!;
    expect(r.answer.length).toBeLessThanOrEqual(MAX_ANSWER_CHARS + 1);
  });
});
