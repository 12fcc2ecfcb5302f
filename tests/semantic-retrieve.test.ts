// retrieve(): the one ranking behind semantic_search, answer and prepare_context.
// Keyword mode (no embeddings provider) must still hand back passages that know
// their heading and ordinal; auto mode falls back to it and says why.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { retrieve } from "../lib/semantic/retrieve";
import { SemanticService } from "../lib/semantic/service";
import { withEnv } from "./helpers/env";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

test("keyword mode: notes ranked by BM25, each with its best passage, heading and ordinal from the file", async () => {
  const r = await withEnv({ LETTUCE_EMBED_PROVIDER: "none", LETTUCE_LLM_PROVIDER: "none" }, () =>
    retrieve(SemanticService.for(s.vault), { query: "when is the last frost date", limit: 3, passagesPerNote: 2 }),
  );
  expect(r.mode).toBe("keyword");
  expect(r.fallback).toContain("LETTUCE_EMBED_PROVIDER=none");
  expect(r.notes[0]!.path).toBe("Garden/Frost Dates.md");
  const text = readFileSync(join(s.root, "Garden/Frost Dates.md"), "utf8");
  const headings = [...text.matchAll(/^#+\s+(.*)$/gm)].map((m) => m[1]!.trim());
  for (const p of r.notes[0]!.passages) {
    expect(p.heading === "" || headings.includes(p.heading)).toBe(true);
    expect(p.ord).toBeGreaterThanOrEqual(0);
    expect(p.text.toLowerCase()).toMatch(/frost/);
  }
  expect(r.notes[0]!.passages.length).toBeGreaterThan(0);
  expect(r.notes.length).toBeLessThanOrEqual(3);
  expect(r.total).toBeGreaterThanOrEqual(r.notes.length);
});

test("paging: offset skips the notes a first page returned", async () => {
  await withEnv({ LETTUCE_EMBED_PROVIDER: "none", LETTUCE_LLM_PROVIDER: "none" }, async () => {
    const svc = SemanticService.for(s.vault);
    const all = await retrieve(svc, { query: "lettuce garden", limit: 6, mode: "keyword" });
    const second = await retrieve(svc, { query: "lettuce garden", limit: 3, offset: 3, mode: "keyword" });
    expect(second.notes.map((n) => n.path)).toEqual(all.notes.slice(3, 6).map((n) => n.path));
  });
});
