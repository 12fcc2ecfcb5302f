// The change feed (get_changes_since) through the real server: edits,
// creates, deletes and renames made on disk while it runs, and while it is
// stopped; a rebuilt index re-reports nothing; cursors page and resume.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { appendFileSync, readdirSync, renameSync, rmSync, statSync, unlinkSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { openStateDb } from "../lib/store/state-db";
import { createToken } from "../lib/store/tokens";
import { freePort, spawnLettuce } from "./helpers/cli";
import { withEnv } from "./helpers/env";
import { connectClient, payload, startTestServer, waitFor, type TestServer } from "./helpers/server";
import { makeProjectVault, TASKS, write } from "./helpers/workspace-data";

setDefaultTimeout(60_000);

/** Every note and base on disk, walked here (not asked of the server). */
function itemsOnDisk(root: string, dir = ""): string[] {
  return readdirSync(join(root, dir)).flatMap((n) => {
    if (n.startsWith(".")) return [];
    const rel = dir ? `${dir}/${n}` : n;
    if (statSync(join(root, rel)).isDirectory()) return itemsOnDisk(root, rel);
    return /\.(md|base)$/.test(n) ? [rel] : [];
  });
}

async function drain(call: (args: Record<string, unknown>) => Promise<any>, start: Record<string, unknown>, limit = 100): Promise<{ changes: any[]; cursor: string }> {
  const changes: any[] = [];
  let args: any = { ...start, limit };
  for (let i = 0; i < 200; i++) {
    const page = await call(args);
    expect(typeof page.nextCursor).toBe("string");
    changes.push(...page.changes);
    if (!page.hasMore) return { changes, cursor: page.nextCursor as string };
    args = { cursor: page.nextCursor, limit };
  }
  throw new Error("the feed did not end");
}

const nextSecond = async (t: number) => waitFor(() => Math.floor(Date.now() / 1000) > Math.floor(t / 1000), { what: "the next second", timeoutMs: 3000 });

describe("change feed on a running server", () => {
  let s: TestServer;
  let root: string;
  beforeAll(async () => {
    root = makeProjectVault();
    s = await startTestServer({ root, watch: true });
  });
  afterAll(async () => {
    await s?.close();
    rmSync(root, { recursive: true, force: true });
  });

  test("a bootstrap lists every note and base as created, with types and databases; pages of 3 cover it once", async () => {
    const { changes } = await drain((a) => s.call("get_changes_since", a), {}, 3);
    const got = changes.map((c) => c.id);
    expect(new Set(got).size).toBe(got.length);
    expect(got.sort()).toEqual(itemsOnDisk(root).sort());
    expect(changes.every((c) => c.changeType === "created" && !Number.isNaN(Date.parse(c.updatedAt)))).toBe(true);
    const byId = Object.fromEntries(changes.map((c) => [c.id, c]));
    expect(byId["Tasks.base"]).toMatchObject({ type: "database", title: "Tasks" });
    expect(byId["Tasks/Fix login bug.md"]).toMatchObject({ type: "database_row", databaseId: "Boards/Auth.base", title: "Fix login bug" });
    expect(byId["Tasks/Triage inbox.md"]).toMatchObject({ type: "database_row", databaseId: "Tasks.base" });
    expect(byId["Projects/Lettuce.md"]).toMatchObject({ type: "page", title: "Lettuce" });
    expect(byId["Projects/Lettuce.md"].databaseId).toBeUndefined();
  });

  test("edits, creates, deletes and renames on disk; a deleted note keeps its last title; nextCursor always returned", async () => {
    const start = await drain((a) => s.call("get_changes_since", a), {});
    await nextSecond(Date.now());
    appendFileSync(join(root, "Projects/Lettuce.md"), "\nEdited in another editor.\n");
    write(root, "Inbox/New idea.md", "# New idea\n\nBorn while the server watched.\n");
    unlinkSync(join(root, "Inbox/Idea.md"));
    renameSync(join(root, "Meetings/2026-03-02.md"), join(root, "Meetings/Standup.md"));
    write(root, "Tasks.base", TASKS_BASE_EDITED);
    await s.vault.settle();
    const { changes, cursor } = (await waitFor(async () => {
      const r = await drain((a) => s.call("get_changes_since", a), { cursor: start.cursor });
      return r.changes.length >= 6 ? r : undefined;
    }, { what: "the watcher's changes" }))!;
    const by = (id: string) => changes.filter((c) => c.id === id);
    expect(by("Projects/Lettuce.md").map((c) => c.changeType)).toEqual(["updated"]);
    expect(by("Inbox/New idea.md")[0]).toMatchObject({ changeType: "created", type: "page", title: "New idea" });
    expect(by("Inbox/Idea.md")[0]).toMatchObject({ changeType: "deleted", type: "page", title: "Idea" });
    expect(by("Meetings/2026-03-02.md")[0]).toMatchObject({ changeType: "deleted", title: "Standup 2026-03-02", type: "database_row", databaseId: "Boards/Auth.base" });
    expect(by("Meetings/Standup.md")[0]).toMatchObject({ changeType: "created", title: "Standup 2026-03-02" });
    expect(by("Tasks.base")[0]).toMatchObject({ changeType: "updated", type: "database" });
    expect(changes.length).toBe(6);
    // Nothing more once the second has passed: an empty page still carries a cursor.
    await nextSecond(Date.now());
    const empty = await s.call("get_changes_since", { cursor });
    expect(empty).toMatchObject({ changes: [], hasMore: false });
    expect(typeof empty.nextCursor).toBe("string");
  });

  test("a cursor within its own second is inclusive: the same second is re-reported, and nothing older", async () => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const before = await drain((a) => s.call("get_changes_since", a), {});
      await nextSecond(Date.now());
      write(root, "Inbox/Same second.md", `# Same second\n\n${attempt}\n`);
      await s.vault.settle();
      await waitFor(async () => (await s.call("get_changes_since", { cursor: before.cursor })).changes.length > 0, { what: "the watcher" });
      const first = await s.call("get_changes_since", { cursor: before.cursor });
      const issued = Date.now();
      const again = await s.call("get_changes_since", { cursor: first.nextCursor });
      if (Math.floor(Date.now() / 1000) !== Math.floor(issued / 1000) || Math.floor(issued / 1000) !== Math.floor(Date.parse(first.changes[0].updatedAt) / 1000)) continue; // crossed a second boundary: try again
      expect(again.changes.map((c: any) => c.id)).toEqual(["Inbox/Same second.md"]);
      await nextSecond(issued);
      expect((await s.call("get_changes_since", { cursor: again.nextCursor })).changes).toEqual([]);
      return;
    }
    throw new Error("could not stay within one second in five attempts");
  });

  test("since: changes recorded at or after the time; created vs updated relative to it", async () => {
    await nextSecond(Date.now());
    const t0 = new Date().toISOString();
    write(root, "Inbox/Since.md", "# Since\n");
    appendFileSync(join(root, "Tasks/Rotate keys.md"), "\nAlso the webhook secret.\n");
    await s.vault.settle();
    const res = await waitFor(async () => {
      const r = await s.call("get_changes_since", { since: t0 });
      return r.changes.length >= 2 ? r : null;
    }, { what: "the watcher" });
    const types = Object.fromEntries(res.changes.map((c: any) => [c.id, c.changeType]));
    expect(types).toEqual({ "Inbox/Since.md": "created", "Tasks/Rotate keys.md": "updated" });
    // Rows journalled before created_seen_at existed (a vault upgraded from an older Lettuce) have none:
    // they were all "updated" to a since= sync; the journal's order decides for them, as it did then.
    const kept = s.vault.stateDb.query("SELECT id, created_seen_at FROM change_journal").all() as { id: string; created_seen_at: number | null }[];
    s.vault.stateDb.exec("UPDATE change_journal SET created_seen_at = NULL");
    const legacy = await s.call("get_changes_since", { since: t0 });
    expect(Object.fromEntries(legacy.changes.map((c: any) => [c.id, c.changeType]))).toEqual(types);
    const restore = s.vault.stateDb.query("UPDATE change_journal SET created_seen_at = ? WHERE id = ?");
    for (const k of kept) restore.run(k.created_seen_at, k.id);
    // Created after `since`, then edited, with another item changed between the two: still "created" (the
    // agent audit of 2026-12-05 got "updated", as the item's row had moved on past the other's).
    appendFileSync(join(root, "Inbox/Since.md"), "\nedited after another change\n");
    await s.vault.settle();
    const again = await waitFor(async () => {
      const r = await s.call("get_changes_since", { since: t0 });
      const c = r.changes.find((x: any) => x.id === "Inbox/Since.md");
      return c && r.changes.indexOf(c) === r.changes.length - 1 ? r : null;
    }, { what: "the edit" });
    expect(again.changes.find((x: any) => x.id === "Inbox/Since.md").changeType).toBe("created");
    // The same, a page of one at a time (the review found later pages fell back to the row's position).
    const paged: Record<string, string> = {};
    let page = await s.call("get_changes_since", { since: t0, limit: 1 });
    for (let i = 0; i < 10; i++) {
      for (const c of page.changes) paged[c.id] = c.changeType;
      if (!page.hasMore) break;
      page = await s.call("get_changes_since", { cursor: page.nextCursor, limit: 1 });
    }
    expect(paged).toEqual({ "Inbox/Since.md": "created", "Tasks/Rotate keys.md": "updated" });
    const future = await s.call("get_changes_since", { since: "2999-01-01T00:00:00Z" });
    expect(future.changes).toEqual([]);
    expect(typeof future.nextCursor).toBe("string");
  });

  test("the feed is chronological: a note moved or copied with an old mtime is dated when it was seen, never before `since`", async () => {
    await nextSecond(Date.now());
    const t0 = new Date().toISOString();
    write(root, "Inbox/Fresh.md", "# Fresh\n");
    write(root, "Inbox/Old copy.md", "# Old copy\n");
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(join(root, "Inbox/Old copy.md"), hourAgo, hourAgo);
    await s.vault.settle();
    const res = await waitFor(async () => {
      const r = await s.call("get_changes_since", { since: t0 });
      const ids = r.changes.map((c: any) => c.id);
      return ids.includes("Inbox/Fresh.md") && ids.includes("Inbox/Old copy.md") ? r : null;
    }, { what: "the watcher" });
    const times = res.changes.map((c: any) => Date.parse(c.updatedAt));
    // (A file's mtime comes from the kernel's coarse clock: a few ms behind Date.now() at most.)
    for (const c of res.changes.filter((c: any) => c.id === "Inbox/Fresh.md" || c.id === "Inbox/Old copy.md")) {
      expect(Date.parse(c.updatedAt), c.id).toBeGreaterThanOrEqual(Date.parse(t0) - 50);
    }
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  test("write tools count too", async () => {
    const { cursor } = await drain((a) => s.call("get_changes_since", a), {});
    await s.call("write_note", { path: "Inbox/From an agent.md", content: "# From an agent\n" });
    const res = await s.call("get_changes_since", { cursor });
    expect(res.changes.map((c: any) => [c.id, c.changeType])).toContainEqual(["Inbox/From an agent.md", "created"]);
  });

  test("bad cursors and times are invalid-input, not a crash", async () => {
    // The last: a cursor past the journal's end (a forged one, or one from before the index was rebuilt),
    // which was taken as it was and kept the feed quiet until the history caught up with it.
    const past = Buffer.from('{"v":1,"s":1000000000000,"c":0,"d":0,"t":0}').toString("base64url");
    for (const args of [{ cursor: "nope" }, { cursor: Buffer.from('{"v":1,"s":-1,"c":0,"d":0,"t":0}').toString("base64url") }, { since: "yesterday" }, { since: "2026-13-45" }, { cursor: past }]) {
      const res = await s.callRaw("get_changes_since", args);
      expect(res.isError).toBe(true);
      expect(res.kind).toBe("invalid-input");
    }
  });
});

const TASKS_BASE_EDITED = `filters:\n  and:\n    - file.inFolder("Tasks")\nviews:\n  - type: table\n    name: Everything\n`;

describe("change feed across restarts of `lettuce serve`", () => {
  let root: string;
  let token: string;
  beforeAll(() => {
    root = makeProjectVault();
    const db = openStateDb(root);
    token = createToken(db, "feed-reader", "read").token;
    db.close();
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  async function serveAnd<T>(fn: (call: (name: string, args: Record<string, unknown>) => Promise<any>) => Promise<T>): Promise<T> {
    const port = freePort();
    const proc = await withEnv({ LETTUCE_EMBED_PROVIDER: "none" }, async () => spawnLettuce(["serve", root, "--port", String(port)]));
    try {
      await proc.waitForStdout(/Index current/);
      const client = await connectClient(`http://127.0.0.1:${port}/mcp`, token);
      try {
        return await fn(async (name, args) => payload(await client.callTool({ name, arguments: args })));
      } finally {
        await client.close();
      }
    } finally {
      expect(await proc.stop()).toBe(0);
    }
  }

  test("changes made while it was stopped are found by the start-up scan; a rebuilt index re-reports nothing", async () => {
    const first = await serveAnd((call) => drain((a) => call("get_changes_since", a), {}));
    expect(first.changes.map((c) => c.id).sort()).toEqual(itemsOnDisk(root).sort());
    // A cursor used within the second it was issued in re-reports that second (by design, see the
    // describe above): on a fast machine both serves fit in one second, so start the second one later.
    await nextSecond(Date.now());

    // While stopped: edit, delete, create, rename.
    const edited = TASKS[1]!.path;
    appendFileSync(join(root, edited), "\nEdited while the server was down.\n");
    unlinkSync(join(root, TASKS[2]!.path));
    write(root, "Inbox/Offline.md", "# Offline\n");
    renameSync(join(root, "Projects/Lettuce.md"), join(root, "Projects/Lettuce (renamed).md"));
    const mtime = statSync(join(root, edited)).mtimeMs;

    const second = await serveAnd((call) => drain((a) => call("get_changes_since", a), { cursor: first.cursor }));
    const got = Object.fromEntries(second.changes.map((c) => [c.id, c]));
    expect(Object.keys(got).sort()).toEqual([edited, TASKS[2]!.path, "Inbox/Offline.md", "Projects/Lettuce.md", "Projects/Lettuce (renamed).md"].sort());
    expect(got[edited]).toMatchObject({ changeType: "updated", type: "database_row", databaseId: "Tasks.base" });
    expect(Math.abs(Date.parse(got[edited].updatedAt) - mtime)).toBeLessThan(2);
    expect(got[TASKS[2]!.path]).toMatchObject({ changeType: "deleted", title: TASKS[2]!.title, type: "database_row", databaseId: "Ships.base" });
    expect(got["Inbox/Offline.md"].changeType).toBe("created");
    expect(got["Projects/Lettuce.md"].changeType).toBe("deleted");
    expect(got["Projects/Lettuce (renamed).md"].changeType).toBe("created");
    const issued = Date.now();

    // Throw the index away and delete one note: the next start rebuilds the index, and the
    // feed reports the deletion (found by the reconcile after the scan) and nothing else.
    for (const f of ["index.db", "fts.db"]) for (const suffix of ["", "-wal", "-shm"]) rmSync(join(root, ".lettuce", f + suffix), { force: true });
    unlinkSync(join(root, "Inbox/Offline.md"));
    await nextSecond(issued);
    const third = await serveAnd((call) => drain((a) => call("get_changes_since", a), { cursor: second.cursor }));
    expect(third.changes.map((c) => [c.id, c.changeType, c.title])).toEqual([["Inbox/Offline.md", "deleted", "Offline"]]);
  });
});
