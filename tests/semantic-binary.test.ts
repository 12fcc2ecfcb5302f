// The compiled binary (compile.sh's linux-x64 build) carries the built-in model
// (weights, vocabulary, wasm) and sqlite-vec: semantic search works from an
// empty folder, with no node_modules, with vectors in sqlite-vec and in the
// plain tables that binaries use where sqlite-vec cannot load (macOS).
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanupBuilds, linuxBinary } from "./helpers/binary";
import { copyVault } from "./helpers/server";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await cleanupBuilds();
});

async function run(cmd: string[], cwd: string, env: Record<string, string> = {}) {
  const p = Bun.spawn(cmd, { cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe", env: { PATH: "/usr/bin:/bin", HOME: cwd, ...env } });
  const timer = setTimeout(() => p.kill("SIGKILL"), 120_000);
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  return { stdout, stderr, code };
}

test("the compiled binary embeds and searches by meaning from an empty folder", async () => {
  const exe = await linuxBinary();
  // Run it from somewhere else entirely: a fresh folder holding only the binary.
  const empty = mkdtempSync(join(tmpdir(), "lettuce-empty-"));
  dirs.push(empty);
  copyFileSync(exe, join(empty, "lettuce"));
  for (const storage of ["sqlite-vec", "plain"]) {
    const vault = copyVault();
    dirs.push(vault);
    const env: Record<string, string> = { LETTUCE_EMBED_PROVIDER: "builtin", TMPDIR: empty, ...(storage === "plain" ? { LETTUCE_VECTOR_STORAGE: "plain" } : {}) };
    const res = await run([join(empty, "lettuce"), "search", vault, "when is the last frost in spring", "--semantic", "--json", "--limit", "3"], empty, env);
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout).items[0].path).toBe("Garden/Frost Dates.md");
    const rel = await run([join(empty, "lettuce"), "related", vault, "Recipes/Menemen.md", "--json"], empty, env);
    expect(rel.code).toBe(0);
    expect(JSON.parse(rel.stdout).items.length).toBeGreaterThan(0);
    // The vectors went where this storage keeps them.
    const db = new Database(join(vault, ".lettuce/index.db"), { readonly: true });
    const names = (db.query("SELECT name FROM sqlite_master WHERE name IN ('vec_passages', 'plain_passages')").all() as { name: string }[]).map((r) => r.name);
    const vectors = (db.query("SELECT value FROM meta WHERE key = 'vector_storage'").get() as { value: string }).value;
    db.close();
    expect(names).toEqual([storage === "plain" ? "plain_passages" : "vec_passages"]);
    expect(vectors).toBe(storage);
  }
}, 600_000);
