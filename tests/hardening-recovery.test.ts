// Item 11 of the hardening issue: what a crashed server left behind (pending
// timeline rows, temp files) is settled when the next server starts, before
// any write — not at the first write, as it used to be.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStateDb, openStateDbNoSync } from "../lib/store/state-db";
import { hashBytes } from "../lib/write/atomic";
import { insertPending, listEdits } from "../lib/write/edits";
import { BUN } from "./helpers/cli";
import { copyVault, startTestServer, type TestServer } from "./helpers/server";

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
  const ids = insertPending(db, [edit("Crash/landed.md", landed, `Crash/${tmpName(0)}`), edit("Crash/unlanded.md", unlanded, `Crash/${tmpName(1)}`)]);
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
