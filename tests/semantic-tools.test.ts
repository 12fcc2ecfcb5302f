// The semantic tools through the real server and the SDK client, with the
// real built-in model on a copy of examples/vault.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SemanticService } from "../lib/semantic/service";
import { getMeta } from "../lib/store/index-db";
import { withEnv } from "./helpers/env";
import { startModelServer, type ModelServer } from "./helpers/model-server";
import { copyVault, startTestServer, waitFor, type TestServer } from "./helpers/server";
import { runLettuce } from "./helpers/cli";
import { Database } from "bun:sqlite";


// The built-in model, whatever the machine running the tests has installed.
const BUILTIN = { LETTUCE_EMBED_PROVIDER: "builtin", LETTUCE_LLM_PROVIDER: "none" };

let s: TestServer;
beforeAll(async () => {
  s = await withEnv(BUILTIN, () => startTestServer());
});
afterAll(() => s.close());

test("get_vault_info tells the truth about embeddings before and after the first semantic call", async () => {
  await withEnv(BUILTIN, async () => {
    const before = await s.call("get_vault_info");
    expect(before.capabilities.embeddings).toBe(true);
    expect(before.capabilities.llm).toBe(false);
    expect(before.liveness.embeddingIndexStale).toBe(true);
    // The first embedding runs in this process: on a loaded machine the built-in model can take
    // longer than one MCP request may wait. reindex_embeddings' own report is checked below.
    const r = await SemanticService.for(s.vault).reindex();
    expect(r.notes).toBe(before.noteCount);
    expect(r.passages).toBeGreaterThanOrEqual(r.notes - 2);
    expect(r.embedded).toBeGreaterThan(0);
    const after = await s.call("get_vault_info");
    expect(after.liveness.embeddingIndexStale).toBe(false);
    // Nothing changed: a second reconcile embeds nothing.
    expect(await s.call("reindex_embeddings")).toMatchObject({ notes: 0, passages: 0, embedded: 0 });
    expect(getMeta(s.vault.indexDb, "embed_model")).toBe("builtin:universal-sentence-encoder-lite");
    expect(getMeta(s.vault.indexDb, "embed_dim")).toBe("512");
  });
}, 120_000);

test("semantic_search ranks by meaning, with the best passage as snippet", async () => {
  await withEnv(BUILTIN, async () => {
    const res = await s.call("semantic_search", { query: "when is the last frost in spring", limit: 5 });
    expect(res).toMatchObject({ offset: 0, limit: 5 });
    expect(res.items).toHaveLength(5);
    expect(res.items[0].path).toBe("Garden/Frost Dates.md");
    expect(res.items[0].snippet).toContain("frost");
    for (const h of res.items) {
      expect(Object.keys(h).sort()).toEqual(["path", "score", "snippet", "title"]);
      expect(h.score).toBeGreaterThan(-1);
      expect(h.score).toBeLessThanOrEqual(1);
    }
    const scores = res.items.map((h: { score: number }) => h.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    // A question with no keyword in common with the answer.
    const meaning = await s.call("semantic_search", { query: "soup recipe with potatoes", limit: 3 });
    expect(meaning.items.map((h: { path: string }) => h.path)).toContain("Recipes/Lettuce Soup.md");
    // Paging continues where the first page ended.
    const page2 = await s.call("semantic_search", { query: "when is the last frost in spring", limit: 2, offset: 2 });
    expect(page2.items.map((h: { path: string }) => h.path)).toEqual(res.items.slice(2, 4).map((h: { path: string }) => h.path));
  });
}, 120_000);

test("hybrid fuses keyword and vector rankings; prefer_recent favours fresh notes", async () => {
  await withEnv(BUILTIN, async () => {
    const h = await s.call("semantic_search", { query: "Menemen eggs tomato", hybrid: true, limit: 5 });
    expect(h.items[0].path).toBe("Recipes/Menemen.md");
    // After the second stage the top note scores its fused score scaled to 1, plus at most
    // 0.3 + 0.1 + 0.1 for the query's words in its title, a heading and one stretch of text.
    expect(h.items[0].score).toBeGreaterThanOrEqual(1);
    expect(h.items[0].score).toBeLessThanOrEqual(1.5);
    expect(h.items[1].score).toBeLessThan(h.items[0].score);
    // The opt-in convex fusion: (1 - w) * BM25 / best BM25 + w * cosine / best cosine, then the same second stage.
    await withEnv({ LETTUCE_HYBRID_FUSION: "convex" }, async () => {
      const c = await s.call("semantic_search", { query: "Menemen eggs tomato", hybrid: true, limit: 5 });
      expect(c.items[0].path).toBe("Recipes/Menemen.md");
      expect(c.items[0].score).toBeGreaterThanOrEqual(1);
      expect(c.items[0].score).toBeLessThanOrEqual(1.5);
    });
    // Make one of two similar notes old: prefer_recent must move the fresh one up relative to it.
    const plain = await s.call("semantic_search", { query: "lettuce growing", limit: 10 });
    const paths = plain.items.map((i: { path: string }) => i.path);
    const top = paths[0];
    const old = new Date(Date.now() - 400 * 86_400_000);
    utimesSync(join(s.root, top), old, old);
    await s.vault.indexer.update([top]);
    const recent = await s.call("semantic_search", { query: "lettuce growing", limit: 10, prefer_recent: true });
    const rp = recent.items.map((i: { path: string }) => i.path);
    expect(rp.indexOf(top)).toBeGreaterThan(0);
  });
}, 120_000);

test("a changed, new or deleted note is reflected by the next semantic call without a reindex", async () => {
  await withEnv(BUILTIN, async () => {
    const file = join(s.root, "Garden/Beekeeping.md");
    writeFileSync(file, "# Beekeeping\n\nThe hive swarmed in June; the queen left with half the colony and settled in the apple tree.\n");
    await s.vault.indexer.update(["Garden/Beekeeping.md"]);
    const found = await s.call("semantic_search", { query: "honey bees swarming from the hive", limit: 3 });
    expect(found.items[0].path).toBe("Garden/Beekeeping.md");
    writeFileSync(file, "# Beekeeping\n\nSold the hives. Now I keep chickens: six hens laying eggs in the coop.\n");
    await s.vault.indexer.update(["Garden/Beekeeping.md"]);
    const changed = await s.call("semantic_search", { query: "hens laying eggs in a coop", limit: 3 });
    expect(changed.items[0].path).toBe("Garden/Beekeeping.md");
    expect(changed.items[0].snippet).toContain("chickens");
    unlinkSync(file);
    await s.vault.indexer.update(["Garden/Beekeeping.md"]);
    const gone = await s.call("semantic_search", { query: "hens laying eggs in a coop", limit: 25 });
    expect(gone.items.map((h: { path: string }) => h.path)).not.toContain("Garden/Beekeeping.md");
    expect((await s.call("get_vault_info")).liveness.embeddingIndexStale).toBe(false);
  });
}, 120_000);

test("related_notes leaves out the note itself and every note linked with it", async () => {
  await withEnv(BUILTIN, async () => {
    const r = await s.call("related_notes", { path: "Recipes/Caesar Salad.md", limit: 5 });
    const paths = r.items.map((h: { path: string }) => h.path);
    expect(paths).toHaveLength(5);
    expect(paths).not.toContain("Recipes/Caesar Salad.md");
    expect(paths).not.toContain("Garden/Lettuce Varieties.md"); // linked from it
    expect(paths).not.toContain("index.md"); // links to it
    expect(paths).toContain("Recipes/Lettuce Soup.md");
    expect(r.items[0].snippet.length).toBeGreaterThan(0);
    const missing = await s.callRaw("related_notes", { path: "Nope.md" });
    expect(missing.kind).toBe("note-not-found");
  });
}, 120_000);

test("find_duplicates finds a near-copy first; topic_map groups and flags hubs", async () => {
  await withEnv(BUILTIN, async () => {
    const src = readFileSync(join(s.root, "Recipes/Menemen.md"), "utf8");
    writeFileSync(join(s.root, "Recipes/Menemen copy.md"), src.replace("Method", "How to make it"));
    await s.vault.indexer.update(["Recipes/Menemen copy.md"]);
    const pairs = await s.call("find_duplicates", {});
    expect(pairs.length).toBeGreaterThan(0);
    expect([pairs[0].pathA, pairs[0].pathB].sort()).toEqual(["Recipes/Menemen copy.md", "Recipes/Menemen.md"]);
    expect(pairs[0].similarity).toBeGreaterThan(0.95);
    for (const p of pairs) expect(p.similarity).toBeGreaterThanOrEqual(0.9);
    // On the calibrated scale unrelated notes sit around 0: a low threshold reports many more pairs.
    const loose = await s.call("find_duplicates", { threshold: 0.1 });
    expect(loose.length).toBeGreaterThan(pairs.length);
    const bad = await s.rpc({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "find_duplicates", arguments: { threshold: 2 } } });
    expect(((await bad.json()) as { error: { code: number } }).error.code).toBe(-32602);

    const map = await s.call("topic_map", { threshold: 0.6, max_notes: 1000, limit: 500 });
    expect(map.clusters.length).toBeGreaterThan(0);
    expect(map.total).toBe(map.clusters.length);
    for (const c of map.clusters) {
      expect(Object.keys(c).sort()).toEqual(["hasHub", "notes", "sharedTags", "size"]);
      expect(c.size).toBe(c.notes.length);
      expect(c.size).toBeGreaterThanOrEqual(2);
    }
    // Paged: one cluster at a time, a capped member list that says so; size still counts every member.
    const small = await s.call("topic_map", { threshold: 0.6, limit: 1, max_notes: 1 });
    expect(small.clusters).toHaveLength(1);
    expect(small.total).toBe(map.total);
    expect(small.clusters[0]).toMatchObject({ size: map.clusters[0].size, notes: [map.clusters[0].notes[0]], notesTruncated: true });
    expect(small.truncated).toBe(true);
    const withCopy = map.clusters.find((c: { notes: string[] }) => c.notes.includes("Recipes/Menemen copy.md"));
    expect(withCopy.notes).toContain("Recipes/Menemen.md");
    expect(map.missingHubs.every((c: { hasHub: boolean }) => !c.hasHub)).toBe(true);
    unlinkSync(join(s.root, "Recipes/Menemen copy.md"));
    await s.vault.indexer.update(["Recipes/Menemen copy.md"]);
  });
}, 120_000);

test("eval scores retrieval from eval/questions.jsonl; a missing or broken file is a clear error", async () => {
  await withEnv(BUILTIN, async () => {
    const missing = await s.callRaw("eval", {});
    expect(missing.isError).toBe(true);
    expect(missing.kind).toBe("note-not-found");
    expect(missing.content[0].text).toContain("eval/questions.jsonl");
    mkdirSync(join(s.root, "eval"), { recursive: true });
    const qs = [
      { question: "when is the last frost?", expected_paths: ["Garden/Frost Dates.md"], must_contain: ["April"] },
      { question: "how do I make menemen", expected_paths: ["Recipes/Menemen"] },
      { question: "what is the model context protocol", expected_paths: ["Concepts/Model Context Protocol.md"] },
    ];
    writeFileSync(join(s.root, "eval/questions.jsonl"), qs.map((q) => JSON.stringify(q)).join("\n") + "\n");
    const r = await s.call("eval", { k: 3 });
    expect(r).toMatchObject({ k: 3, count: 3, faithfulnessRate: null });
    expect(r.hitRate).toBe(1);
    expect(r.recallAtK).toBe(1);
    expect(r.mrr).toBeGreaterThan(0.5);
    expect(r.precisionAtK).toBeCloseTo(1 / 3, 2);
    expect(r.perQuestion[1].retrieved).toContain("Recipes/Menemen.md");
    writeFileSync(join(s.root, "eval/questions.jsonl"), "{not json\n");
    const broken = await s.callRaw("eval", {});
    expect(broken.kind).toBe("invalid-input");
    expect(broken.content[0].text).toContain("line 1");
    rmSync(join(s.root, "eval"), { recursive: true });
  });
}, 120_000);

test("without a provider: not-configured errors and capabilities say so; expand needs an LLM", async () => {
  await withEnv({ LETTUCE_EMBED_PROVIDER: "none", LETTUCE_LLM_PROVIDER: "none" }, async () => {
    const info = await s.call("get_vault_info");
    expect(info.capabilities.embeddings).toBe(false);
    expect(info.liveness.embeddingIndexStale).toBe(false);
    for (const [name, args] of [
      ["semantic_search", { query: "frost" }],
      ["related_notes", { path: "Garden/Frost Dates.md" }],
      ["find_duplicates", {}],
      ["topic_map", {}],
      ["reindex_embeddings", {}],
    ] as const) {
      const r = await s.callRaw(name, args);
      expect(r.isError).toBe(true);
      expect(r.kind).toBe("not-configured");
      expect(r.content[0].text).toContain("LETTUCE_EMBED_PROVIDER=none");
    }
  });
  await withEnv(BUILTIN, async () => {
    const r = await s.callRaw("semantic_search", { query: "frost", expand: true });
    expect(r.kind).toBe("not-configured");
    expect(r.content[0].text).toContain("No LLM provider");
  });
}, 60_000);

test("expand asks the chat provider for a hypothetical answer and paraphrases", async () => {
  const llm: ModelServer = startModelServer();
  llm.state.chatReply = () =>
    '```json\n{"hypothetical": "Lettuce can go out under fleece two weeks before the last frost in April.", "paraphrases": ["last frost date", "planting out after frost"]}\n```';
  try {
    await withEnv({ ...BUILTIN, LETTUCE_LLM_PROVIDER: "openai", LETTUCE_LLM_BASE_URL: llm.url, LETTUCE_LLM_MODEL: "tiny" }, async () => {
      const r = await s.call("semantic_search", { query: "frost", expand: true, hybrid: true, limit: 3 });
      expect(r.items[0].path).toBe("Garden/Frost Dates.md");
      const chat = llm.state.requests.find((q) => q.path === "/v1/chat/completions");
      expect(chat?.body.messages.at(-1).content).toBe("frost");
      expect((await s.call("get_vault_info")).capabilities.llm).toBe(true);
    });
  } finally {
    await llm.stop();
  }
}, 60_000);

test("eval with an LLM scores faithfulness: cites only retrieved notes and says every must_contain span", async () => {
  const llm: ModelServer = startModelServer();
  llm.state.chatReply = (messages) => {
    const q = messages.at(-1)!.content;
    if (q.includes("last frost")) return JSON.stringify({ answer: "Usually mid-April.", citations: ["Garden/Frost Dates.md"] });
    return JSON.stringify({ answer: "Eggs and tomatoes.", citations: ["Nowhere/Invented.md"] });
  };
  mkdirSync(join(s.root, "eval"), { recursive: true });
  const qs = [
    { question: "when is the last frost?", expected_paths: ["Garden/Frost Dates.md"], must_contain: ["mid-April"] },
    { question: "what is in menemen", expected_paths: ["Recipes/Menemen.md"], must_contain: ["eggs"] },
  ];
  writeFileSync(join(s.root, "eval/questions.jsonl"), qs.map((q) => JSON.stringify(q)).join("\n"));
  try {
    await withEnv({ ...BUILTIN, LETTUCE_LLM_PROVIDER: "openai", LETTUCE_LLM_BASE_URL: llm.url, LETTUCE_LLM_MODEL: "judge" }, async () => {
      const r = await s.call("eval", { k: 3 });
      expect(r.faithfulnessRate).toBe(0.5);
      expect(r.perQuestion.map((q: { faithful: boolean }) => q.faithful)).toEqual([true, false]);
      // The model was shown the retrieved notes' text.
      const asked = llm.state.requests.filter((q) => q.path === "/v1/chat/completions").map((q) => q.body.messages.at(-1).content);
      expect(asked[0]).toContain("path: Garden/Frost Dates.md");
    });
  } finally {
    rmSync(join(s.root, "eval"), { recursive: true, force: true });
    await llm.stop();
  }
}, 60_000);

test("model-spending tools are rate-limited per token with retry_after_ms", async () => {
  const t = await withEnv({ ...BUILTIN, LETTUCE_MODEL_RATE_LIMIT: "2" }, async () => {
    const t = await startTestServer();
    SemanticService.for(t.vault); // made now, under this limit
    return t;
  });
  try {
    await withEnv(BUILTIN, async () => {
      await t.call("semantic_search", { query: "frost" }, "read");
      await t.call("semantic_search", { query: "frost" }, "read");
      const limited = await t.callRaw("semantic_search", { query: "frost" }, "read");
      expect(limited.isError).toBe(true);
      expect(limited.kind).toBe("rate-limited");
      expect(limited.data.retry_after_ms).toBeGreaterThan(0);
      expect(limited.data.retry_after_ms).toBeLessThanOrEqual(30_000);
      // Another token has its own allowance; tools that spend nothing are not limited.
      await t.call("semantic_search", { query: "frost" }, "write");
      await t.call("search", { query: "frost" }, "read");
    });
  } finally {
    await t.close();
  }
}, 120_000);

test("reindex_embeddings answers within its wait: a longer pass goes on in the background, partial: true with progress", async () => {
  const t = await withEnv(BUILTIN, () => startTestServer());
  try {
    await withEnv({ ...BUILTIN, LETTUCE_REINDEX_WAIT_MS: "1" }, async () => {
      const r = await t.call("reindex_embeddings");
      expect(r.partial).toBe(true);
      expect(r.progress.notesTotal).toBe((await t.call("get_vault_info")).noteCount);
      expect(typeof r.notes).toBe("number");
      expect(typeof r.passages).toBe("number");
    });
    await withEnv(BUILTIN, async () => {
      await waitFor(async () => (await t.call("get_vault_info")).embedding?.state === "current", { timeoutMs: 120_000, what: "the pass to finish" });
      const again = await t.call("reindex_embeddings");
      expect(again.partial).toBeUndefined();
      expect(again).toMatchObject({ notes: 0, passages: 0 });
    });
  } finally {
    await t.close();
  }
}, 180_000);

test("lettuce eval says what is wrong with the question file before it embeds the vault", async () => {
  const root = copyVault();
  try {
    const missing = await runLettuce(["eval", root], { env: BUILTIN, timeoutMs: 60_000 });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("No eval/questions.jsonl");
    mkdirSync(join(root, "eval"));
    writeFileSync(join(root, "eval/questions.jsonl"), '{"question": "frost dates", "expected_paths": ["Garden/Frost Dates.md"]}\nnot json\n');
    const broken = await runLettuce(["eval", root, "--json"], { env: BUILTIN, timeoutMs: 60_000 });
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain("line 2 is not JSON");
    // Neither run embedded a note (on a large vault that is minutes before the message).
    const db = new Database(join(root, ".lettuce/index.db"), { readonly: true });
    try {
      expect((db.query("SELECT count(*) AS n FROM embed_notes").get() as { n: number }).n).toBe(0);
    } finally {
      db.close();
    }
    writeFileSync(join(root, "eval/questions.jsonl"), '{"question": "when is the last frost", "expected_paths": ["Garden/Frost Dates.md"]}\n');
    const ok = await runLettuce(["eval", root, "--json"], { env: BUILTIN, timeoutMs: 120_000 });
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ count: 1, retrieval: "hybrid" });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}, 180_000);
