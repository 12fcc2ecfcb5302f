// Items 1–3 of the hardening issue: a single request must not stall the
// server. The query language has a budget (too many terms, or a query too
// long: query-too-complex; one- and two-letter words match exactly instead of
// expanding as prefixes); snippets come from a bounded window, so a note of
// any size answers; link graphs are capped; every read has a time budget
// (kind timeout); and the heavy reads run off the event loop, so a ping sent
// meanwhile is answered first. (Batches: tests/hardening-jsonrpc.test.ts.
// Pause figures on obsidian-hub: bench/abuse.ts — tests assert no timings.)
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MAX_QUERY_CHARS, MAX_QUERY_TERMS } from "../lib/retrieval/fts-query";
import { MAX_GRAPH_EDGES, MAX_GRAPH_NODES } from "../lib/retrieval/graph";
import { MAX_BATCH, MAX_BATCH_ANSWER_BYTES } from "../lib/server/jsonrpc";
import { SNIPPET_CHARS } from "../lib/retrieval/snippet";
import { maxNoteBytes } from "../lib/write/limits";
import { withEnv } from "./helpers/env";
import { startTestServer, type TestServer } from "./helpers/server";

const WORDS = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua".split(" ");
function prose(bytes: number, extra = ""): string {
  const parts: string[] = ["# Big\n\n"];
  let n = 7;
  for (let i = 0; n < bytes; i++) {
    const line = `${WORDS[(i * 7) % WORDS.length]} ${WORDS[(i * 3) % WORDS.length]} ${WORDS[i % WORDS.length]} ${i % 50 === 0 ? "\n" : ""}`;
    parts.push(line);
    n += line.length;
  }
  return parts.join("") + extra;
}

const HUB_FANS = 2600;

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  mkdirSync(join(s.root, "Letters"));
  writeFileSync(join(s.root, "Letters/single.md"), "# Single\n\nThe letter q stands alone here.\n");
  writeFileSync(join(s.root, "Letters/word.md"), "# Word\n\nA quokka waves.\n");
  // A dense neighbourhood: one hub note linked from thousands of notes, each also linking to the next.
  mkdirSync(join(s.root, "Dense"));
  writeFileSync(join(s.root, "Dense/Hub.md"), "# Hub\n");
  for (let i = 0; i < HUB_FANS; i++) writeFileSync(join(s.root, `Dense/fan-${i}.md`), `# Fan ${i}\n\n[[Hub]] [[fan-${(i + 1) % HUB_FANS}]]\n`);
  await s.vault.indexer.fullScan();
});
afterAll(() => s?.close());

const ping = async () => (await (await s.rpc({ jsonrpc: "2.0", id: "ping", method: "ping" })).json()) as any;

describe("the query language has a budget (item 1)", () => {
  test("500 single letters OR'ed, or 200 in 400 characters, is query-too-complex at once", async () => {
    const letters = (n: number) => Array.from({ length: n }, (_, i) => "abcdefghijklmnopqrstuvwxyz"[i % 26]).join(" OR ");
    for (const query of [letters(500), letters(200), Array.from({ length: MAX_QUERY_TERMS + 1 }, (_, i) => `word${i}`).join(" "), "x".repeat(MAX_QUERY_CHARS + 1)]) {
      const res: any = await s.callRaw("search", { query }, "read");
      expect(res, query.slice(0, 40)).toMatchObject({ isError: true, kind: "query-too-complex" });
      expect(JSON.parse(res.content[0].text)).toMatchObject({ maxTerms: MAX_QUERY_TERMS, maxChars: MAX_QUERY_CHARS });
    }
    expect(await ping()).toMatchObject({ result: {} });
  });

  test(`${MAX_QUERY_TERMS} terms are fine; words under 3 letters match exactly, longer ones as prefixes`, async () => {
    const many = Array.from({ length: MAX_QUERY_TERMS }, (_, i) => "abcdefghijklmnopqrstuvwxyz"[i % 26]).join(" OR ");
    expect((await s.call("search", { query: many }, "read")).total).toBeGreaterThan(0);
    const paths = async (query: string) => (await s.call("search", { query }, "read")).items.map((i: any) => i.path).sort();
    expect(await paths("q")).toEqual(["Letters/single.md"]);
    expect(await paths("q*")).toEqual(["Letters/single.md"]);
    expect(await paths("quo")).toEqual(["Letters/word.md"]);
    expect(await paths('"q stands"')).toEqual(["Letters/single.md"]);
  });
});

describe("snippets come from a bounded window (item 2)", () => {
  test("a 2 MiB note written by an agent: search for one of its words answers with a short snippet", async () => {
    const content = prose(maxNoteBytes() - 1000, "\nzanzibarmarker at the very end\n");
    expect(Buffer.byteLength(content)).toBeLessThanOrEqual(maxNoteBytes());
    await s.call("write_note", { path: "Big/agent.md", content });
    const r = await s.call("search", { query: "lorem" }, "read");
    const hit = r.items.find((i: any) => i.path === "Big/agent.md");
    expect(hit).toBeDefined();
    expect(hit.snippet.length).toBeLessThanOrEqual(SNIPPET_CHARS + 45);
    expect(hit.snippet.toLowerCase()).toContain("lorem");
    // A word only past the snippet window still finds the note; the snippet is then its opening.
    const end = await s.call("search", { query: "zanzibarmarker" }, "read");
    expect(end.items.map((i: any) => i.path)).toEqual(["Big/agent.md"]);
    expect(end.items[0].snippet.startsWith("# Big")).toBe(true);
  });

  test("a 12 MB note a person saved: search answers, and a ping sent meanwhile is answered first", async () => {
    writeFileSync(join(s.root, "Big/person.md"), prose(12 * 1024 * 1024));
    await s.vault.indexer.update(["Big/person.md"]);
    const order: string[] = [];
    const search = s.call("search", { query: "lorem ipsum", limit: 5 }, "read").then((r) => {
      order.push("search");
      return r;
    });
    await Bun.sleep(2);
    const p = ping().then((r) => {
      order.push("ping");
      return r;
    });
    const [r, pr] = await Promise.all([search, p]);
    expect(pr.result).toEqual({});
    expect(order).toEqual(["ping", "search"]);
    const hit = r.items.find((i: any) => i.path === "Big/person.md");
    expect(hit?.snippet.length).toBeLessThanOrEqual(SNIPPET_CHARS + 45);
  });
});

describe("graphs are capped (item 3)", () => {
  test(`link_graph of a hub with ${HUB_FANS} neighbours, depth 5, maxNodes 10000: at most ${MAX_GRAPH_NODES} nodes and ${MAX_GRAPH_EDGES} edges`, async () => {
    const g = await s.call("link_graph", { path: "Dense/Hub.md", depth: 5, maxNodes: 10000 }, "read");
    expect(g.truncated).toBe(true);
    expect(g.nodes.length).toBe(MAX_GRAPH_NODES);
    expect(g.edges.length).toBeLessThanOrEqual(MAX_GRAPH_EDGES);
    const nodes = new Set(g.nodes.map((n: any) => n.path));
    for (const e of g.edges) expect(nodes.has(e.from) && nodes.has(e.to)).toBe(true);
    // Small requests are untouched.
    const small = await s.call("link_graph", { path: "Dense/fan-1.md", depth: 1 }, "read");
    expect(small.nodes.map((n: any) => n.path).sort()).toEqual(["Dense/Hub.md", "Dense/fan-0.md", "Dense/fan-1.md", "Dense/fan-2.md"]);
    expect(small.truncated).toBeUndefined();
  });
});

describe("batches are bounded (item 3)", () => {
  test(`a batch stops running items once its answers pass ${MAX_BATCH_ANSWER_BYTES} bytes; the rest are answered "not run"`, async () => {
    const calls = Array.from({ length: MAX_BATCH }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "link_graph", arguments: { path: "Dense/Hub.md", depth: 5, maxNodes: 10000 } } }));
    const res = await s.rpc(calls);
    expect(res.status).toBe(200);
    const out = (await res.json()) as any[];
    expect(out.map((r) => r.id)).toEqual(calls.map((c) => c.id));
    const ran = out.filter((r) => r.result);
    const skipped = out.filter((r) => r.error);
    expect(ran.length).toBeGreaterThan(0);
    expect(skipped.length).toBeGreaterThan(0);
    for (const r of skipped) expect(r.error).toMatchObject({ code: -32600, message: expect.stringMatching(/Not run/) });
    // Everything before the cap ran, nothing after it: the run ones come first.
    expect(out.findIndex((r) => r.error)).toBe(ran.length);
    // Counted as sent: each answer's text as the JSON string in the response, escapes and all.
    const sent = (r: any) => JSON.stringify(r.result.content[0].text).length;
    const bytes = ran.reduce((n, r) => n + sent(r), 0);
    expect(bytes).toBeGreaterThan(MAX_BATCH_ANSWER_BYTES);
    expect(bytes - sent(ran[ran.length - 1])).toBeLessThanOrEqual(MAX_BATCH_ANSWER_BYTES);
  });
});

describe("every read has a time budget", () => {
  test("a read past its budget answers kind timeout; writes are never cut short; the server carries on", async () => {
    await withEnv({ LETTUCE_REQUEST_TIMEOUT_MS: "1" }, async () => {
      for (const [tool, args] of [
        ["link_graph", { path: "Dense/Hub.md", depth: 5, maxNodes: 10000 }],
        ["lint", {}],
      ] as const) {
        const res: any = await s.callRaw(tool, args, "read");
        expect(res, tool).toMatchObject({ isError: true, kind: "timeout" });
        expect(JSON.parse(res.content[0].text).error).toMatch(/time budget/);
        // Only a long-poll's own timeout_ms lengthens its budget: on any other tool the field
        // (dropped by its schema) once stretched the budget by up to two minutes.
        const stretched: any = await s.callRaw(tool, { ...args, timeout_ms: 60_000 }, "read");
        expect(stretched, `${tool} with timeout_ms`).toMatchObject({ isError: true, kind: "timeout" });
      }
      const w = await s.call("write_note", { path: "Inbox/under-budget.md", content: "# Written\n" });
      expect(w.created).toBe(true);
    });
    expect(await ping()).toMatchObject({ result: {} });
    expect((await s.call("link_graph", { path: "Dense/fan-1.md" }, "read")).nodes.length).toBe(4);
    expect((await s.call("search", { query: "quokka" }, "read")).total).toBe(1);
  });
});
