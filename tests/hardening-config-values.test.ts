// Odd values in LETTUCE_* settings (the configuration audit of 2026-12-05): `Number(x) || default` read ""
// as 0 (a rate limit of 0 is "off"), let -1 through (a parse pool that never started) and read "1e309" as
// Infinity (workers started without end, a timer past setTimeout's limit that fires every millisecond).
import { expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { envNumber } from "../lib/env-number";
import { openStateDb } from "../lib/store/state-db";
import { createToken } from "../lib/store/tokens";
import { freePort, httpMcp, runLettuce, spawnLettuce } from "./helpers/cli";
import { tempDir } from "./helpers/server";

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
  const db = openStateDb(root);
  const token = createToken(db, "config", "write").token;
  db.close();
  const port = freePort();
  const server = spawnLettuce(["serve", root, "--port", String(port)], {
    env: {
      LETTUCE_EMBED_PROVIDER: "none",
      LETTUCE_REQUEST_TIMEOUT_MS: "-1", // every read answered internal
      LETTUCE_MODEL_RATE_LIMIT: " ", // the rate limit silently off
      LETTUCE_DIRECTIVE_LEASE_MS: "2592000000", // a timer past 2^31 ms: every millisecond
      LETTUCE_READ_WORKERS: "auto", // no read workers: heavy reads on the request thread
      LETTUCE_MAX_BODY_BYTES: "1e309", // the body cap off
    },
  });
  try {
    await server.waitForStdout(/Index current/, 60_000);
    const mcp = httpMcp(port, token);
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
    await server.stop();
    rmSync(root, { recursive: true, force: true });
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
