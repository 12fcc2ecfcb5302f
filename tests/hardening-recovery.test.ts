// Item 11 of the hardening issue: what a crashed server left behind (pending
// timeline rows, temp files) is settled when the next server starts, before
// any write — not at the first write, as it used to be.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStateDb, openStateDbNoSync } from "../lib/store/state-db";
import { hashBytes } from "../lib/write/atomic";
import { insertPending, listEdits } from "../lib/write/edits";
import { BUN, MAIN, runLettuce } from "./helpers/cli";
import { twoProposals } from "./helpers/proposals";
import { copyVault, startTestServer, tempDir, waitFor, type TestServer } from "./helpers/server";

let root: string;
let s: TestServer | undefined;
let deadPid: number;
beforeAll(async () => {
  root = copyVault();
  // A pid that belonged to a process which has exited: the "crashed server".
  const p = Bun.spawn([BUN, "-e", "0"]);
  await p.exited;
  deadPid = p.pid;
});
afterAll(async () => {
  await s?.close();
  rmSync(root, { recursive: true, force: true });
});

const tmpName = (n: number) => `.lettuce-tmp-${deadPid}-crash-${n}`;

/** A timeline row of a move_note call, as insertPending takes it. */
const moveRow = (action: "write" | "move", path: string, before: Buffer, after: Buffer, extra: Record<string, unknown> = {}) => ({
  tool: "move_note", action, path, before, after, beforeHash: hashBytes(before), afterHash: hashBytes(after), agent: "crashed", token: "t", ...extra,
});

test("pending rows and leftover temp files are settled at start, before any write", async () => {
  openStateDb(root).close(); // creates state.db's tables
  const db = openStateDbNoSync(root);
  const landed = Buffer.from("# Landed\n\nthe rename happened before the crash\n");
  const unlanded = Buffer.from("# Never landed\n");
  mkdirSync(join(root, "Crash"), { recursive: true });
  writeFileSync(join(root, "Crash/landed.md"), landed);
  // A write whose rename never happened: its temp file is still there.
  writeFileSync(join(root, "Crash", tmpName(1)), unlanded);
  const edit = (path: string, after: Buffer, tmp: string) => ({
    tool: "write_note", action: "write" as const, path, before: null, after, beforeHash: null, afterHash: hashBytes(after),
    agent: "crashed", token: "t", tmp,
  });
  // Two calls (two groups): one that landed, one whose rename never happened.
  const ids = [...insertPending(db, [edit("Crash/landed.md", landed, `Crash/${tmpName(0)}`)]), ...insertPending(db, [edit("Crash/unlanded.md", unlanded, `Crash/${tmpName(1)}`)])];
  db.query(`UPDATE agent_edits SET owner_pid = ? WHERE id IN (${ids.join(",")})`).run(deadPid);
  db.close();
  // A temp file no row names (a crash between steps), and one of a live process (this one), which stays.
  writeFileSync(join(root, "Inbox", tmpName(2)), "orphan");
  writeFileSync(join(root, "Inbox", `.lettuce-tmp-${process.pid}-live-0`), "still being written");

  s = await startTestServer({ root });
  // No tool call yet: start-up alone must have settled everything.
  const check = openStateDbNoSync(root);
  const pending = check.query("SELECT count(*) AS n FROM agent_edits WHERE state = 'pending'").get() as { n: number };
  const applied = listEdits(check).map((e) => e.path);
  check.close();
  expect(pending.n).toBe(0);
  expect(applied).toContain("Crash/landed.md");
  expect(applied).not.toContain("Crash/unlanded.md");
  expect(existsSync(join(root, "Crash", tmpName(1)))).toBe(false);
  expect(existsSync(join(root, "Crash/unlanded.md"))).toBe(false);
  expect(existsSync(join(root, "Inbox", tmpName(2)))).toBe(false);
  expect(existsSync(join(root, "Inbox", `.lettuce-tmp-${process.pid}-live-0`))).toBe(true);
  rmSync(join(root, "Inbox", `.lettuce-tmp-${process.pid}-live-0`));
  const temps = readdirSync(root, { recursive: true }).map(String).filter((p) => p.includes(".lettuce-tmp"));
  expect(temps).toEqual([]);
});

// A replacement is an atomic exchange (lib/write/vault-dir.ts, swapInChecked): until the temp file is
// removed, its name holds what the note held. A server killed in that instant (tests/write-crash.test.ts
// caught it once in a full run) left a note with its new bytes and a temp with its old ones, and the
// recovery read "temp still there" as "never renamed": the timeline then named the old version as the
// note's latest. And when the exchange displaced a person's save (made after the check), that save is
// what the temp holds: it goes back in place, not into the bin.
test("a write killed between its exchange and its temp's removal is settled by what the files hold", async () => {
  await s?.close();
  s = undefined;
  const db = openStateDbNoSync(root);
  const before = Buffer.from("# Exchanged\n\nthe version the agent planned from\n");
  const after = Buffer.from("# Exchanged\n\nthe agent's new version\n");
  const saved = Buffer.from("# Exchanged\n\na person's save, made after the check\n");
  // Exchanged: the note holds the new bytes, the temp the replaced ones.
  writeFileSync(join(root, "Crash/exchanged.md"), after);
  writeFileSync(join(root, "Crash", tmpName(3)), before);
  // Exchanged with a person's save, killed before the swap back.
  writeFileSync(join(root, "Crash/displaced.md"), after);
  writeFileSync(join(root, "Crash", tmpName(4)), saved);
  const edit = (path: string, tmp: string) => ({
    tool: "write_note", action: "write" as const, path, before, after, beforeHash: hashBytes(before), afterHash: hashBytes(after),
    agent: "crashed", token: "t", tmp,
  });
  const ids = [...insertPending(db, [edit("Crash/exchanged.md", `Crash/${tmpName(3)}`)]), ...insertPending(db, [edit("Crash/displaced.md", `Crash/${tmpName(4)}`)])];
  db.query(`UPDATE agent_edits SET owner_pid = ? WHERE id IN (${ids.join(",")})`).run(deadPid);
  db.close();

  s = await startTestServer({ root });
  const check = openStateDbNoSync(root);
  const pending = check.query("SELECT count(*) AS n FROM agent_edits WHERE state = 'pending'").get() as { n: number };
  const edits = listEdits(check);
  check.close();
  expect(pending.n).toBe(0);
  // The exchange landed: on the timeline, as the note's latest, with the bytes the note holds.
  const exchanged = edits.find((e) => e.path === "Crash/exchanged.md");
  expect(exchanged?.afterHash).toBe(hashBytes(readFileSync(join(root, "Crash/exchanged.md"))));
  expect(readFileSync(join(root, "Crash/exchanged.md"), "utf8")).toBe(after.toString());
  // The person's save is the note again, and the agent's write is not on the timeline.
  expect(readFileSync(join(root, "Crash/displaced.md"), "utf8")).toBe(saved.toString());
  expect(edits.map((e) => e.path)).not.toContain("Crash/displaced.md");
  const temps = readdirSync(root, { recursive: true }).map(String).filter((p) => p.includes(".lettuce-tmp"));
  expect(temps).toEqual([]);
});

test("an index another process holds locked: the write is reported as done, and the index catches up once it is free", async () => {
  const { Database } = await import("bun:sqlite");
  const s = await startTestServer({ watch: true });
  try {
    const lock = new Database(join(s.root, ".lettuce/index.db"));
    lock.exec("PRAGMA busy_timeout = 0");
    lock.exec("BEGIN IMMEDIATE");
    lock.exec("CREATE TABLE IF NOT EXISTS held_by_test(x)");
    // The note lands and is on the timeline; its re-index waits out the lock and fails.
    const res: any = await s.callRaw("write_note", { path: "Inbox/locked.md", content: "# Locked\n\nquokkamarker\n" });
    expect(res.isError, res.content[0].text).toBeFalsy();
    expect(JSON.parse(res.content[0].text)).toMatchObject({ created: true });
    writeFileSync(join(s.root, "Inbox/person.md"), "# Person\n\nwombatmarker\n"); // a person's save meanwhile
    await Bun.sleep(300);
    lock.exec("ROLLBACK");
    lock.close();
    // Both were dropped for good before: the watcher now tries failed passes again.
    const found = async () => (await s.call("search", { query: "quokkamarker OR wombatmarker" }, "read")).total;
    const deadline = Date.now() + 60_000;
    while ((await found()) < 2 && Date.now() < deadline) await Bun.sleep(200);
    expect(await found()).toBe(2);
  } finally {
    await s.close();
  }
}, 90_000);

test("a vault folder or .lettuce removed while serving stops the server, rather than writing on into deleted files", async () => {
  const { freePort, spawnLettuce } = await import("./helpers/cli");
  // "link": the folder moved away and a symlink to it put in its place, which statSync took for the same folder.
  for (const remove of [".lettuce", "", ".lettuce/index.db", "link"]) {
    const root = copyVault();
    try {
      const srv = spawnLettuce(["serve", root, "--port", String(freePort())], { env: { LETTUCE_EMBED_PROVIDER: "none" } });
      await srv.waitForStdout(/Index current/, 30_000);
      if (remove === "link") {
        renameSync(root, `${root}.real`);
        symlinkSync(`${root}.real`, root);
      } else rmSync(join(root, remove), { recursive: true, force: true });
      const deadline = Date.now() + 20_000;
      while (srv.proc.exitCode === null && Date.now() < deadline) await Bun.sleep(100);
      expect(srv.proc.exitCode, remove || "the vault").toBe(1);
      expect(srv.stderr()).toContain("was removed or replaced");
      await srv.stop();
    } finally {
      rmSync(root, { recursive: true, force: true });
      rmSync(`${root}.real`, { recursive: true, force: true });
    }
  }
}, 90_000);

// The same for `lettuce stdio`, which a desktop client keeps running for days (the sync audit of 2026-12-05):
// with the vault re-cloned under it, reads failed `internal` and writes went to the new folder with their
// timeline in the old one.
test("a vault folder replaced under `lettuce stdio` stops it", async () => {
  const root = copyVault();
  try {
    const proc = Bun.spawn([BUN, MAIN, "stdio", root, "--scope", "write"], { stdin: "pipe", stdout: "pipe", stderr: "pipe", env: { ...process.env, LETTUCE_EMBED_PROVIDER: "none" } });
    proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })}\n`);
    proc.stdin.flush();
    await proc.stdout.getReader().read(); // answered: the vault is open and scanned
    renameSync(root, `${root}.old`);
    cpSync(`${root}.old`, root, { recursive: true, filter: (p) => !p.includes(".lettuce") });
    const deadline = Date.now() + 20_000;
    while (proc.exitCode === null && Date.now() < deadline) await Bun.sleep(100);
    expect(proc.exitCode).toBe(1);
    expect(await new Response(proc.stderr).text()).toContain("was removed or replaced while serving; stopping");
    proc.kill();
  } finally {
    rmSync(root, { recursive: true, force: true });
    rmSync(`${root}.old`, { recursive: true, force: true });
  }
}, 60_000);

// A `lettuce proposals approve` killed between its claim and recording the edit (the crash audit of
// 2026-12-05) left the proposal "approved" with nothing applied, and approving it again said "already
// approved". The claim names its process; the next start settles a dead process's claims.
test("an approval killed midway: reopened when nothing landed, recorded when the write did", async () => {
  await s?.close();
  s = undefined;
  const { vault, unlanded, landed, edit } = await twoProposals("proposed");
  const db = openStateDb(vault);
  // The state each crash leaves: claimed by a process that is gone, no edit recorded.
  db.query("UPDATE proposals SET status = 'approved', claimed_by = ?, edit_id = NULL WHERE id IN (?, ?)").run(deadPid, unlanded, landed);
  db.close();

  const again = await startTestServer({ root: vault });
  try {
    const rows = () => {
      const d = openStateDb(vault);
      try {
        return d.query("SELECT id, status, edit_id, claimed_by FROM proposals ORDER BY id").all();
      } finally {
        d.close();
      }
    };
    expect(rows()).toEqual([
      { id: unlanded, status: "pending", edit_id: null, claimed_by: null },
      { id: landed, status: "approved", edit_id: edit, claimed_by: null },
    ]);
    const ok = await runLettuce(["proposals", vault, "approve", String(unlanded)]);
    expect(ok.code).toBe(0);
    expect(readFileSync(join(vault, "Crash/proposed-a.md"), "utf8")).toContain("proposed, never applied");
  } finally {
    await again.close();
  }
});

// A call that changes several files (a move and its backlink rewrites, a revert of one) renames them in
// order, after every temp file is written and fsynced. A crash partway left it half-done (the crash audit
// of 2026-12-05: a half-moved note, some links rewritten and some not), and a write to a note that the
// same call then moved was judged "never happened". The next start completes such a call from its temp
// files, or keeps what landed when a file changed since.
test("a several-file call killed partway is completed at the next start, or kept as it landed when a file changed since", async () => {
  await s?.close();
  s = undefined;
  const vault = copyVault();
  mkdirSync(join(vault, "Grp"), { recursive: true });
  const b = (t: string) => Buffer.from(t);
  const put = (rel: string, bytes: Buffer) => writeFileSync(join(vault, rel), bytes);
  // Call 1, move_note Grp/T.md -> Grp/T2.md with two backlinks: A's rewrite landed, B's and the move did not.
  const aOld = b("# A\n\nsee [[T]]\n"), aNew = b("# A\n\nsee [[T2]]\n");
  const bOld = b("# B\n\nalso [[T]]\n"), bNew = b("# B\n\nalso [[T2]]\n");
  const tText = b("# T\n\nthe moved note\n");
  put("Grp/A.md", aNew);
  put("Grp/B.md", bOld);
  put(`Grp/${tmpName(10)}`, bNew);
  put("Grp/T.md", tText);
  // Call 2, a self-link rewrite and then the move of that same note: both landed.
  const uOld = b("# U\n\nme: [[U]]\n"), uNew = b("# U\n\nme: [[U2]]\n");
  put("Grp/U2.md", uNew);
  // Call 3, two rewrites: C's landed; D's did not, and a person has edited D since.
  const cOld = b("# C\n\n[[V]]\n"), cNew = b("# C\n\n[[V2]]\n");
  const dOld = b("# D\n\n[[V]]\n"), dNew = b("# D\n\n[[V2]]\n");
  const dPerson = b("# D\n\n[[V]] and a person's line\n");
  put("Grp/C.md", cNew);
  put("Grp/D.md", dPerson);
  put(`Grp/${tmpName(11)}`, dNew);
  openStateDb(vault).close();
  const db = openStateDbNoSync(vault);
  const calls = [
    insertPending(db, [
      moveRow("write", "Grp/A.md", aOld, aNew),
      moveRow("write", "Grp/B.md", bOld, bNew, { tmp: `Grp/${tmpName(10)}` }),
      moveRow("move", "Grp/T2.md", tText, tText, { fromPath: "Grp/T.md" }),
    ]),
    insertPending(db, [moveRow("write", "Grp/U.md", uOld, uNew), moveRow("move", "Grp/U2.md", uNew, uNew, { fromPath: "Grp/U.md" })]),
    insertPending(db, [moveRow("write", "Grp/C.md", cOld, cNew), moveRow("write", "Grp/D.md", dOld, dNew, { tmp: `Grp/${tmpName(11)}` })]),
  ];
  db.query(`UPDATE agent_edits SET owner_pid = ? WHERE state = 'pending'`).run(deadPid);
  db.close();

  const t = await startTestServer({ root: vault });
  try {
    const check = openStateDbNoSync(vault);
    const states = check.query("SELECT id, state FROM agent_edits ORDER BY id").all() as { id: number; state: string }[];
    check.close();
    const stateOf = (id: number) => states.find((r) => r.id === id)?.state ?? "dropped";
    // Call 1 completed: B rewritten, T moved; every row on the timeline.
    expect(readFileSync(join(vault, "Grp/B.md"), "utf8")).toBe(bNew.toString());
    expect(existsSync(join(vault, "Grp/T.md"))).toBe(false);
    expect(readFileSync(join(vault, "Grp/T2.md"), "utf8")).toBe(tText.toString());
    expect(calls[0]!.map(stateOf)).toEqual(["applied", "applied", "applied"]);
    // Call 2: both rows kept (the write used to be dropped, its note having moved on).
    expect(calls[1]!.map(stateOf)).toEqual(["applied", "applied"]);
    // Call 3: C as it landed; D is the person's, untouched, and its row is gone.
    expect(readFileSync(join(vault, "Grp/D.md"), "utf8")).toBe(dPerson.toString());
    expect(calls[2]!.map(stateOf)).toEqual(["applied", "dropped"]);
    const temps = readdirSync(vault, { recursive: true }).map(String).filter((p) => p.includes(".lettuce-tmp"));
    expect(temps).toEqual([]);
    // The server knows the completed move.
    await waitFor(async () => (await t.call("search", { query: "moved note" })).items.some((h: any) => h.path === "Grp/T2.md"));
  } finally {
    await t.close();
  }
});

// An index pass that adds more than 2,000 notes commits every 2,000, and re-resolves older notes' links to
// the new names at its end. Killed after an intermediate commit (the crash audit of 2026-12-05), those
// links stayed unresolved for good: the next pass saw the new notes as unchanged. Now the partial commit
// leaves a mark, and the next pass retries every unresolved link.
test("an index pass killed after an intermediate commit: the next pass resolves the links it had not", async () => {
  const { Database } = await import("bun:sqlite");
  const N = 3000;
  const count = (root: string, sql: string): number => {
    try {
      const db = new Database(join(root, ".lettuce/index.db"), { readonly: true });
      try {
        return (db.query(sql).get() as { n: number }).n;
      } finally {
        db.close();
      }
    } catch {
      return -1;
    }
  };
  let caught = false;
  for (let attempt = 0; attempt < 3 && !caught; attempt++) {
    const root = tempDir();
    mkdirSync(join(root, "new"));
    writeFileSync(join(root, "Old.md"), `# Old\n\n${Array.from({ length: N }, (_, i) => `[[New-${i}]]`).join("\n")}\n`);
    expect((await runLettuce(["index", root])).code).toBe(0);
    for (let i = 0; i < N; i++) writeFileSync(join(root, "new", `New-${i}.md`), `# New ${i}\n`);
    const proc = Bun.spawn([BUN, MAIN, "index", root], { stdout: "ignore", stderr: "ignore" });
    while (proc.exitCode === null && count(root, "SELECT count(*) AS n FROM notes") <= 1) await Bun.sleep(2);
    proc.kill("SIGKILL");
    await proc.exited;
    const notes = count(root, "SELECT count(*) AS n FROM notes");
    if (notes <= 1 || notes > N) continue; // finished (or not started) before the kill: try again
    caught = true;
    expect((await runLettuce(["index", root])).code).toBe(0);
    const resolved = count(root, "SELECT count(l.resolved) AS n FROM links l JOIN notes n ON n.id = l.note_id WHERE n.path = 'Old.md'");
    expect(resolved).toBe(N);
  }
  expect(caught).toBe(true);
}, 120_000);

// A rename recovery cannot do (here the destination folder became a file since) must not stop the server
// from starting, then or at any later start (the review of 2026-12-05: it threw from the constructor).
test("a call recovery cannot complete: the server still starts, keeps what landed, and says which call", async () => {
  const vault = copyVault();
  mkdirSync(join(vault, "G"), { recursive: true });
  const b = (t: string) => Buffer.from(t);
  const aOld = b("# A\n\n[[T]]\n"), aNew = b("# A\n\n[[New/T]]\n"), tText = b("# T\n\nthe note to move\n");
  writeFileSync(join(vault, "G/A.md"), aNew); // landed
  writeFileSync(join(vault, "G/T.md"), tText);
  writeFileSync(join(vault, "New"), "a file where the destination folder would be\n");
  openStateDb(vault).close();
  const db = openStateDbNoSync(vault);
  const ids = insertPending(db, [moveRow("write", "G/A.md", aOld, aNew), moveRow("move", "New/T.md", tText, tText, { fromPath: "G/T.md" })]);
  db.query("UPDATE agent_edits SET owner_pid = ?").run(deadPid);
  db.close();
  for (let start = 0; start < 2; start++) {
    const t = await startTestServer({ root: vault });
    try {
      expect((await t.call("get_vault_info")).noteCount).toBeGreaterThan(0);
    } finally {
      await t.close();
    }
  }
  const check = openStateDbNoSync(vault);
  const states = check.query("SELECT id, state FROM agent_edits ORDER BY id").all();
  check.close();
  expect(states).toEqual([{ id: ids[0], state: "applied" }]);
  expect(readFileSync(join(vault, "G/T.md"), "utf8")).toBe(tText.toString());
});

// The soak audit of 2026-12-05: a CLI command opening the index while a server wrote to it read the two
// files' generations between the server's two commits (a transaction over attached files is atomic per
// file in WAL mode), took that for a crash, and deleted both files under the running server.
test("opening the index while a server commits to it never deletes it", async () => {
  const { openIndexIfCurrent } = await import("../lib/store/index-db");
  const t = await startTestServer({ watch: true });
  try {
    const ino = () => statSync(join(t.root, ".lettuce/index.db")).ino;
    const before = ino();
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) await t.call("write_note", { path: `Busy/n${i % 20}.md`, content: `# N ${i}\n\nbusymarker ${i}\n`, overwrite: true });
    })();
    // Another process (a CLI command) opening the index again and again meanwhile: in this process the
    // server's commits cannot fall between two reads, so the opener must be a process of its own.
    const opener = Bun.spawn(
      [BUN, "-e", `const { openIndexDb, openIndexIfCurrent } = await import(${JSON.stringify(join(import.meta.dir, "../lib/store/index-db.ts"))});
        let n = 0; const until = Date.now() + 4000;
        while (Date.now() < until) { openIndexDb(process.argv[1]).close(); openIndexIfCurrent(process.argv[1])?.close(); n++; }
        console.log(n);`, t.root],
      { stdout: "pipe", stderr: "pipe" },
    );
    const opens = Number((await new Response(opener.stdout).text()).trim());
    await opener.exited;
    writing = false;
    await writer;
    expect(opens).toBeGreaterThan(20);
    expect(ino()).toBe(before);
    const fresh = openIndexIfCurrent(t.root);
    expect(fresh).not.toBeNull();
    expect((fresh!.query("SELECT count(*) AS n FROM notes").get() as { n: number }).n).toBeGreaterThan(20);
    fresh!.close();
  } finally {
    await t.close();
  }
}, 60_000);

// The review of 2026-12-05: only `serve` announced itself, so a process that found the index unusable
// still deleted it under a `lettuce stdio` (a desktop client's, open all day). Every process with the
// index open is now known (.lettuce/users/), and none of them has it deleted from under it.
test("an index another Lettuce process has open is never deleted under it", async () => {
  const { Database } = await import("bun:sqlite");
  const { openIndexDb } = await import("../lib/store/index-db");
  const root = copyVault();
  expect((await runLettuce(["index", root])).code).toBe(0);
  const stdio = Bun.spawn([BUN, MAIN, "stdio", root], { stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  try {
    const users = join(root, ".lettuce/users");
    await waitFor(() => existsSync(join(users, String(stdio.pid))));
    // What a crash between the two files' commits leaves: their generations apart, for good.
    const db = new Database(join(root, ".lettuce/index.db"));
    db.query("UPDATE meta SET value = 'torn' WHERE key = 'gen'").run();
    db.close();
    const ino = statSync(join(root, ".lettuce/index.db")).ino;
    expect(() => openIndexDb(root)).toThrow(/in use by another Lettuce process/);
    expect(statSync(join(root, ".lettuce/index.db")).ino).toBe(ino);
  } finally {
    stdio.kill();
    await stdio.exited;
  }
  // Once it has gone, the unusable index is rebuilt as before.
  openIndexDb(root).close();
}, 60_000);
