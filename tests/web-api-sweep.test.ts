// Every route of the web UI's API, as the server lists them, called by a logged-in person's session
// with each query parameter the routes read set to hostile or malformed values, and each POST with
// bad bodies. The web tests check what each route answers; this sweep catches a route added or
// changed later that fails with a 500, a stack trace or a file from outside the vault.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Hono } from "hono";
import { answerError } from "../lib/server/http";
import { leakIn } from "./helpers/leaks";
import { REPO, startTestServer, type TestServer } from "./helpers/server";
import { loginSession, type WebSession } from "./web-helpers";

// The query parameters the routes read, found in their source (paging adds limit and offset).
function queryNames(): string[] {
  const dir = join(REPO, "lib/web");
  const names = new Set(["limit", "offset"]);
  for (const f of readdirSync(dir).filter((f) => f.endsWith(".ts"))) {
    for (const m of readFileSync(join(dir, f), "utf8").matchAll(/\.req\.query\("(\w+)"\)/g)) names.add(m[1]!);
  }
  return [...names];
}

const VALUES = ["", "../../../etc/passwd", "/etc/passwd", ".lettuce/state.db", "a\u0000b", "x".repeat(20_000), '"NEAR(((*', "[[", "-1", "1e400", "NaN", "2.5", "99999999999999999999", "%", "🥬"];
const IDS = ["0", "-1", "abc", "1e400", "99999999999999999999", "..", "%2e%2e%2fetc"];
const BODIES = [undefined, "not json", "{}", "[]", "null", '{"name": 1}', '{"name": "x", "scope": "root"}', JSON.stringify({ name: "x".repeat(70_000), scope: "read" }), '{"force": "yes"}'];
// Long-lived or session-ending: the event stream stays open, and logout would end the sweep's session.
const SKIP = new Set(["/api/events", "/api/logout"]);

let s: TestServer;
let web: WebSession;
beforeAll(async () => {
  s = await startTestServer();
  web = await loginSession(s.vault, s.url);
});
afterAll(() => s?.close());

test("every API route answers hostile parameters and bodies without a 500, a stack or a file from outside the vault", async () => {
  const routes = s.running.routes.filter((r) => r.path.startsWith("/api/") && !r.path.includes("*") && (r.method === "GET" || r.method === "POST") && !SKIP.has(r.path));
  expect(routes.length).toBeGreaterThan(20);
  const names = queryNames();
  expect(names).toEqual(expect.arrayContaining(["path", "q", "limit"]));
  const problems: string[] = [];
  let requests = 0;
  const check = async (what: string, res: Response) => {
    requests++;
    const text = await res.text();
    if (res.status >= 500) problems.push(`${what}: HTTP ${res.status} ${text.slice(0, 120)}`);
    const leak = leakIn(text);
    if (leak) problems.push(`${what}: ${leak} in ${text.slice(0, 160)}`);
  };
  for (const r of routes) {
    const paths = r.path.includes(":") ? IDS.map((id) => r.path.replace(/:\w+/g, encodeURIComponent(id))) : [r.path];
    for (const path of paths) {
      if (r.method === "GET") {
        for (const name of names) for (const v of VALUES) await check(`GET ${path}?${name}=${JSON.stringify(v).slice(0, 24)}`, await web.fetch(`${path}?${name}=${encodeURIComponent(v)}`));
      } else {
        for (const body of BODIES) await check(`POST ${path} ${String(body).slice(0, 24)}`, await web.fetch(path, { method: "POST", body, headers: { "content-type": "application/json" } }));
      }
    }
    const ping = await s.rpc({ jsonrpc: "2.0", id: 1, method: "ping" });
    if (ping.status !== 200) problems.push(`after ${r.path}: the server no longer answers a ping`);
  }
  expect(problems).toEqual([]);
  expect(requests).toBeGreaterThan(3000);
  // The session was still good at the end: the sweep was not answered by a login page throughout.
  expect((await web.fetch("/api/session")).status).toBe(200);
}, 240_000);

test("a route that fails answers the page and the tool-search endpoint in their own shape ({error, kind}) and an MCP client with a JSON-RPC error", async () => {
  // The server's own error answer, on an app with routes planted to fail: the page shows `error` as text (a
  // JSON-RPC envelope there made it "[object Object]").
  const app = new Hono();
  app.onError(answerError);
  app.get("/api/planted", () => {
    throw new Error("planted");
  });
  app.post("/mcp", () => {
    throw new Error("planted");
  });
  app.post("/v1/tools/search", () => {
    throw new Error("planted");
  });
  const page = await app.request("/api/planted");
  expect(page.status).toBe(500);
  expect(await page.json()).toEqual({ error: "Internal error; see the server log", kind: "internal" });
  const toolSearch = await app.request("/v1/tools/search", { method: "POST" });
  expect(toolSearch.status).toBe(500);
  expect(await toolSearch.json()).toEqual({ error: "Internal error; see the server log", kind: "internal" });
  const rpc = await app.request("/mcp", { method: "POST" });
  expect(rpc.status).toBe(500);
  expect(await rpc.json()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32603, message: "Internal error; see the server log" } });
});
