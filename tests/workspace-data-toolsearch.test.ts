// Tool search through the real server: the search_tools MCP tool and
// POST /v1/tools/search, full-text always, vectors from a local model server
// speaking Ollama's wire format, and only the tools the caller's scope may call.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { withEnv } from "./helpers/env";
import { hashEmbed, startModelServer, type ModelServer } from "./helpers/model-server";
import { startTestServer, type TestServer } from "./helpers/server";

const NONE = { LETTUCE_EMBED_PROVIDER: "none" };
let s: TestServer;
let models: ModelServer;
let OLLAMA: Record<string, string>;

beforeAll(async () => {
  s = await startTestServer();
  models = startModelServer();
  OLLAMA = { LETTUCE_EMBED_PROVIDER: "ollama", OLLAMA_HOST: models.url };
});
afterAll(async () => {
  await s?.close();
  await models?.stop();
});

const search = (args: Record<string, unknown>, scope: "read" | "propose" | "write" = "write", env: Record<string, string> = NONE) => withEnv(env, () => s.call("search_tools", args, scope));
const names = (res: any[]) => res.map((r) => r.tool.name);

async function listed(scope: "read" | "propose" | "write"): Promise<string[]> {
  const c = await s.client(scope);
  return (await c.listTools()).tools.map((t) => t.name);
}

describe("search_tools", () => {
  test("plain requests find their tool in the top 3 (full-text alone)", async () => {
    for (const [query, want] of [
      ["who links to this note", "list_backlinks"],
      ["change just one section of a page", "patch_section"],
      ["what changed since yesterday", "get_changes_since"],
      ["what columns does this table have", "get_database_schema"],
    ]) {
      const res = await search({ query, search_mode: "fts", limit: 3 });
      expect(names(res)).toContain(want);
    }
  });

  test("results are shaped as spec/tool-search.md", async () => {
    const [hit] = await search({ query: "rename a note", search_mode: "fts", limit: 1 });
    expect(Object.keys(hit).sort()).toEqual(["combined_score", "embedded_text", "fts_rank", "tool"]);
    expect(hit.fts_rank).toBe(1);
    expect(typeof hit.combined_score).toBe("number");
    expect(hit.tool).toMatchObject({ id: "tool-move_note", name: "move_note", tool_type: "external_mcp", tags: ["write", "writes"] });
    expect(Object.keys(hit.tool.args_json_schema.properties)).toEqual(expect.arrayContaining(["from", "to"]));
    // The schema once (the spec's json_schema is optional and repeated it), compacted as tools/list is: an agent
    // asking "which tool" pays for every byte of every hit.
    expect(hit.tool.json_schema).toBeUndefined();
    expect(JSON.stringify(hit)).not.toContain("9007199254740991");
    const five = await search({ query: "who links to this note", limit: 5 });
    expect(JSON.stringify(five).length).toBeLessThan(5 * 1200);
    // embedded_text is what the vector side embeds: the name, the search hints and the first sentence of the
    // tool's longer account (its details, which tools/list leaves out).
    expect(hit.embedded_text.startsWith("move note. ")).toBe(true);
    expect(hit.embedded_text).toContain("Rename or move a note, and rewrite every [[wikilink]]");
  });

  test("a scope only finds what it may call: the same set as its tools/list", async () => {
    for (const scope of ["read", "propose", "write"] as const) {
      const all = await search({ limit: 100 }, scope);
      expect(names(all).sort()).toEqual((await listed(scope)).sort());
    }
    const readHits = await search({ query: "create a new page, delete a note, edit a section", limit: 100 }, "read");
    const readable = new Set(await listed("read"));
    expect(readHits.length).toBeGreaterThan(0);
    for (const n of names(readHits)) expect(readable.has(n)).toBe(true);
    expect(names(readHits)).not.toContain("write_note");
    // A propose token sees the write tools as proposals.
    const [w] = await search({ query: "write_note", search_mode: "fts", limit: 1 }, "propose");
    expect(w.tool.name).toBe("write_note");
    expect(w.tool.description).toMatch(/propos/i);
  });

  test("tags (any) and tool_types filter", async () => {
    expect(names(await search({ tags: ["databases"], limit: 100 })).sort()).toEqual(["get_database_schema", "query_database"]);
    expect(names(await search({ tags: ["DATABASES", "members"], query: "rows", limit: 100 }))).toContain("query_database");
    expect(await search({ tags: ["writes"], limit: 100 }, "read")).toEqual([]);
    expect(await search({ tool_types: ["custom"], limit: 100 })).toEqual([]);
    expect((await search({ tool_types: ["external_mcp"], limit: 5 })).length).toBe(5);
  });

  test("bad arguments are protocol errors; vector mode needs a provider; hybrid falls back to full-text", async () => {
    for (const args of [{ limit: 0 }, { limit: 101 }, { search_mode: "semantic" }, { tags: "links" }]) {
      const res = await s.rpc({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "search_tools", arguments: args } });
      expect(((await res.json()) as any).error.code).toBe(-32602);
    }
    const vec = await withEnv(NONE, () => s.callRaw("search_tools", { query: "backlinks", search_mode: "vector" }));
    expect(vec.kind).toBe("not-configured");
    // FTS5 syntax in a request is just words (or nothing), never an error.
    for (const query of ['") OR NOT * NEAR(a b) ^col:x', "\u0000\u202e", "the of and to"]) expect(Array.isArray(await search({ query, search_mode: "fts" }))).toBe(true);
    const hybrid = await search({ query: "who links to this note", limit: 5 });
    expect(hybrid.every((r: any) => r.vector_rank === undefined && typeof r.fts_rank === "number")).toBe(true);
  });

  test("vector mode ranks by the provider's embeddings; hybrid fuses both ranks by RRF", async () => {
    const query = "delete remove trash a note";
    const vec = await search({ query, search_mode: "vector", limit: 100 }, "write", OLLAMA);
    // The expected order, computed here from the texts the model server was asked to embed
    // (the Ollama client adds nomic's task prefixes; the catalogue may come in several batches).
    const inputs = models.state.requests.filter((r) => r.path === "/api/embed").flatMap((r) => (Array.isArray(r.body.input) ? r.body.input : [r.body.input]) as string[]);
    const docs = inputs.filter((t) => t.startsWith("search_document: ")).map((t) => t.slice("search_document: ".length));
    const asked = inputs.filter((t) => t.startsWith("search_query: ")).at(-1)!;
    expect(asked).toContain(query);
    const q = hashEmbed(asked, models.state.dim);
    const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);
    const scored = docs.map((d) => ({ name: d.slice(0, d.indexOf(".")).replace(/ /g, "_"), score: dot(hashEmbed(`search_document: ${d}`, models.state.dim), q) }));
    const scoreOf = new Map(scored.map((x) => [x.name, x.score]));
    // The same set, in the order of those scores (near-ties, within float32 rounding, may come either way).
    expect(names(vec).sort()).toEqual(scored.map((x) => x.name).sort());
    const got = names(vec).map((n: string) => scoreOf.get(n)!);
    for (let i = 1; i < got.length; i++) expect(got[i - 1]! - got[i]!).toBeGreaterThan(-1e-5);
    expect(vec.map((r: any) => r.vector_rank)).toEqual(vec.map((_: unknown, i: number) => i + 1));
    expect(vec[0].fts_rank).toBeUndefined();

    const hybrid = await search({ query, search_mode: "hybrid", limit: 20 }, "write", OLLAMA);
    expect(hybrid.some((r: any) => r.fts_rank && r.vector_rank)).toBe(true);
    for (const r of hybrid) {
      const want = (r.fts_rank ? 1 / (60 + r.fts_rank) : 0) + (r.vector_rank ? 1 / (60 + r.vector_rank) : 0);
      expect(r.combined_score).toBeCloseTo(want, 12);
    }
    const scores = hybrid.map((r: any) => r.combined_score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(names(hybrid)[0]).toBe("delete_note");
  });

  test("hybrid answers by full text at once while the catalogue is still being embedded, with vectors after", async () => {
    // A slow model (or the built-in one behind a background pass): hybrid waited for the whole
    // catalogue to be embedded, 22 s, or for ever while requests kept coming.
    const slow = { ...OLLAMA, LETTUCE_EMBED_MODEL: "slow-embedder" };
    models.state.models = [...models.state.models, "slow-embedder:latest"];
    models.state.embedDelayMs = 3000;
    try {
      const t0 = performance.now();
      const first = await search({ query: "delete a note", limit: 5 }, "write", slow);
      expect(performance.now() - t0).toBeLessThan(2500);
      expect(first.every((r: any) => r.vector_rank === undefined && typeof r.fts_rank === "number")).toBe(true);
      expect(names(first)).toContain("delete_note");
      let later: any[] = [];
      for (let i = 0; i < 100 && !later.some((r: any) => r.vector_rank); i++) {
        await Bun.sleep(200);
        later = await search({ query: "delete a note", limit: 5 }, "write", slow);
      }
      expect(later.some((r: any) => r.vector_rank)).toBe(true);
    } finally {
      models.state.embedDelayMs = 0;
    }
  }, 60_000);

  test("the descriptions of this branch's tools stay short (≤ 400 characters)", async () => {
    const c = await s.client("write");
    const tools = (await c.listTools()).tools;
    for (const n of ["search_tools", "get_database_schema", "query_database", "get_changes_since", "list_members", "query_audit_log"]) {
      const t = tools.find((x) => x.name === n)!;
      expect(t.description!.length).toBeLessThanOrEqual(400);
    }
  });
});

describe("POST /v1/tools/search", () => {
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    withEnv(NONE, () =>
      fetch(s.url.replace(/\/mcp$/, "/v1/tools/search"), { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) }),
    );

  test("needs the bearer token: 401 without it or with a wrong one", async () => {
    expect((await post({ query: "links" })).status).toBe(401);
    expect((await post({ query: "links" }, { authorization: "Bearer not-a-token" })).status).toBe(401);
    expect((await post({ query: "links" }, { authorization: "Basic Zm9vOmJhcg==" })).status).toBe(401);
  });

  test("answers the spec's array for the token's scope; bad bodies are 400 with a kind", async () => {
    const res = await post({ query: "who links to this note", search_mode: "fts", limit: 3 }, { authorization: `Bearer ${s.tokens.read}` });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any[];
    expect(Array.isArray(body)).toBe(true);
    expect(body.map((r) => r.tool.name)).toContain("list_backlinks");
    const readAll = (await (await post({ limit: 100 }, { authorization: `Bearer ${s.tokens.read}` })).json()) as any[];
    expect(readAll.map((r) => r.tool.name).sort()).toEqual((await listed("read")).sort());
    const bad = await post("{not json", { authorization: `Bearer ${s.tokens.read}` });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).kind).toBe("invalid-input");
    const range = await post({ limit: 1000 }, { authorization: `Bearer ${s.tokens.read}` });
    expect(range.status).toBe(400);
    const vec = await post({ query: "x", search_mode: "vector" }, { authorization: `Bearer ${s.tokens.read}` });
    expect(vec.status).toBe(400);
    expect(((await vec.json()) as any).kind).toBe("not-configured");
  });

  test("the same DNS-rebinding protection and body cap as /mcp", async () => {
    const res = await post({ query: "links" }, { authorization: `Bearer ${s.tokens.read}`, host: "evil.example.com" });
    expect(res.status).toBe(403);
    const huge = await post(JSON.stringify({ query: "x".repeat(9 * 1024 * 1024) }), { authorization: `Bearer ${s.tokens.read}` });
    expect(huge.status).toBe(413);
    expect((await post({ query: "still answering", search_mode: "fts" }, { authorization: `Bearer ${s.tokens.read}` })).status).toBe(200);
  });
});
