// Files that name a process by its pid (.lettuce/serve.json, .lettuce/users/<pid>) outlive a crash; after a
// reboot, or just later, the system gives that pid to an unrelated program. Taken at its pid, the dead server
// "kept the index current" (so `lettuce index`, `search` and `stdio` stopped indexing, and `serve` refused to
// start) and the dead index user blocked every rebuild, for as long as that program ran (the sync audit of
// 2026-12-05). Each file now holds the process's start stamp as well (Linux).
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { BUN, freePort, runLettuce, spawnLettuce } from "./helpers/cli";
import { copyVault } from "./helpers/server";

const linux = process.platform === "linux";
const roots: string[] = [];
const others: { kill(): void }[] = [];
afterAll(() => {
  for (const p of others) p.kill();
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/** A program that has nothing to do with Lettuce, holding a pid. */
function unrelatedProgram(): number {
  const p = Bun.spawn(["sleep", "60"]);
  others.push(p);
  return p.pid;
}

test.skipIf(!linux)("a serve.json a crashed server left, its pid since taken by another program, stops nothing", async () => {
  const root = copyVault();
  roots.push(root);
  const port = freePort();
  const server = spawnLettuce(["serve", root, "--port", String(port)]);
  await server.waitForStdout(/Index current/, 30_000);
  server.proc.kill("SIGKILL");
  await server.proc.exited;
  const file = join(root, ".lettuce/serve.json");
  const left = JSON.parse(readFileSync(file, "utf8"));
  expect(left.stamp).toBeTruthy();
  writeFileSync(file, JSON.stringify({ ...left, pid: unrelatedProgram() }));
  writeFileSync(join(root, "Written while down.md"), "# Written while down\n\nquetzalcoatl\n");

  const index = await runLettuce(["index", root]);
  expect(index.code).toBe(0);
  expect(index.stdout).toMatch(/Indexed .*1 new or changed/);
  writeFileSync(join(root, "Written later.md"), "# Written later\n\nxylophonist\n");
  const search = await runLettuce(["search", root, "xylophonist", "--json"]);
  expect(JSON.parse(search.stdout).items.map((i: { path: string }) => i.path)).toEqual(["Written later.md"]);
  const again = spawnLettuce(["serve", root, "--port", String(freePort())]);
  try {
    await again.waitForStdout(/Index current/, 30_000);
  } finally {
    await again.stop();
  }
}, 90_000);

test("a users/<pid> file of a dead run blocks no rebuild; a live older process holding the index still does", async () => {
  const root = copyVault();
  roots.push(root);
  expect((await runLettuce(["index", root])).code).toBe(0);
  const users = join(root, ".lettuce/users");
  mkdirSync(users, { recursive: true });
  const setFormat = (v: string) => {
    const db = new Database(join(root, ".lettuce/index.db"));
    db.query("UPDATE meta SET value = ? WHERE key = 'format'").run(v);
    db.close();
  };
  // A file of this version (it holds a stamp) for a pid another program now has; and, on Linux, one of an
  // older version (empty) for a pid whose program does not have the index open.
  writeFileSync(join(users, String(unrelatedProgram())), "00000000-dead-run:12345");
  if (linux) writeFileSync(join(users, String(unrelatedProgram())), "");
  setFormat("older");
  const rebuilt = await runLettuce(["index", root]);
  expect(rebuilt.stderr).toBe("");
  expect(rebuilt.code).toBe(0);

  // An older `lettuce stdio` (empty file) that has the index open is still heeded: its index is not deleted under it.
  const index = join(root, ".lettuce/index.db");
  const holder = Bun.spawn([BUN, "-e", `const { Database } = require("bun:sqlite"); const d = new Database(${JSON.stringify(index)}); d.query("SELECT count(*) FROM notes").get(); console.log("open"); setInterval(() => {}, 1000);`], { stdout: "pipe", stderr: "inherit" });
  others.push(holder);
  await holder.stdout.getReader().read();
  writeFileSync(join(users, String(holder.pid)), "");
  setFormat("older");
  const refused = await runLettuce(["index", root]);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toContain(`pid ${holder.pid}`);
}, 60_000);
