// Odd values in LETTUCE_* settings (the configuration audit of 2026-12-05): `Number(x) || default` read ""
// as 0 (a rate limit of 0 is "off"), let -1 through (a parse pool that never started) and read "1e309" as
// Infinity (workers started without end, a timer past setTimeout's limit that fires every millisecond).
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { envNumber } from "../lib/env-number";
import { startHttpServer } from "../lib/server/serve";
import { openStateDb } from "../lib/store/state-db";
import { runLettuce, servedVault } from "./helpers/cli";
import { withEnv } from "./helpers/env";
import { startTestServer, tempDir } from "./helpers/server";

test("a number setting is used only when it is a plain number in range; otherwise the default, said once", () => {
  const range = { min: 1, max: 100, integer: true };
  const read = (raw: string | undefined) => envNumber("LETTUCE_TEST_SETTING", 7, range, { LETTUCE_TEST_SETTING: raw });
  expect(read(undefined)).toBe(7);
  for (const raw of ["", " ", "-1", "0", "1e309", "Infinity", "NaN", "0x10", "12abc", "1.5", "101", "1_000"]) expect(read(raw)).toBe(7);
  expect(read(" 12 ")).toBe(12);
  expect(read("1e2")).toBe(100);
  expect(envNumber("LETTUCE_TEST_FRACTION", 1, { min: 0, max: 2 }, { LETTUCE_TEST_FRACTION: "0.25" })).toBe(0.25);
});

test("a server started with unusable values keeps its limits, its timers and its answers", async () => {
  const root = tempDir("lettuce-config-");
  writeFileSync(join(root, "w.md"), "# W\n\n> [!ai] file this\n");
  const { port, token, server, mcp, close } = await servedVault(root, {
    scope: "write",
    env: {
      LETTUCE_REQUEST_TIMEOUT_MS: "-1", // every read answered internal
      LETTUCE_MODEL_RATE_LIMIT: " ", // the rate limit silently off
      LETTUCE_DIRECTIVE_LEASE_MS: "2592000000", // a timer past 2^31 ms: every millisecond
      LETTUCE_READ_WORKERS: "auto", // no read workers: heavy reads on the request thread
      LETTUCE_MAX_BODY_BYTES: "1e309", // the body cap off
    },
  });
  try {
    expect((await mcp.call("get_vault_info")).noteCount).toBe(1);
    // The default limit, 120 model-backed calls a minute, still holds.
    const kinds: (string | undefined)[] = [];
    for (let i = 0; i < 125; i++) kinds.push((await mcp.call("semantic_search", { query: "file", limit: 1 })).kind);
    expect(kinds.filter((k) => k === "rate-limited").length).toBeGreaterThan(0);
    const claimed = await mcp.call("await_directives", { cursor: 0, worker: "a", timeout_ms: 1000 });
    expect(claimed.directives.length).toBe(1);
    const errBefore = server.stderr().length;
    await Bun.sleep(1500);
    expect(server.stderr().slice(errBefore)).not.toContain("TimeoutOverflowWarning");
    const big = await fetch(`http://127.0.0.1:${port}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(9 * 1024 * 1024) } }),
    });
    expect(big.status).toBe(413);
    // Each unusable value is said (a blank one is simply unset).
    for (const name of ["LETTUCE_REQUEST_TIMEOUT_MS", "LETTUCE_DIRECTIVE_LEASE_MS", "LETTUCE_MAX_BODY_BYTES"]) {
      expect(server.stderr()).toContain(`lettuce: ${name}=`);
    }
  } finally {
    await close();
  }
}, 90_000);

test("an index run with unusable parse settings finishes, with workers bounded", async () => {
  const root = tempDir("lettuce-config-index-");
  mkdirSync(join(root, "n"), { recursive: true });
  for (let i = 0; i < 300; i++) writeFileSync(join(root, "n", `note ${i}.md`), `# Note ${i}\n\nlinks to [[note ${(i + 1) % 300}]]\n`);
  try {
    const r = await runLettuce(["index", root], { env: { LETTUCE_PARSE_IN_FLIGHT: "-1", LETTUCE_PARSE_WORKERS: "1e309", LETTUCE_NO_RELAUNCH: "1" }, timeoutMs: 60_000 });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Indexed 300 notes/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}, 90_000);

test("flags: an empty host or port, a hex port and a limit of 0 are refused; a token name with control characters too", async () => {
  const root = tempDir("lettuce-flags-");
  writeFileSync(join(root, "a.md"), "# A\n\nglacier\n");
  try {
    for (const args of [
      ["serve", root, "--host", ""],
      ["serve", root, "--port", ""],
      ["serve", root, "--port", "0x1F90"],
      ["search", root, "glacier", "--limit", "0"],
      ["search", root, "glacier", "--limit", "1e308"],
      ["token", root, "create", "--name", "evil\u001b]0;pwned\u0007", "--scope", "read"],
    ]) {
      const r = await runLettuce(args);
      expect(r.code).toBe(2);
    }
    expect(existsSync(join(root, ".lettuce", "serve.json"))).toBe(false);
    const many = Array.from({ length: 1001 }, (_, i) => `f${i}`).join(",");
    expect((await runLettuce(["config", root, "immutablePaths", many])).code).toBe(2);
    expect((await runLettuce(["search", root, "glacier", "--limit", "1"])).stdout).toContain("a.md");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}, 60_000);

test("settings rows written by hand are shown as the server enforces them", async () => {
  const root = tempDir("lettuce-rows-");
  mkdirSync(join(root, "sources"), { recursive: true });
  writeFileSync(join(root, "sources", "s.md"), "# S\n\nkept\n");
  const db = openStateDb(root);
  const set = db.query("INSERT OR REPLACE INTO settings(key, value) VALUES (?, ?)");
  set.run("contextMode", "Strict");
  set.run("immutablePaths", JSON.stringify(["./sources/"]));
  set.run("auditRetentionDays", "0");
  db.close();
  try {
    const shown = await runLettuce(["config", root]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("contextMode=off");
    expect(shown.stdout).toContain("immutablePaths=sources/");
    expect(shown.stdout).toContain("auditRetentionDays=90");
    // ...and the prefix is enforced as shown.
    const s = await startTestServer({ root });
    try {
      const r: any = await s.callRaw("write_note", { path: "sources/s.md", content: "gone\n", overwrite: true });
      expect(r.kind).toBe("immutable-path");
    } finally {
      await s.close();
    }
    const d = openStateDb(root);
    d.query("INSERT OR REPLACE INTO settings(key, value) VALUES ('immutablePaths', 'notjson')").run();
    d.close();
    expect((await runLettuce(["config", root])).stdout).toContain("immutablePaths=sources/");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}, 60_000);

test("a base URL that does not parse leaves the tools answering, and says which setting is wrong", async () => {
  await withEnv({ LETTUCE_LLM_BASE_URL: "not a url\n", LETTUCE_EMBED_BASE_URL: "http://[bad", LETTUCE_EMBED_PROVIDER: undefined, LETTUCE_LLM_PROVIDER: undefined }, async () => {
    const s = await startTestServer();
    try {
      const info = await s.call("get_vault_info");
      expect(info.capabilities.embeddings).toBe(false);
      const search: any = await s.callRaw("semantic_search", { query: "garden" });
      expect(search.kind).not.toBe("internal");
      expect(search.content[0].text).toContain("LETTUCE_EMBED_BASE_URL");
      const doctor = await runLettuce(["doctor", s.root], { env: { LETTUCE_LLM_BASE_URL: "not a url\n", LETTUCE_EMBED_BASE_URL: "http://[bad" } });
      expect(doctor.stderr).not.toContain("Invalid URL");
      expect(doctor.stdout).toContain("LETTUCE_EMBED_BASE_URL");
    } finally {
      await s.close();
    }
  });
}, 60_000);

test("a host given in brackets binds the address inside them and answers at its printed URL", async () => {
  const root = tempDir("lettuce-brackets-");
  writeFileSync(join(root, "a.md"), "# A\n");
  const { server, close } = await servedVault(root, { args: ["--host", "[::1]"] });
  try {
    const url = /(http:\/\/\[::1\]:\d+\/mcp)/.exec(server.stdout())![1]!;
    expect((await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status).toBe(401);
  } finally {
    await close();
  }
}, 60_000);

test("a server on every IPv6 interface answers at its own printed address", async () => {
  const s = await startTestServer();
  try {
    const running = startHttpServer(s.vault, { port: 0, host: "::" });
    try {
      const port = new URL(running.url).port;
      const r = await fetch(`http://[::1]:${port}/mcp`, { method: "POST", headers: { host: `[::]:${port}`, "content-type": "application/json" }, body: "{}" });
      expect(r.status).not.toBe(403);
    } finally {
      await running.stop();
    }
  } finally {
    await s.close();
  }
});
