// serve, stdio and embed start again in their own process with the engine's
// block warm-up thread off (lib/platform/jsc-options.ts): the same pid, the
// same pipes and arguments, BUN_JSC_useWarmUpMarkedBlocks=0 in the
// environment, and no JSCWarmUp thread. A setting of the user's own is kept,
// and LETTUCE_NO_RELAUNCH=1 leaves the process as it started. (That `lettuce
// stdio` still speaks MCP on its pipes after the restart: the stdio tests in
// foundation-cli, hardening-jsonrpc and workspace-data-audit; the compiled
// binary's serve: web-binary.)
import { afterAll, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { JSC_OPTIONS, wantsJscOptions } from "../lib/platform/jsc-options";
import { freePort, spawnLettuce } from "./helpers/cli";
import { copyVault } from "./helpers/server";

const vault = copyVault();
afterAll(() => rmSync(vault, { recursive: true, force: true }));
const linux = existsSync("/proc/self/environ");

function environ(pid: number): Record<string, string> {
  return Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, "utf8")
      .split("\0")
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
  );
}

function threadNames(pid: number): string[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((t) => {
    try {
      return [readFileSync(`/proc/${pid}/task/${t}/comm`, "utf8").trim()];
    } catch {
      return []; // the thread ended
    }
  });
}

/** Start `lettuce serve` with these variables, wait until it serves, and return what its process holds. */
async function serveWith(env: Record<string, string | undefined>): Promise<{ env: Record<string, string>; threads: string[]; health: unknown }> {
  const port = freePort();
  const p = spawnLettuce(["serve", vault, "--port", String(port)], { env: { LETTUCE_EMBED_PROVIDER: "none", LETTUCE_LLM_PROVIDER: "none", ...env } });
  try {
    await p.waitForStdout(/MCP endpoint/);
    const health = await (await fetch(`http://127.0.0.1:${port}/health`)).json();
    return { env: environ(p.proc.pid), threads: threadNames(p.proc.pid), health };
  } finally {
    await p.stop();
  }
}

test("which commands start again: serve, stdio and embed, once, unless the user set the option or said not to", () => {
  const none = {};
  for (const c of ["serve", "stdio", "embed"]) expect(wantsJscOptions([c, "v"], none)).toBe(true);
  for (const c of ["search", "index", "answer", "--version", ""]) expect(wantsJscOptions([c, "v"], none)).toBe(false);
  expect(wantsJscOptions(["serve", "v"], { ...JSC_OPTIONS })).toBe(false); // started again already
  expect(wantsJscOptions(["serve", "v"], { BUN_JSC_useWarmUpMarkedBlocks: "1" })).toBe(false);
  expect(wantsJscOptions(["serve", "v"], { LETTUCE_NO_RELAUNCH: "1" })).toBe(false);
});

test.skipIf(!linux)("lettuce serve runs with the block warm-up off, in the process it was started as", async () => {
  const r = await serveWith({ BUN_JSC_useWarmUpMarkedBlocks: undefined, LETTUCE_NO_RELAUNCH: undefined });
  expect(r.env.BUN_JSC_useWarmUpMarkedBlocks).toBe("0");
  expect(r.threads).not.toContain("JSCWarmUp");
  expect(r.health).toMatchObject({ ok: true });
}, 60_000);

test.skipIf(!linux)("a setting of the user's own is kept; LETTUCE_NO_RELAUNCH=1 runs as started", async () => {
  const own = await serveWith({ BUN_JSC_useWarmUpMarkedBlocks: "1", LETTUCE_NO_RELAUNCH: undefined });
  expect(own.env.BUN_JSC_useWarmUpMarkedBlocks).toBe("1");
  expect(own.threads).toContain("JSCWarmUp");
  const off = await serveWith({ BUN_JSC_useWarmUpMarkedBlocks: undefined, LETTUCE_NO_RELAUNCH: "1" });
  expect(off.env.BUN_JSC_useWarmUpMarkedBlocks).toBeUndefined();
  expect(off.health).toMatchObject({ ok: true });
}, 60_000);
