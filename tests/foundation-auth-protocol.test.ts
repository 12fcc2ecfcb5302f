// Tokens, scopes and the MCP Streamable HTTP surface: what a client sees
// when it gets things right and when it gets them wrong.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { createHttpApp, MAX_BODY_BYTES, MAX_READ_BODY_BYTES } from "../lib/server/http";
import { McpDispatcher } from "../lib/server/mcp";
import { createToken, revokeToken } from "../lib/store/tokens";
import { ALL_TOOLS } from "../tools";
import { defineTool, type ToolDef } from "../tools/types";
import { connectClient, payload, startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const JSON_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const ping = (id: number | string = 1) => JSON.stringify({ jsonrpc: "2.0", id, method: "ping" });

function post(body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(s.url, { method: "POST", headers: { ...JSON_HEADERS, ...headers }, body });
}
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

async function rpcJson(body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  const res = await s.rpc(body, headers);
  return { status: res.status, json: await res.json() };
}

describe("authentication", () => {
  test("missing, malformed, unknown and revoked tokens get a flat HTTP 401", async () => {
    const cases: Record<string, Record<string, string>> = {
      missing: {},
      "not bearer": { authorization: `Basic ${btoa("a:b")}` },
      "empty bearer": { authorization: "Bearer " },
      unknown: bearer("x".repeat(43)),
      "overlong": bearer("y".repeat(5000)),
    };
    for (const [what, headers] of Object.entries(cases)) {
      const res = await post(ping(), headers);
      expect(res.status, what).toBe(401);
      const text = await res.text();
      expect(text, what).not.toMatch(/jsonrpc|result/);
      expect(res.headers.get("content-type"), what).toStartWith("text/plain");
      expect(res.headers.get("www-authenticate"), what).toStartWith("Bearer ");
    }
    expect((await post(ping(), {})).headers.get("www-authenticate")).toBe('Bearer realm="lettuce"');
    const { token } = createToken(s.vault.stateDb, "soon-revoked", "read");
    expect((await post(ping(), bearer(token))).status).toBe(200);
    expect(revokeToken(s.vault.stateDb, "soon-revoked")).toBe(true);
    expect((await post(ping(), bearer(token))).status).toBe(401);
  });

  test("a token is checked on GET too (401 without, 405 with)", async () => {
    expect((await fetch(s.url)).status).toBe(401);
    const res = await fetch(s.url, { headers: bearer(s.tokens.read) });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });

  test("the SDK client fails to connect with a bad token", async () => {
    await expect(connectClient(s.url, "not-a-token")).rejects.toThrow();
  });
});

describe("scopes", () => {
  test("a read token lists only tools its scope may call, each with a JSON Schema and a description", async () => {
    const c = await s.client("read");
    const { tools } = await c.listTools();
    const byName = new Map(ALL_TOOLS.map((t) => [t.name, t]));
    for (const t of tools) {
      expect(byName.get(t.name)?.scopes, t.name).toContain("read");
      expect(t.description!.length, t.name).toBeGreaterThan(40);
      expect(t.inputSchema.type).toBe("object");
      expect(t.inputSchema.$schema).toBeUndefined();
    }
    // Tools outside the read scope (write tools, once they exist) are not listed.
    const readable = ALL_TOOLS.filter((t) => t.scopes.includes("read")).map((t) => t.name).sort();
    expect(tools.map((t) => t.name).sort()).toEqual(readable);
    for (const name of ["get_vault_info", "list_notes", "read_note", "read_outline", "list_outgoing_links", "list_backlinks", "search", "list_tags", "notes_by_tag", "list_folders", "list_attachments", "read_attachment", "link_graph"]) {
      expect(readable).toContain(name);
    }
    const search = tools.find((t) => t.name === "search")!;
    expect(search.inputSchema.required).toEqual(["query"]);
    expect((search.inputSchema.properties as any).query.type).toBe("string");
    expect((search.inputSchema.properties as any).limit).toMatchObject({ type: "integer", default: 25 });
    expect(search.annotations?.readOnlyHint).toBe(true);
  });

  test("tools outside a read token's scope are refused on call", async () => {
    for (const t of ALL_TOOLS.filter((t) => !t.scopes.includes("read"))) {
      const res: any = await s.callRaw(t.name, {}, "read");
      expect(res, t.name).toMatchObject({ isError: true, kind: "forbidden" });
    }
  });

  test("a write-only tool is hidden from and refused to read and propose tokens (probe tool on the real HTTP app)", async () => {
    let ran = 0;
    const probe = defineTool({
      name: "probe_write",
      description: "Test-only tool that needs the write scope.",
      scopes: ["write"],
      input: z.object({}),
      handler: () => ({ ran: ++ran }),
    }) as unknown as ToolDef;
    const app = createHttpApp(s.vault, new McpDispatcher(s.vault, [...ALL_TOOLS, probe]));
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: app.fetch });
    const url = `http://127.0.0.1:${server.port}/mcp`;
    try {
      for (const scope of ["read", "propose"] as const) {
        const c = await connectClient(url, s.tokens[scope]);
        expect((await c.listTools()).tools.map((t) => t.name)).not.toContain("probe_write");
        const res: any = await c.callTool({ name: "probe_write", arguments: {} });
        expect(res).toMatchObject({ isError: true, kind: "forbidden" });
        await c.close();
      }
      expect(ran).toBe(0);
      const w = await connectClient(url, s.tokens.write);
      expect((await w.listTools()).tools.map((t) => t.name)).toContain("probe_write");
      expect(payload(await w.callTool({ name: "probe_write", arguments: {} }))).toEqual({ ran: 1 });
      await w.close();
    } finally {
      await server.stop(true);
    }
  });
});

describe("MCP lifecycle over HTTP", () => {
  test("the SDK client sees serverInfo, capabilities.tools and instructions", async () => {
    const c = await s.client("read");
    expect(c.getServerVersion()?.name).toBe("lettuce");
    expect(typeof c.getServerVersion()?.version).toBe("string");
    expect(c.getServerCapabilities()?.tools).toBeDefined();
    expect(c.getInstructions()).toMatch(/get_vault_info/);
    expect(await c.ping()).toEqual({});
  });

  test("initialize negotiates the protocol version", async () => {
    for (const v of SUPPORTED_PROTOCOL_VERSIONS) {
      const { json } = await rpcJson({ jsonrpc: "2.0", id: 7, method: "initialize", params: { protocolVersion: v, capabilities: {}, clientInfo: { name: "t", version: "1" } } });
      expect(json).toMatchObject({ jsonrpc: "2.0", id: 7, result: { protocolVersion: v, serverInfo: { name: "lettuce" }, capabilities: { tools: {} } } });
      expect(typeof json.result.instructions).toBe("string");
    }
    const { json } = await rpcJson({ jsonrpc: "2.0", id: 8, method: "initialize", params: { protocolVersion: "1999-01-01", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
    expect(json.result.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
  });

  test("an unsupported MCP-Protocol-Version header is refused", async () => {
    const res = await s.rpc({ jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-protocol-version": "1999-01-01" });
    expect(res.status).toBe(400);
  });

  test("notifications/initialized gets 202 with no body; ping answers {}", async () => {
    const res = await s.rpc({ jsonrpc: "2.0", method: "notifications/initialized" });
    expect(res.status).toBe(202);
    expect(await res.text()).toBe("");
    expect(await rpcJson({ jsonrpc: "2.0", id: "p", method: "ping" })).toEqual({ status: 200, json: { jsonrpc: "2.0", id: "p", result: {} } });
  });

  test("tools/call returns one text part holding JSON", async () => {
    const { json } = await rpcJson({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "list_folders", arguments: {} } });
    expect(json.result.content).toHaveLength(1);
    expect(json.result.content[0].type).toBe("text");
    expect(JSON.parse(json.result.content[0].text)).toContain("Projects/2026");
    expect(json.result.isError).toBeUndefined();
  });
});

describe("protocol errors", () => {
  test("bad JSON → -32700", async () => {
    const { status, json } = await rpcJson("{not json");
    expect(status).toBe(400);
    expect(json).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
  });

  test("unknown method → -32601", async () => {
    const { json } = await rpcJson({ jsonrpc: "2.0", id: 4, method: "resources/teleport" });
    expect(json).toMatchObject({ id: 4, error: { code: -32601 } });
  });

  test("not JSON-RPC 2.0 → -32600", async () => {
    expect((await rpcJson({ id: 5, method: "ping" })).json.error.code).toBe(-32600);
    expect((await rpcJson([])).json.error.code).toBe(-32600);
  });

  test("invalid tool arguments → -32602 with zod's message", async () => {
    const { json } = await rpcJson({ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "search", arguments: { query: 42 } } });
    expect(json.error.code).toBe(-32602);
    expect(json.error.message).toMatch(/search/);
    expect(json.error.message).toMatch(/expected string/i);
    expect(json.error.message).toMatch(/query/);
    const missing = await rpcJson({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "read_note", arguments: {} } });
    expect(missing.json.error).toMatchObject({ code: -32602, message: expect.stringMatching(/path/) });
    const range = await rpcJson({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "list_notes", arguments: { limit: 0 } } });
    expect(range.json.error).toMatchObject({ code: -32602, message: expect.stringMatching(/limit/) });
  });

  test("unknown tool → -32602", async () => {
    const { json } = await rpcJson({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "format_disk", arguments: {} } });
    expect(json).toMatchObject({ id: 9, error: { code: -32602, message: expect.stringMatching(/format_disk/) } });
  });

  test("the SDK client surfaces protocol errors as McpError with the code", async () => {
    const c = await s.client("read");
    await expect(c.callTool({ name: "search", arguments: { query: 1 } })).rejects.toMatchObject({ code: -32602 });
  });

  test("a tool failure is a result with isError and a kind, not a JSON-RPC error", async () => {
    const { json } = await rpcJson({ jsonrpc: "2.0", id: 10, method: "tools/call", params: { name: "read_note", arguments: { path: "Inbox/missing.md" } } });
    expect(json.error).toBeUndefined();
    expect(json.result).toMatchObject({ isError: true, kind: "note-not-found", content: [{ type: "text", text: expect.stringMatching(/Inbox\/missing\.md/) }] });
  });

  test("a batch is answered per message", async () => {
    const { json } = await rpcJson([
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "nope" },
    ]);
    expect(json).toHaveLength(2);
    expect(json.find((r: any) => r.id === 1).result).toEqual({});
    expect(json.find((r: any) => r.id === 2).error.code).toBe(-32601);
  });
});

describe("HTTP guards", () => {
  test("GET and DELETE /mcp → 405 (stateless: no SSE stream, no session)", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await fetch(s.url, { method, headers: bearer(s.tokens.read) });
      expect(res.status, method).toBe(405);
    }
  });

  test("a body over the cap → 413", async () => {
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(MAX_BODY_BYTES) } });
    const res = await s.rpc(big);
    expect(res.status).toBe(413);
    // The server is fine afterwards.
    expect((await s.rpc({ jsonrpc: "2.0", id: 2, method: "ping" })).status).toBe(200);
  });

  test("a read token's cap is 1 MB (it sends queries and ids, not content); a write token's is the full cap", async () => {
    const padded = (bytes: number) => JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(bytes) } });
    const headers = (token: string) => ({ "content-type": "application/json", accept: "application/json", ...bearer(token) });
    const asRead = await fetch(s.url, { method: "POST", headers: headers(s.tokens.read), body: padded(MAX_READ_BODY_BYTES + 10) });
    expect(asRead.status).toBe(413);
    expect(((await asRead.json()) as any).error.message).toContain("read token");
    const asWrite = await fetch(s.url, { method: "POST", headers: headers(s.tokens.write), body: padded(MAX_READ_BODY_BYTES + 10) });
    expect(asWrite.status).toBe(200);
    const small = await fetch(s.url, { method: "POST", headers: headers(s.tokens.read), body: padded(1000) });
    expect(small.status).toBe(200);
    // query_database's filters are bounded too: 201 of them is refused before any is looked at.
    const filters = Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`c${i}`, "x"]));
    const many = await fetch(s.url, { method: "POST", headers: headers(s.tokens.read), body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "query_database", arguments: { databaseId: "x.base", filters } } }) });
    expect(((await many.json()) as any).error.message).toContain("at most 200 filters");
  });

  test("Host or Origin of another site → 403, even with a good token", async () => {
    const evilHost = await post(ping(), { ...bearer(s.tokens.write), host: "evil.example.com" });
    expect(evilHost.status).toBe(403);
    const evilOrigin = await post(ping(), { ...bearer(s.tokens.write), origin: "http://evil.example.com" });
    expect(evilOrigin.status).toBe(403);
    const evilBoth = await post(ping(), { host: "evil.example.com:51234", origin: "http://evil.example.com:51234" });
    expect(evilBoth.status).toBe(403);
    const port = new URL(s.url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const ok = await post(ping(), { ...bearer(s.tokens.read), host, origin: `http://${host}` });
      expect(ok.status, host).toBe(200);
    }
  });
});
