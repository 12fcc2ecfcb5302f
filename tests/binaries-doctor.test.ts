// `lettuce doctor` and `lettuce --version`, through the real CLI. The
// providers are an in-test HTTP server speaking Ollama's wire format.
import { afterAll, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, runLettuce } from "./helpers/cli";
import { startModelServer } from "./helpers/model-server";
import { copyVault, REPO } from "./helpers/server";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Check {
  check: string;
  status: "ok" | "warn" | "fail" | "info";
  detail: string;
  fix?: string;
}

async function doctor(vault: string, env: Record<string, string>, port = freePort()): Promise<{ code: number; ok: boolean; checks: Check[]; text: string }> {
  const r = await runLettuce(["doctor", vault, "--json", "--port", String(port)], { env: { LETTUCE_LLM_PROVIDER: "none", ...env }, timeoutMs: 60_000 });
  const j = JSON.parse(r.stdout);
  return { code: r.code, ok: j.ok, checks: j.checks, text: r.stdout };
}
const find = (checks: Check[], name: string, re?: RegExp) => checks.filter((c) => c.check === name && (!re || re.test(c.detail)));

test("doctor with Ollama up and the model pulled: reachable, pulled, the dimension, and a fresh vault's index not built yet", async () => {
  const vault = copyVault();
  dirs.push(vault);
  const ollama = startModelServer({ dim: 96, models: ["nomic-embed-text:latest", "llama3.2:latest"] });
  try {
    const d = await doctor(vault, { OLLAMA_HOST: ollama.url, LETTUCE_EMBED_PROVIDER: "ollama" });
    expect(d.code).toBe(0);
    expect(d.ok).toBe(true);
    const notes = readdirSync(vault, { recursive: true }).filter((f) => String(f).endsWith(".md")).length;
    expect(find(d.checks, "vault")[0]!.detail).toStartWith(`${notes} notes`);
    expect(find(d.checks, "ollama")[0]).toMatchObject({ status: "ok" });
    expect(find(d.checks, "ollama")[0]!.detail).toContain("nomic-embed-text:latest");
    expect(find(d.checks, "embeddings")[0]).toMatchObject({ status: "ok" });
    expect(find(d.checks, "embeddings")[0]!.detail).toContain("96-d");
    expect(find(d.checks, "index")[0]).toMatchObject({ status: "warn", detail: "not built yet" });
    expect(find(d.checks, "index")[0]!.fix).toContain("lettuce index");
    expect(find(d.checks, "sqlite-vec")[0]).toMatchObject({ status: "ok" });
    expect(find(d.checks, "port")[0]).toMatchObject({ status: "ok" });
    // It asked the model for one vector, and changed nothing in the vault.
    expect(ollama.state.requests.filter((r) => r.path === "/api/embed").length).toBe(1);
    expect(existsSync(join(vault, ".lettuce"))).toBe(false);
  } finally {
    await ollama.stop();
  }
}, 120_000);

test("doctor says what to do: model not pulled, Ollama down, a model whose dimension changed, a taken port", async () => {
  const vault = copyVault();
  dirs.push(vault);
  const ollama = startModelServer({ dim: 64, models: ["llama3.2:latest"] });
  try {
    const env = { OLLAMA_HOST: ollama.url, LETTUCE_EMBED_PROVIDER: "ollama" };
    let d = await doctor(vault, env);
    expect(d.ok).toBe(false);
    expect(d.code).toBe(1);
    const pull = find(d.checks, "ollama", /not pulled/)[0]!;
    expect(pull.status).toBe("fail");
    expect(pull.fix).toBe("run `ollama pull nomic-embed-text`");

    // Pull it, embed the vault, then let the model change its dimension behind the same name.
    ollama.state.models.push("nomic-embed-text:latest");
    const embed = await runLettuce(["embed", vault, "--json"], { env: { ...env, LETTUCE_LLM_PROVIDER: "none" }, timeoutMs: 60_000 });
    expect(embed.code).toBe(0);
    d = await doctor(vault, env);
    expect(d.ok).toBe(true);
    expect(find(d.checks, "index", /embedded with ollama:nomic-embed-text \(64-d\)/).length).toBe(1);
    ollama.state.dim = 32;
    d = await doctor(vault, env);
    const dim = find(d.checks, "embeddings", /32-d vectors but the index holds 64-d/)[0]!;
    expect(dim.status).toBe("fail");
    expect(dim.fix).toContain("lettuce embed --rebuild");

    // A port another program holds.
    const other = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("not lettuce") });
    try {
      d = await doctor(vault, env, other.port!);
      const port = find(d.checks, "port")[0]!;
      expect(port.status).toBe("fail");
      expect(port.fix).toContain(`--port ${other.port! + 1}`);
    } finally {
      other.stop(true);
    }
  } finally {
    await ollama.stop();
  }
  // Ollama gone: in auto mode the built-in model takes over, and doctor says how to bring Ollama back.
  const down = await doctor(vault, { OLLAMA_HOST: ollama.url, LETTUCE_EMBED_PROVIDER: "auto" });
  const o = find(down.checks, "ollama")[0]!;
  expect(o.status).toBe("warn");
  expect(o.detail).toBe(`no answer at ${ollama.url}`);
  expect(o.fix).toContain("ollama serve");
  expect(find(down.checks, "embeddings")[0]!.detail).toContain("built-in model");
  expect(down.ok).toBe(true);
}, 180_000);

test("doctor on a damaged index and a missing vault: a clear fix, no crash", async () => {
  const vault = copyVault();
  dirs.push(vault);
  // Two files whose names differ only in case: fine here, one file on macOS and Windows.
  writeFileSync(join(vault, "Inbox/Plan.md"), "# Plan\n");
  writeFileSync(join(vault, "Inbox/PLAN.md"), "# PLAN\n");
  const mk = Bun.spawnSync(["mkdir", "-p", join(vault, ".lettuce")]);
  expect(mk.exitCode).toBe(0);
  writeFileSync(join(vault, ".lettuce/index.db"), "this is not a database, just bytes ".repeat(200));
  const env = { LETTUCE_EMBED_PROVIDER: "none", OLLAMA_HOST: "127.0.0.1:9" };
  const d = await doctor(vault, env);
  const ix = find(d.checks, "index")[0]!;
  expect(ix.status).toBe("fail");
  expect(ix.fix).toContain("delete");
  expect(d.code).toBe(1);
  const twins = find(d.checks, "vault", /differ only in letter case/)[0]!;
  expect(twins.status).toBe("warn");
  expect(twins.detail).toContain("Inbox/PLAN.md / Inbox/Plan.md");
  // state.db cut short: serve stops on it, and doctor said nothing was wrong.
  const healthy = copyVault();
  dirs.push(healthy);
  expect((await runLettuce(["index", healthy], { env })).code).toBe(0);
  const { openStateDb } = await import("../lib/store/state-db");
  openStateDb(healthy).close();
  expect(find((await doctor(healthy, env)).checks, "state")[0]!.status).toBe("ok");
  const state = join(healthy, ".lettuce/state.db");
  for (const f of [state + "-wal", state + "-shm"]) rmSync(f, { force: true });
  writeFileSync(state, readFileSync(state).subarray(0, 5000));
  const broken = await doctor(healthy, env);
  const st = find(broken.checks, "state")[0]!;
  expect(st.status).toBe("fail");
  expect(st.fix).toContain("move");
  expect(broken.code).toBe(1);
  const missing = await runLettuce(["doctor", join(vault, "no-such-folder"), "--json"], { env });
  expect(missing.code).toBe(1);
  expect(JSON.parse(missing.stdout).checks[0]).toMatchObject({ check: "vault", status: "fail" });
}, 60_000);

test("--version prints version, commit and build date; --version --verbose says which SQLite and vector storage", async () => {
  const commit = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { cwd: REPO }).stdout.toString().trim();
  const v = await runLettuce(["--version"]);
  expect(v.code).toBe(0);
  expect(v.stdout).toBe(`lettuce ${require("../package.json").version} (commit ${commit}, running from source)\n`);
  const verbose = await runLettuce(["--version", "--verbose"]);
  expect(verbose.stdout).toContain("SQLite:   3.");
  expect(verbose.stdout).toContain("vectors:  sqlite-vec v0.1.9");
  const plain = await runLettuce(["--version", "--verbose", "--json"], { env: { LETTUCE_VECTOR_STORAGE: "plain" } });
  expect(JSON.parse(plain.stdout).vectors).toMatchObject({ storage: "plain", sqliteVec: null });
  // LETTUCE_SQLITE_LIB reaches Database.setCustomSQLite; only macOS loads another SQLite, and the report says so.
  if (process.platform !== "linux") return;
  const custom = await runLettuce(["--version", "--verbose", "--json"], { env: { LETTUCE_SQLITE_LIB: "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0" } });
  expect(JSON.parse(custom.stdout).sqlite.library).toBe("bundled with Bun (LETTUCE_SQLITE_LIB applies only on macOS)");
});

test("a state.db and an embeddings.db from a newer Lettuce: doctor says so; the cache is left alone and embedding goes on without it", async () => {
  const { Database } = await import("bun:sqlite");
  const { EmbeddingCache } = await import("../lib/semantic/cache");
  const { STATE_MIGRATIONS, stateDbPath } = await import("../lib/store/state-db");
  const vault = copyVault();
  dirs.push(vault);
  expect((await runLettuce(["index", vault])).code).toBe(0);
  EmbeddingCache.open(vault).close();
  const cacheFile = join(vault, ".lettuce/embeddings.db");
  const bump = (file: string, to: number) => {
    const db = new Database(file);
    db.exec(`PRAGMA user_version = ${to}`);
    db.close();
  };
  bump(cacheFile, 99);
  // A newer cache is not migrated, deleted or failed on: this process keeps its vectors in memory.
  const cache = EmbeddingCache.open(vault);
  expect(cache.file).toBe(":memory:");
  await cache.putPaced("m", [["h1", new Float32Array([1, 0, 0])]]);
  expect([...cache.get("m", ["h1"]).keys()]).toEqual(["h1"]);
  cache.close();
  const kept = new Database(cacheFile, { readonly: true });
  expect((kept.query("PRAGMA user_version").get() as { user_version: number }).user_version).toBe(99);
  kept.close();
  bump(stateDbPath(vault), STATE_MIGRATIONS.length + 1);
  const d = await doctor(vault, { LETTUCE_EMBED_PROVIDER: "none" });
  expect(d.ok).toBe(false);
  expect(find(d.checks, "state", /newer Lettuce/)[0]?.status).toBe("fail");
  expect(find(d.checks, "embeddings", /newer Lettuce/)[0]?.status).toBe("warn");
}, 60_000);
