// The web UI's access rules through the real server: one-time login codes,
// the session cookie, CSRF, Host/Origin, and that MCP tokens and browser
// sessions never stand in for each other. Also `lettuce login` and the link
// `serve` prints, against a spawned server.
import { connect } from "node:net";
import { networkInterfaces } from "node:os";
import { startHttpServer } from "../lib/server/serve";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, rmSync } from "node:fs";
import { listTokens } from "../lib/store/tokens";
import { createLoginCode, LOGIN_CODE_TTL_MS } from "../lib/web/sessions";
import { CSP } from "../lib/web/security";
import { runLettuce, spawnLettuce, freePort } from "./helpers/cli";
import { EXAMPLE_VAULT, startTestServer, tempDir, type TestServer } from "./helpers/server";
import { loginSession, originOf, type WebSession } from "./web-helpers";

let s: TestServer;
let origin: string;
let web: WebSession;
beforeAll(async () => {
  s = await startTestServer();
  origin = originOf(s.url);
  web = await loginSession(s.vault, s.url);
});
afterAll(() => s.close());

const mcpList = (headers: Record<string, string>) =>
  fetch(s.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });

describe("without a session", () => {
  test("every page answers 401 with how to get a link; every API answers 401 JSON", async () => {
    for (const path of ["/", "/notes/Projects/Lettuce.md", "/search?q=x", "/graph", "/proposals", "/timeline", "/work", "/hygiene", "/tokens", "/settings"]) {
      const res = await fetch(origin + path);
      expect(res.status).toBe(401);
      const html = await res.text();
      expect(html).toContain("lettuce login");
      expect(html).not.toContain("<script");
    }
    for (const path of ["/api/session", "/api/note?path=Projects/Lettuce.md", "/api/search?q=lettuce", "/api/graph", "/api/tokens", "/api/events", "/api/file?path=assets/diagram.png"]) {
      const res = await fetch(origin + path);
      expect(res.status).toBe(401);
      expect(((await res.json()) as any).kind).toBe("unauthorized");
    }
    const post = await fetch(origin + "/api/tokens", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "x", scope: "write" }) });
    expect(post.status).toBe(401);
  });

  // The body limit reads a chunked body to its end before letting a request on: in front of the session
  // check, a caller with no session held a request open by never ending its body.
  test("a POST whose chunked body never ends is answered 401 at once, not held", async () => {
    const u = new URL(origin);
    const sock = connect(Number(u.port), u.hostname);
    try {
      const first = new Promise<string>((resolve) => sock.once("data", (d) => resolve(d.toString("latin1"))));
      await new Promise((r) => sock.once("connect", r));
      sock.write(`POST /api/tokens HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n4000\r\n${"x".repeat(0x4000)}\r\n`);
      const answer = await Promise.race([first, Bun.sleep(3000).then(() => "nothing within 3 s")]);
      expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 401 Unauthorized");
    } finally {
      sock.destroy();
    }
  });

  test("the login help names the vault's folder only to a browser on this machine", async () => {
    const local = await (await fetch(origin + "/")).text();
    expect(local).toContain(s.vault.root);
    const lan = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === "IPv4" && !i.internal)?.address;
    if (!lan) {
      console.log("skip: no non-loopback IPv4 address on this machine to test a LAN browser from");
      return;
    }
    const running = startHttpServer(s.vault, { port: 0, host: lan, allowedHosts: [lan] });
    try {
      const res = await fetch(`http://${lan}:${running.server.port}/`);
      expect(res.status).toBe(401);
      const html = await res.text();
      expect(html).toContain("lettuce login &lt;vault&gt;");
      expect(html).not.toContain(s.vault.root);
    } finally {
      await running.stop();
    }
  });

  test("a made-up, stale or foreign cookie is no session", async () => {
    for (const value of ["nope", "a".repeat(5000), web.cookie.split("=")[1] + "x"]) {
      const res = await fetch(origin + "/api/session", { headers: { cookie: `${web.cookie.split("=")[0]}=${value}` } });
      expect(res.status).toBe(401);
    }
    // The cookie is named for this server's port: another port's cookie is not read.
    const other = await fetch(origin + "/api/session", { headers: { cookie: `lettuce_session_1=${web.cookie.split("=")[1]}` } });
    expect(other.status).toBe(401);
  });
});

describe("login links", () => {
  test("a code logs in once: HttpOnly, SameSite=Strict, path / cookie, then a redirect to /", async () => {
    const { code } = createLoginCode(s.vault.stateDb);
    const first = await fetch(`${origin}/login?code=${code}`, { redirect: "manual" });
    expect(first.status).toBe(303);
    expect(first.headers.get("location")).toBe("/");
    const cookie = first.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^lettuce_session_\d+=[\w-]{43};/);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    expect(cookie).toContain("Path=/");
    const page = await fetch(origin + "/", { headers: { cookie: cookie.split(";")[0]! } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toBe(CSP);
    const again = await fetch(`${origin}/login?code=${code}`, { redirect: "manual" });
    expect(again.status).toBe(401);
    expect(again.headers.get("set-cookie")).toBeNull();
    expect(await again.text()).toContain("already used");
  });

  test("an expired code, a made-up code, an MCP token and a huge code do not log in", async () => {
    const { code: old } = createLoginCode(s.vault.stateDb, Date.now() - LOGIN_CODE_TTL_MS - 1000);
    for (const code of [old, "x", s.tokens.write, "A".repeat(4000), "%00", ""]) {
      const res = await fetch(`${origin}/login?code=${encodeURIComponent(code)}`, { redirect: "manual" });
      expect(res.status).toBe(401);
      expect(res.headers.get("set-cookie")).toBeNull();
    }
  });

  test("a code minted in another vault's state.db does not open this one", async () => {
    const other = await startTestServer();
    try {
      const { code } = createLoginCode(other.vault.stateDb);
      expect((await fetch(`${origin}/login?code=${code}`, { redirect: "manual" })).status).toBe(401);
      expect((await fetch(`${originOf(other.url)}/login?code=${code}`, { redirect: "manual" })).status).toBe(303);
    } finally {
      await other.close();
    }
  });

  test("a login from a foreign Host is refused before the code is spent", async () => {
    const { code } = createLoginCode(s.vault.stateDb);
    const evil = await fetch(`${origin}/login?code=${code}`, { headers: { host: "evil.example" }, redirect: "manual" });
    expect(evil.status).toBe(403);
    const ok = await fetch(`${origin}/login?code=${code}`, { redirect: "manual" });
    expect(ok.status).toBe(303);
  });

  test("a page on another site cannot spend a link, nor lock the person out with failed ones", async () => {
    const { code } = createLoginCode(s.vault.stateDb);
    // What a browser sends for <img src="http://127.0.0.1:PORT/login?code=…"> on another site: no Origin.
    const fromSite = await fetch(`${origin}/login?code=${code}`, { headers: { "sec-fetch-site": "cross-site" }, redirect: "manual" });
    expect(fromSite.status).toBe(403);
    for (let i = 0; i < 40; i++) await fetch(`${origin}/login?code=bogus${i}`, { redirect: "manual" });
    expect((await fetch(`${origin}/login?code=bogus-more`, { redirect: "manual" })).status).toBe(429);
    // The person's fresh link still works, opened from the terminal.
    const ok = await fetch(`${origin}/login?code=${code}`, { headers: { "sec-fetch-site": "none" }, redirect: "manual" });
    expect(ok.status).toBe(303);
  });

  test("logging out ends the session", async () => {
    const w = await loginSession(s.vault, s.url);
    expect((await w.fetch("/api/session")).status).toBe(200);
    expect((await w.fetch("/api/logout", { method: "POST" })).status).toBe(200);
    expect((await w.fetch("/api/session")).status).toBe(401);
  });
});

describe("CSRF and origins", () => {
  test("a change without the CSRF token, or with a wrong one, is refused and changes nothing", async () => {
    const before = listTokens(s.vault.stateDb, true).length;
    const none = await web.fetch("/api/tokens", { json: { name: "csrf-none", scope: "write" }, noCsrf: true });
    expect(none.status).toBe(403);
    expect(((await none.json()) as any).kind).toBe("csrf");
    const wrong = await web.fetch("/api/tokens", { json: { name: "csrf-wrong", scope: "write" }, noCsrf: true, headers: { "x-csrf-token": "A".repeat(web.csrf.length) } });
    expect(wrong.status).toBe(403);
    expect(listTokens(s.vault.stateDb, true).length).toBe(before);
    const ok = await web.fetch("/api/tokens", { json: { name: "csrf-ok", scope: "read" } });
    expect(ok.status).toBe(200);
    expect(listTokens(s.vault.stateDb, true).length).toBe(before + 1);
  });

  test("a request from another origin is refused even with the cookie and the token", async () => {
    const res = await web.fetch("/api/tokens", { json: { name: "evil", scope: "write" }, headers: { origin: "http://evil.example" } });
    expect(res.status).toBe(403);
    expect(listTokens(s.vault.stateDb, true).some((t) => t.name === "evil")).toBe(false);
  });

  test("an oversized body is refused", async () => {
    const res = await web.fetch("/api/tokens", { json: { name: "big", scope: "read", pad: "x".repeat(100_000) } });
    expect(res.status).toBe(413);
  });
});

describe("MCP tokens and browser sessions never mix", () => {
  test("a bearer token opens no page and no API; its value as a cookie neither", async () => {
    for (const token of [s.tokens.write, s.tokens.read]) {
      expect((await fetch(origin + "/api/session", { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
      expect((await fetch(origin + "/", { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
      expect((await fetch(origin + "/api/session", { headers: { cookie: `${web.cookie.split("=")[0]}=${token}` } })).status).toBe(401);
    }
  });

  test("a session opens no MCP: not as a cookie, not as a bearer token", async () => {
    expect((await mcpList({ cookie: web.cookie })).status).toBe(401);
    expect((await mcpList({ authorization: `Bearer ${web.cookie.split("=")[1]}` })).status).toBe(401);
    expect((await mcpList({ authorization: `Bearer ${web.csrf}` })).status).toBe(401);
    expect((await mcpList({ authorization: `Bearer ${s.tokens.read}` })).status).toBe(200);
  });

  test("a token created in the UI works on /mcp and stops working when revoked there", async () => {
    const made = (await (await web.fetch("/api/tokens", { json: { name: "ui-made", scope: "read" } })).json()) as any;
    expect(made.config).toContain(made.token);
    expect(made.url).toBe(s.url);
    expect((await mcpList({ authorization: `Bearer ${made.token}` })).status).toBe(200);
    const dup = await web.fetch("/api/tokens", { json: { name: "ui-made", scope: "read" } });
    expect(dup.status).toBe(409);
    expect((await web.fetch(`/api/tokens/${made.info.id}/revoke`, { method: "POST" })).status).toBe(200);
    expect((await mcpList({ authorization: `Bearer ${made.token}` })).status).toBe(401);
    expect((await web.fetch(`/api/tokens/${made.info.id}/revoke`, { method: "POST" })).status).toBe(404);
  });
});

describe("lettuce login and the link serve prints", () => {
  let root: string;
  const saved = process.env.LETTUCE_EMBED_PROVIDER;
  beforeAll(() => {
    root = tempDir();
    cpSync(EXAMPLE_VAULT, root, { recursive: true });
    process.env.LETTUCE_EMBED_PROVIDER = "none"; // the spawned server needs no model
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.LETTUCE_EMBED_PROVIDER;
    else process.env.LETTUCE_EMBED_PROVIDER = saved;
    rmSync(root, { recursive: true, force: true });
  });

  test("without a running server, login says how to start one", async () => {
    const r = await runLettuce(["login", root]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("no server is running");
  });

  test("serve prints a working link; lettuce login prints fresh ones; each works once", async () => {
    const port = freePort();
    const srv = spawnLettuce(["serve", root, "--port", String(port)]);
    try {
      const printed = (await srv.waitForStdout(/(http:\/\/127\.0\.0\.1:\d+\/login\?code=[\w-]+)/))[1]!;
      const res = await fetch(printed, { redirect: "manual" });
      expect(res.status).toBe(303);
      const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
      expect((await fetch(`http://127.0.0.1:${port}/api/session`, { headers: { cookie } })).status).toBe(200);
      expect((await fetch(printed, { redirect: "manual" })).status).toBe(401);

      const out = await runLettuce(["login", root, "--json"]);
      expect(out.code).toBe(0);
      const { url } = JSON.parse(out.stdout);
      expect(url).toStartWith(`http://127.0.0.1:${port}/login?code=`);
      expect((await fetch(url, { redirect: "manual" })).status).toBe(303);
      expect((await fetch(url, { redirect: "manual" })).status).toBe(401);
    } finally {
      await srv.stop();
    }
  });
});
