// More than one Lettuce process on one vault (the multi-process audit of 2026-12-05): `serve` all day, a
// desktop client's `lettuce stdio --scope write`, CLI commands in a terminal. They share the SQLite files
// under .lettuce/, and each keeps things in memory that the others' commits make stale.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { syncStemmed } from "../lib/semantic/keyword";
import { ensureVecTables, writeNotes } from "../lib/semantic/store";
import { indexDbPath, openIndexDb } from "../lib/store/index-db";
import { BUN, MAIN, runLettuce } from "./helpers/cli";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";

/** A `lettuce stdio` child speaking JSON-RPC line by line. */
function stdioChild(root: string) {
  const proc = Bun.spawn([BUN, MAIN, "stdio", root, "--scope", "write"], { stdin: "pipe", stdout: "pipe", stderr: "pipe", env: { ...process.env, LETTUCE_EMBED_PROVIDER: "none" } });
  const reader = proc.stdout.getReader();
  let buffered = "";
  let id = 0;
  const next = async (): Promise<any> => {
    for (;;) {
      const nl = buffered.indexOf("\n");
      if (nl >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line.trim()) return JSON.parse(line);
        continue;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error("stdio closed");
      buffered += new TextDecoder().decode(value);
    }
  };
  return {
    async call(name: string, args: unknown): Promise<any> {
      proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: ++id, method: "tools/call", params: { name, arguments: args } })}\n`);
      proc.stdin.flush();
      const r = await next();
      if (r.result?.isError) throw new Error(r.result.content[0].text);
      return JSON.parse(r.result.content[0].text);
    },
    async stop() {
      proc.stdin.end();
      await proc.exited;
    },
  };
}

describe("a serve and a stdio writing one vault", () => {
  let s: TestServer;
  let child: ReturnType<typeof stdioChild>;
  beforeAll(async () => {
    s = await startTestServer({ watch: true });
    child = stdioChild(s.root);
    await child.call("get_vault_info", {});
  });
  afterAll(async () => {
    await child?.stop();
    await s?.close();
  });

  // Each process resolved links against its own list of note names, loaded once: a link written in one to a
  // note the other had created was stored broken, for good (10 of 10), and move_note then left it unrewritten.
  test("a link to a note the other process created resolves, and moves with it", async () => {
    for (let i = 0; i < 3; i++) {
      await child.call("write_note", { path: `Multi/Target ${i}.md`, content: `# Target ${i}\n` });
      await s.call("write_note", { path: `Multi/Source ${i}.md`, content: `# Source ${i}\n\nSee [[Target ${i}]].\n` });
      const back = await s.call("list_backlinks", { path: `Multi/Target ${i}.md` });
      expect(back.items.map((b: any) => b.sourcePath)).toEqual([`Multi/Source ${i}.md`]);
      // And the other way round: created here, linked from there.
      await s.call("write_note", { path: `Multi/Here ${i}.md`, content: `# Here ${i}\n` });
      await child.call("write_note", { path: `Multi/There ${i}.md`, content: `# There ${i}\n\nSee [[Here ${i}]].\n` });
      const back2 = await child.call("list_backlinks", { path: `Multi/Here ${i}.md` });
      expect(back2.items.map((b: any) => b.sourcePath)).toEqual([`Multi/There ${i}.md`]);
    }
    const moved = await s.call("move_note", { from: "Multi/Target 0.md", to: "Multi/Moved/Target zero.md" });
    expect(moved.notesUpdated).toEqual(["Multi/Source 0.md"]);
  }, 60_000);

  // The other process indexed the note first, so this one found its hash unchanged and told no listener:
  // a parked await_directives slept through every directive written through stdio (10 of 10).
  test("await_directives wakes for a directive another process wrote and indexed", async () => {
    const { cursor } = await s.call("await_directives", { cursor: 0, timeout_ms: 1000 });
    const parked = s.call("await_directives", { cursor, timeout_ms: 20_000 });
    await Bun.sleep(200);
    await child.call("write_note", { path: "Multi/Task.md", content: "# Task\n\n> [!ai] Written through stdio\n" });
    const r = await parked;
    expect(r.timedOut).toBe(false);
    expect(r.directives.map((d: any) => d.title)).toContain("Written through stdio");
  }, 30_000);
});

// Two processes opening a vault with no .lettuce yet (two clients starting `lettuce stdio` at login, or a
// first `lettuce token create` beside a first `serve`): both set up the schema, and the second failed
// ("table audit_log already exists", "database is locked"; 14 of 20 rounds).
test("two processes opening a new vault at once both succeed", async () => {
  const base = tempDir();
  try {
    for (let round = 0; round < 10; round++) {
      const root = join(base, `v${round}`);
      mkdirSync(root);
      for (let k = 0; k < 20; k++) writeFileSync(join(root, `n${k}.md`), `# Note ${k}\n\n[[n${(k + 1) % 20}]]\n`);
      const runs = await Promise.all([runLettuce(["proposals", "list", root]), runLettuce([round % 2 ? "proposals" : "token", "list", root])]);
      for (const r of runs) {
        expect(r.stderr).toBe("");
        expect(r.code).toBe(0);
      }
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}, 120_000);

// Two `lettuce serve` started at once (two terminals, a login item and a person): both passed the "already
// served" check before either announced itself, and both served, each watching and indexing; on a vault with
// no token both made "default" and the second died on the name (the multi-process audit).
test("of two servers started at once on one vault, one serves and the other says so", async () => {
  const { copyVault } = await import("./helpers/server");
  const { freePort, spawnLettuce } = await import("./helpers/cli");
  for (let round = 0; round < 6; round++) {
    const root = copyVault();
    try {
      // Half the rounds over the serve.json a crashed server left: each took the other's fresh file for that one.
      if (round % 2) {
        mkdirSync(join(root, ".lettuce"), { recursive: true });
        writeFileSync(join(root, ".lettuce/serve.json"), JSON.stringify({ pid: 999_999, stamp: "dead:1", url: "http://127.0.0.1:1/mcp", startedAt: "" }));
      }
      const servers = [0, 1].map(() => spawnLettuce(["serve", root, "--port", String(freePort())], { env: { LETTUCE_EMBED_PROVIDER: "none" } }));
      // One reaches "Index current"; the other exits (1) or is still starting: give both their time.
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline && !servers.some((p) => /Index current/.test(p.stdout())) ) await Bun.sleep(50);
      await Bun.sleep(1500);
      const serving = servers.filter((p) => p.proc.exitCode === null);
      const refused = servers.filter((p) => p.proc.exitCode !== null);
      expect(serving.length).toBe(1);
      expect(refused.length).toBe(1);
      expect(refused[0]!.proc.exitCode).toBe(1);
      expect(refused[0]!.stderr()).toContain("already served");
      expect(servers.map((p) => p.stderr()).join("")).not.toContain("UNIQUE");
      for (const p of servers) await p.stop();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
}, 120_000);

test("vector writes and the stemmed-table sync never fail beside another process committing to index.db", async () => {
  // Their transactions read before they wrote: a commit from another process in between failed the write
  // at once ("database is locked"), ~1 in 400 beside a writer in a loop.
  const root = tempDir("lettuce-lock-");
  for (let i = 0; i < 20; i++) writeFileSync(join(root, `n${i}.md`), `# N${i}\nhello ${i} [[n${(i + 1) % 20}]]\n`);
  expect((await runLettuce(["index", root])).code).toBe(0);
  const db = openIndexDb(root);
  const hammer = Bun.spawn(
    [BUN, "-e", `const { Database } = require("bun:sqlite"); const db = new Database(process.argv[1]); db.exec("PRAGMA busy_timeout = 5000");
     const end = Date.now() + 3500; while (Date.now() < end) { db.exec("BEGIN IMMEDIATE"); db.exec("UPDATE meta SET value = value WHERE key = 'format'"); db.exec("COMMIT"); }`, indexDbPath(root)],
    { stdout: "inherit", stderr: "inherit" },
  );
  try {
    await Bun.sleep(300);
    ensureVecTables(db, 4);
    const notes = db.query("SELECT id, hash FROM notes").all() as { id: number; hash: string }[];
    const failures: string[] = [];
    let writes = 0;
    for (const end = Date.now() + 1500; Date.now() < end; writes++) {
      const n = notes[writes % notes.length]!;
      const v = new Float32Array([1, 0, 0, 0]);
      try {
        writeNotes(db, [{ noteId: n.id, hash: n.hash, passages: [{ ord: 0, heading: "", text: "hello", input: "hello", hash: `p${writes}` }], vectors: [v], noteVector: v }], []);
      } catch (e) {
        failures.push(String(e));
      }
      if (writes % 50 === 0) await Bun.sleep(0);
    }
    let syncs = 0;
    for (const end = Date.now() + 1000; Date.now() < end; syncs++) {
      db.exec("DELETE FROM fts_stem_notes");
      await syncStemmed(db).catch((e) => failures.push(String(e)));
    }
    expect(writes).toBeGreaterThan(1000);
    expect(syncs).toBeGreaterThan(20);
    expect(failures).toEqual([]);
  } finally {
    hammer.kill();
    await hammer.exited;
    db.close();
    rmSync(root, { recursive: true, force: true });
  }
}, 20_000);
