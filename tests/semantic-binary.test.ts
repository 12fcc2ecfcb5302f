// The compiled binary carries the built-in model (weights, vocabulary, wasm) and
// sqlite-vec: semantic search works from an empty folder, with no node_modules.
import { afterAll, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { copyVault, REPO } from "./helpers/server";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function run(cmd: string[], cwd: string, env: Record<string, string> = {}) {
  const p = Bun.spawn(cmd, { cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe", env: { PATH: "/usr/bin:/bin", HOME: cwd, ...env } });
  const timer = setTimeout(() => p.kill("SIGKILL"), 120_000);
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  return { stdout, stderr, code };
}

test("the compiled binary embeds and searches by meaning from an empty folder", async () => {
  const out = mkdtempSync(join(tmpdir(), "lettuce-bin-"));
  dirs.push(out);
  const exe = join(out, "lettuce");
  const build = await run([process.execPath, "build", "--compile", "--sourcemap=none", "./main.ts", "./lib/index/parse-worker.ts", "./lib/providers/builtin-worker.ts", "--outfile", exe], REPO);
  expect(build.code).toBe(0);
  // Run it from somewhere else entirely: a fresh folder holding only the binary.
  const empty = mkdtempSync(join(tmpdir(), "lettuce-empty-"));
  dirs.push(empty);
  copyFileSync(exe, join(empty, "lettuce"));
  rmSync(exe);
  const vault = copyVault();
  dirs.push(vault);
  const env = { LETTUCE_EMBED_PROVIDER: "builtin", TMPDIR: empty };
  const res = await run([join(empty, "lettuce"), "search", vault, "when is the last frost in spring", "--semantic", "--json", "--limit", "3"], empty, env);
  expect(res.stderr).toBe("");
  expect(res.code).toBe(0);
  expect(JSON.parse(res.stdout).items[0].path).toBe("Garden/Frost Dates.md");
  const rel = await run([join(empty, "lettuce"), "related", vault, "Recipes/Menemen.md", "--json"], empty, env);
  expect(rel.code).toBe(0);
  expect(JSON.parse(rel.stdout).items.length).toBeGreaterThan(0);
}, 240_000);
