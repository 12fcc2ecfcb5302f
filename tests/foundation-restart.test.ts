// Restart reuse: reopening an indexed vault re-reads only what changed on
// disk since, and index.db can be thrown away at any time (state.db, with the
// tokens, survives it).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { appendFileSync, existsSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { IndexChange } from "../lib/index/indexer";
import { createToken, verifyToken } from "../lib/store/tokens";
import { VaultContext } from "../lib/vault-context";
import { connectClient, copyVault, payload, startTestServer } from "./helpers/server";

setDefaultTimeout(30_000);

let root: string;
let token: string;
beforeAll(async () => {
  root = copyVault();
  const v = VaultContext.open(root);
  const first = await v.indexer.fullScan();
  expect(first.changed.length).toBe(21);
  expect(first.attachments.sort()).toEqual(["assets/data.csv", "assets/diagram.png"]);
  token = createToken(v.stateDb, "survivor", "read").token;
  v.close();
});
afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

/** Open the vault, scan it, close it; returns what the scan changed (and what listeners heard). */
async function reopen(): Promise<{ change: IndexChange; heard: IndexChange[]; noteCount: number }> {
  const v = VaultContext.open(root);
  const heard: IndexChange[] = [];
  v.indexer.onChange((c) => heard.push(c));
  try {
    const change = await v.indexer.fullScan();
    const noteCount = (v.indexDb.query("SELECT count(*) AS n FROM notes").get() as { n: number }).n;
    return { change, heard, noteCount };
  } finally {
    v.close();
  }
}

const NOTHING: IndexChange = { changed: [], deleted: [], attachments: [] };

describe("restart", () => {
  test("an unchanged vault: nothing re-parsed, nobody notified", async () => {
    const { change, heard, noteCount } = await reopen();
    expect(change).toEqual(NOTHING);
    expect(heard).toEqual([]);
    expect(noteCount).toBe(21);
  });

  test("one note edited: only that note is re-parsed", async () => {
    appendFileSync(join(root, "Garden/Compost.md"), "\nAdded while the server was down: a kiwano.\n");
    const { change, heard } = await reopen();
    expect(change).toEqual({ changed: ["Garden/Compost.md"], deleted: [], attachments: [] });
    expect(heard).toEqual([change]);
    expect((await reopen()).change).toEqual(NOTHING);
  });

  test("an edit that kept the size and put the mtime back (rsync -t, cp -p, a sync client) is seen at the next start", async () => {
    const file = join(root, "Garden/Frost Dates.md");
    // A whole second, so that the time put back is the very same number (utimes keeps no sub-millisecond part).
    const at = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
    utimesSync(file, at, at);
    expect((await reopen()).change).toEqual(NOTHING);
    const before = statSync(file);
    const text = readFileSync(file, "utf8");
    // Same length, other bytes; then the old times back.
    const swapped = text.replace(/[a-z]/, (c) => (c === "z" ? "y" : String.fromCharCode(c.charCodeAt(0) + 1)));
    expect(swapped.length).toBe(text.length);
    writeFileSync(file, swapped);
    utimesSync(file, at, at);
    expect(statSync(file).mtimeMs).toBe(before.mtimeMs);
    const { change } = await reopen();
    expect(change.changed).toEqual(["Garden/Frost Dates.md"]);
    expect((await reopen()).change).toEqual(NOTHING);
    writeFileSync(file, text);
    expect((await reopen()).change.changed).toEqual(["Garden/Frost Dates.md"]);
  });

  test("a touched file with the same bytes is read but not re-parsed, and not read again next time", async () => {
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(root, "Recipes/Menemen.md"), later, later);
    expect((await reopen()).change).toEqual(NOTHING);
    expect((await reopen()).change).toEqual(NOTHING);
  });

  test("a note deleted and an attachment added while closed", async () => {
    rmSync(join(root, "Inbox/quick-thought.md"));
    writeFileSync(join(root, "assets/notes.txt"), "plain text attachment\n");
    const { change, noteCount } = await reopen();
    expect(change).toEqual({ changed: [], deleted: ["Inbox/quick-thought.md"], attachments: ["assets/notes.txt"] });
    expect(noteCount).toBe(20);
  });

  test("index.db deleted: a full rebuild, and tokens in state.db still work", async () => {
    for (const suffix of ["", "-wal", "-shm"]) rmSync(join(root, ".lettuce/index.db" + suffix), { force: true });
    expect(existsSync(join(root, ".lettuce/state.db"))).toBe(true);
    const { change, noteCount } = await reopen();
    expect(change.changed.length).toBe(20);
    expect(change.deleted).toEqual([]);
    expect(change.attachments.sort()).toEqual(["assets/data.csv", "assets/diagram.png", "assets/notes.txt"]);
    expect(noteCount).toBe(20);

    // The old token still opens the rebuilt vault through the real server.
    const s = await startTestServer({ root });
    try {
      expect(verifyToken(s.vault.stateDb, token)?.name).toBe("survivor");
      const c = await connectClient(s.url, token);
      const hits = payload(await c.callTool({ name: "search", arguments: { query: "kiwano" } }));
      expect(hits.items.map((i: any) => i.path)).toEqual(["Garden/Compost.md"]);
      await c.close();
    } finally {
      await s.close(); // root is ours: startTestServer({root}) leaves it in place
    }
  });

  test("a damaged index.db is rebuilt, not fatal", async () => {
    writeFileSync(join(root, ".lettuce/index.db"), "this is not a database ".repeat(200));
    for (const suffix of ["-wal", "-shm"]) rmSync(join(root, ".lettuce/index.db" + suffix), { force: true });
    const { change, noteCount } = await reopen();
    expect(change.changed.length).toBe(20);
    expect(noteCount).toBe(20);
    expect(readFileSync(join(root, ".lettuce/index.db")).subarray(0, 15).toString()).toBe("SQLite format 3");
  });
});
