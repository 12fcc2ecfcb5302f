// The official MCP conformance suite against the real server, through a
// loopback proxy that adds the bearer header (the suite cannot send headers).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startAuthProxy, type AuthProxy } from "./helpers/auth-proxy";
import { BUN } from "./helpers/cli";
import { REPO, startTestServer, type TestServer } from "./helpers/server";

const SUITE = join(REPO, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
// The scenarios that apply to a real server (the rest call fixture tools only a test server has).
const SCENARIOS = ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"];

let s: TestServer;
let proxy: AuthProxy;
beforeAll(async () => {
  s = await startTestServer();
  proxy = startAuthProxy(s.url, s.tokens.read);
});
afterAll(async () => {
  await proxy?.stop();
  await s?.close();
});

async function runScenario(name: string) {
  const proc = Bun.spawn([BUN, SUITE, "server", "--url", proxy.url, "--scenario", name, "--verbose"], {
    cwd: REPO,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, NO_COLOR: "1" },
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), 60_000);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

describe("MCP conformance suite", () => {
  test("the proxy itself authenticates and keeps Host", async () => {
    const ok = await fetch(proxy.url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) });
    expect(ok.status).toBe(200);
    const evil = await fetch(proxy.url, { method: "POST", headers: { host: "evil.example.com", "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) });
    expect(evil.status).toBe(403);
  });

  for (const name of SCENARIOS) {
    test(name, async () => {
      const r = await runScenario(name);
      const report = `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
      // --verbose prints the checks as a JSON array between the banner and the summary.
      const json = r.stdout.match(/^\[[\s\S]*?^\]$/m);
      if (!json) throw new Error(`no checks in the suite's output\n${report}`);
      const checks = JSON.parse(json[0]) as { id: string; status: string; errorMessage?: string }[];
      expect(checks.length).toBeGreaterThan(0);
      const bad = checks.filter((c) => c.status !== "SUCCESS").map((c) => `${c.id}: ${c.status} ${c.errorMessage ?? ""}`);
      expect(bad, report).toEqual([]);
      expect(r.stdout).toMatch(/0 failed, 0 warnings/);
      expect(r.code, report).toBe(0);
    }, 90_000);
  }
});
