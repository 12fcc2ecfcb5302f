// Two ways another party passed for the person, through a real server with a person's session:
// a page on another port of loopback (another origin, by name the same host) was let into the web UI's
// API, and an agent that declared itself `person (web UI)` had its edits recorded under the label the
// person's own reverts carry.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { declaredAgent, WEB_AGENT } from "../lib/web/agent-label";
import { startTestServer, type TestServer } from "./helpers/server";
import { loginSession, type WebSession } from "./web-helpers";

let s: TestServer;
let web: WebSession;
let port: string;

beforeAll(async () => {
  s = await startTestServer();
  web = await loginSession(s.vault, s.url);
  port = new URL(s.url).port;
});
afterAll(async () => {
  await s?.close();
});

describe("Origin is the server's scheme, host and port", () => {
  test("a page on another port or scheme of loopback gets 403 from the web API", async () => {
    for (const origin of ["http://127.0.0.1:8080", "http://localhost:3000", "https://127.0.0.1", `https://127.0.0.1:${port}`, `http://127.0.0.1:${Number(port) + 1}`, "http://127.0.0.1", "null"]) {
      expect((await web.fetch("/api/session", { headers: { origin } })).status, origin).toBe(403);
      expect((await web.fetch("/api/tokens", { json: { name: "evil", scope: "write" }, headers: { origin } })).status, origin).toBe(403);
    }
  });

  test("/mcp, which answers only a bearer token, lets a local page on another port in (a browser-based client) but no other name", async () => {
    for (const origin of ["http://127.0.0.1:8080", "http://localhost:3000"]) {
      expect((await s.rpc({ jsonrpc: "2.0", id: 1, method: "ping" }, { origin })).status, origin).toBe(200);
    }
    for (const origin of ["http://evil.example:3000", "null"]) {
      expect((await s.rpc({ jsonrpc: "2.0", id: 1, method: "ping" }, { origin })).status, origin).toBe(403);
    }
  });

  test("the server's own origin, as the request addressed it, is let in", async () => {
    expect((await web.fetch("/api/session", { headers: { origin: `http://127.0.0.1:${port}` } })).status).toBe(200);
    expect((await s.rpc({ jsonrpc: "2.0", id: 1, method: "ping" }, { origin: `http://127.0.0.1:${port}` })).status).toBe(200);
    // Reached as localhost, the page's origin is localhost at the same port.
    expect((await s.rpc({ jsonrpc: "2.0", id: 1, method: "ping" }, { host: `localhost:${port}`, origin: `http://localhost:${port}` })).status).toBe(200);
    // ...and 127.0.0.1's page is not that one, for the web API.
    expect((await web.fetch("/api/session", { headers: { host: `localhost:${port}`, origin: `http://127.0.0.1:${port}` } })).status).toBe(403);
  });
});

describe("an agent cannot take the person's label", () => {
  const write = async (agent: string, path: string) => {
    const res = await s.rpc({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "write_note", arguments: { path, content: `# ${path}\n` } } }, { "x-lettuce-agent": agent });
    expect(res.status).toBe(200);
    const items = ((await (await web.fetch(`/api/edits?path=${encodeURIComponent(path)}`)).json()) as any).items;
    expect(items.length).toBe(1);
    return items[0] as { agent: string; token: string };
  };

  test("a token that declares itself the web UI (in any case or spacing) is recorded as claiming it, with its token's name", async () => {
    const tokenName = s.vault.stateDb.query("SELECT name FROM tokens WHERE scope = 'write'").all() as { name: string }[];
    const name = tokenName[0]!.name;
    for (const [i, label] of [WEB_AGENT, "Person (Web UI)", "person  (web ui) ", "PERSON-web-UI"].entries()) {
      const e = await write(label, `Spoof ${i}.md`);
      expect(e.agent, label).not.toBe(WEB_AGENT);
      expect(e.agent).toContain(`claimed by token ${name}`);
      expect(e.token).toBe(name);
    }
    const facets = ((await (await web.fetch("/api/edits")).json()) as any).facets.agents as string[];
    expect(facets).not.toContain(WEB_AGENT);
  });

  test("a lookalike in compatibility forms (fullwidth letters, which only initialize's clientInfo can carry) is the same label", () => {
    expect(declaredAgent("ｐｅｒｓｏｎ (web UI)", "w")).toBe(`${WEB_AGENT} [claimed by token w]`);
  });

  test("a client that names itself the web UI in initialize (no header) is recorded as claiming it too", async () => {
    const name = (s.vault.stateDb.query("SELECT name FROM tokens WHERE scope = 'write'").get() as { name: string }).name;
    const init = await s.rpc({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: `${WEB_AGENT}${" ".repeat(120)}`, version: "1" } } });
    expect(init.status).toBe(200);
    const res = await s.rpc({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "write_note", arguments: { path: "Via initialize.md", content: "# x\n" } } });
    expect(res.status).toBe(200);
    const items = ((await (await web.fetch(`/api/edits?path=${encodeURIComponent("Via initialize.md")}`)).json()) as any).items;
    expect(items[0].agent).toBe(`${WEB_AGENT} [claimed by token ${name}]`);
  });

  test("any other label is kept as the agent declared it", async () => {
    expect((await write("claude-code (person's laptop)", "Honest.md")).agent).toBe("claude-code (person's laptop)");
  });
});
