// CLI conventions a newcomer expects from git or ripgrep: `help <cmd>`, -V,
// one argument order, exit 2 for every usage mistake, names where paths are
// tedious, scores that say which way is better, and hints that work as printed.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync } from "node:fs";
import { createToken } from "../lib/store/tokens";
import { openStateDb } from "../lib/store/state-db";
import { freePort, runLettuce, spawnLettuce } from "./helpers/cli";
import { copyVault, REPO, tempDir } from "./helpers/server";

setDefaultTimeout(120_000);

let vault: string;
beforeAll(() => {
  vault = copyVault();
});
afterAll(() => rmSync(vault, { recursive: true, force: true }));

describe("help and version", () => {
  test("`lettuce help <cmd>` is the command's --help; an unknown topic is a usage mistake", async () => {
    const [viaHelp, viaFlag, unknown, v, V] = await Promise.all([
      runLettuce(["help", "token"]),
      runLettuce(["token", "--help"]),
      runLettuce(["help", "frobnicate"]),
      runLettuce(["--version"]),
      runLettuce(["-V"]),
    ]);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toBe(viaFlag.stdout);
    expect(viaHelp.stdout).toContain("lettuce token create <vault>");
    expect(unknown.code).toBe(2);
    expect(V.code).toBe(0);
    expect(V.stdout).toBe(v.stdout);
  });
});

describe("usage mistakes exit 2 everywhere", () => {
  test("a missing vault argument is a usage mistake, not a missing vault", async () => {
    const rs = await Promise.all([
      runLettuce(["token", "list"]),
      runLettuce(["token", "create"]),
      runLettuce(["proposals", "list"]),
      runLettuce(["proposals"]),
      runLettuce(["related", vault]),
      runLettuce(["lint", vault, "--severity", "loud"]),
      runLettuce(["config"]),
    ]);
    for (const r of rs) {
      expect({ code: r.code, err: r.stderr.split("\n")[0] }).toMatchObject({ code: 2 });
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    // A vault that does not exist is a failure (1), not a usage mistake.
    expect((await runLettuce(["token", "list", `${vault}/nope`])).code).toBe(1);
  });
});

describe("one argument order: <command> <subcommand> <vault>", () => {
  test("proposals list <vault>, like token list <vault>; the older order still works", async () => {
    const a = await runLettuce(["proposals", "list", vault, "--json"]);
    const b = await runLettuce(["proposals", vault, "list", "--json"]);
    expect(a.code).toBe(0);
    expect(JSON.parse(a.stdout)).toEqual([]);
    expect(b).toEqual(a);
  });
});

describe("search and lint output", () => {
  test("search says which way scores go; its help names --semantic and --hybrid", async () => {
    const hits = await runLettuce(["search", vault, "lettuce"]);
    expect(hits.code).toBe(0);
    expect(hits.stdout).toMatch(/lower is better/);
    const help = await runLettuce(["search", "--help"]);
    expect(help.stdout).toContain("--semantic");
    expect(help.stdout).toContain("--hybrid");
    expect((await runLettuce(["--help"])).stdout).toMatch(/search\s+.*--semantic/);
  });

  test("lint --severity keeps one severity", async () => {
    const all = JSON.parse((await runLettuce(["lint", vault, "--json"])).stdout);
    const warn = JSON.parse((await runLettuce(["lint", vault, "--json", "--severity", "warning"])).stdout);
    expect(warn.length).toBeGreaterThan(0);
    expect(warn).toEqual(all.filter((f: any) => f.severity === "warning"));
  });
});

describe("related takes a name as a wikilink would", () => {
  test("`related <vault> Menemen` finds Recipes/Menemen.md, and [[Menemen]] too", async () => {
    const env = { LETTUCE_EMBED_PROVIDER: "builtin", LETTUCE_LLM_PROVIDER: "none" };
    const byPath = await runLettuce(["related", vault, "Recipes/Menemen.md", "--json"], { env, timeoutMs: 110_000 });
    const byName = await runLettuce(["related", vault, "menemen", "--json"], { env, timeoutMs: 110_000 });
    const byLink = await runLettuce(["related", vault, "[[Menemen]]", "--json"], { env, timeoutMs: 110_000 });
    expect(byPath.code).toBe(0);
    expect(JSON.parse(byName.stdout)).toEqual(JSON.parse(byPath.stdout));
    expect(JSON.parse(byLink.stdout)).toEqual(JSON.parse(byPath.stdout));
    const missing = await runLettuce(["related", vault, "No Such Note", "--json"], { env, timeoutMs: 110_000 });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("Note not found");
  });

  test("semantic search off a terminal prints plain embedding progress instead of a silent wait", async () => {
    const v = copyVault();
    try {
      const r = await runLettuce(["search", v, "last frost", "--semantic"], { env: { LETTUCE_EMBED_PROVIDER: "builtin", LETTUCE_LLM_PROVIDER: "none" }, timeoutMs: 110_000 });
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/^Embedding: \d+\/\d+ notes/m);
      expect(r.stdout).toMatch(/higher is better/);
    } finally {
      rmSync(v, { recursive: true, force: true });
    }
  });
});

describe("the serve banner's hints work as printed", () => {
  test("first run: the 'More tokens' command, run from the same folder, creates a token", async () => {
    const v = copyVault();
    const cwd = tempDir("lettuce-cwd-");
    const srv = spawnLettuce(["serve", v, "--port", String(freePort())], { cwd });
    try {
      const m = await srv.waitForStdout(/More tokens: (.+)\n/);
      const printed = m[1]!;
      const cmd = printed.replace("--scope read|propose|write", "--scope read").replace("--name NAME", "--name from-banner");
      const run = Bun.spawnSync(["bash", "-c", cmd], { cwd, env: { ...process.env, NO_COLOR: "1" } });
      expect({ code: run.exitCode, err: run.stderr.toString() }).toEqual({ code: 0, err: expect.any(String) });
      expect(run.stdout.toString()).toContain('Created read token "from-banner"');
    } finally {
      await srv.stop();
      rmSync(v, { recursive: true, force: true });
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  test("a later serve says tokens exist and how to make a new one", async () => {
    const v = copyVault();
    const db = openStateDb(v);
    createToken(db, "existing", "read");
    db.close();
    const srv = spawnLettuce(["serve", v, "--port", String(freePort())], { cwd: REPO });
    try {
      const m = await srv.waitForStdout(/1 active token .*A new one: (.+)\n/);
      expect(m[1]).toContain("token create");
      expect(m[1]).toContain(v);
    } finally {
      await srv.stop();
      rmSync(v, { recursive: true, force: true });
    }
  });
});
