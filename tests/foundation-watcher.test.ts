// The file watcher: edits made on disk by any editor reach the index (and so
// search) while the server runs. Each check polls with a deadline; the goal is
// "within a second or two", the deadline is generous for a loaded machine.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { appendFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, waitFor, type TestServer } from "./helpers/server";

setDefaultTimeout(30_000);

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ watch: true });
});
afterAll(() => s?.close());

const DEADLINE = { timeoutMs: 10_000 };
const hits = async (query: string): Promise<string[]> => (await s.call("search", { query }, "read")).items.map((i: any) => i.path).sort();
const until = (what: string, check: () => Promise<boolean>) => waitFor(check, { ...DEADLINE, what });
const same = (a: string[], b: string[]) => JSON.stringify(a) === JSON.stringify(b);

describe("watcher", () => {
  test("a note created on disk becomes searchable and readable", async () => {
    writeFileSync(join(s.root, "Inbox/Watched.md"), "---\ntags: [watched]\n---\n# Watched\n\nThe quokka waves. [[Compost]]\n");
    await until("the new note in search", async () => same(await hits("quokka"), ["Inbox/Watched.md"]));
    expect((await s.call("read_note", { path: "Inbox/Watched.md" })).title).toBe("Watched");
    expect((await s.call("notes_by_tag", { tag: "watched" })).total).toBe(1);
    const back = await s.call("list_backlinks", { path: "Garden/Compost.md" });
    expect(back.items.map((i: any) => i.sourcePath)).toContain("Inbox/Watched.md");
  });

  test("an edit replaces the old text", async () => {
    writeFileSync(join(s.root, "Inbox/Watched.md"), "# Watched\n\nThe wombat digs.\n");
    await until("the edit", async () => same(await hits("wombat"), ["Inbox/Watched.md"]) && (await hits("quokka")).length === 0);
    expect((await s.call("notes_by_tag", { tag: "watched" })).total).toBe(0);
    appendFileSync(join(s.root, "Inbox/Watched.md"), "\nAn appended numbat.\n");
    await until("the append", async () => same(await hits("numbat"), ["Inbox/Watched.md"]));
  });

  test("an edit that keeps the size and the mtime (a checkbox ticked, the time put back) is still seen", async () => {
    const file = join(s.root, "Inbox/Ticked.md");
    // A whole second, so that the time put back is the very same number (sub-millisecond parts do not survive utimes).
    const at = new Date(Math.floor(Date.now() / 1000) * 1000 - 5000);
    writeFileSync(file, "# Ticked\n\n- [ ] buy the kumquat\n");
    utimesSync(file, at, at);
    await until("the first text", async () => same(await hits("kumquat"), ["Inbox/Ticked.md"]));
    const before = statSync(file);
    // Same length: "[ ] buy the kumquat" and "[x] buy the loquat!" differ in bytes, not in size.
    writeFileSync(file, "# Ticked\n\n- [x] buy the loquat!\n");
    utimesSync(file, at, at);
    expect(statSync(file).size).toBe(before.size);
    expect(statSync(file).mtimeMs).toBe(before.mtimeMs);
    await until("the edit", async () => same(await hits("loquat"), ["Inbox/Ticked.md"]) && (await hits("kumquat")).length === 0);
    rmSync(file);
    await until("the note gone", async () => (await hits("loquat")).length === 0);
  });

  test("a rename moves the note (old path gone, new path found)", async () => {
    renameSync(join(s.root, "Inbox/Watched.md"), join(s.root, "Garden/Renamed.md"));
    await until("the rename", async () => same(await hits("wombat"), ["Garden/Renamed.md"]));
    expect(await s.callRaw("read_note", { path: "Inbox/Watched.md" })).toMatchObject({ isError: true, kind: "note-not-found" });
    expect((await s.call("read_note", { path: "Garden/Renamed.md" })).content).toContain("wombat");
  });

  test("a delete removes it", async () => {
    rmSync(join(s.root, "Garden/Renamed.md"));
    await until("the delete", async () => (await hits("wombat")).length === 0);
    expect(await s.callRaw("read_note", { path: "Garden/Renamed.md" })).toMatchObject({ isError: true, kind: "note-not-found" });
    expect((await s.call("get_vault_info")).noteCount).toBe(21);
  });

  // Editors' and sync clients' probes (vim's "4913", "~syncthing~x.tmp") come and go within a debounce: each
  // cost an index write, a new generation and a change-feed entry for a file never indexed (the sync audit).
  test("a file that came and went unindexed changes nothing in the index", async () => {
    const gen = () => (s.vault.indexDb.query("SELECT value FROM meta WHERE key = 'gen'").get() as { value: string }).value;
    const before = gen();
    for (const name of ["4913", "~syncthing~x.tmp", "Garden/Note.md~"]) {
      expect(await s.vault.indexer.update([name])).toEqual({ changed: [], deleted: [], attachments: [] });
    }
    expect(gen()).toBe(before);
  });

  test("a new sub-folder with a note inside (and a later note in it)", async () => {
    mkdirSync(join(s.root, "Fresh/Deeper"), { recursive: true });
    writeFileSync(join(s.root, "Fresh/Deeper/Inner.md"), "# Inner\n\nA platypus lives here.\n");
    await until("the note in the new folder", async () => same(await hits("platypus"), ["Fresh/Deeper/Inner.md"]));
    expect(await s.call("list_folders")).toEqual(expect.arrayContaining(["Fresh", "Fresh/Deeper"]));
    writeFileSync(join(s.root, "Fresh/Deeper/Second.md"), "# Second\n\nAnother platypus.\n");
    await until("a second note in the new folder", async () => same(await hits("platypus"), ["Fresh/Deeper/Inner.md", "Fresh/Deeper/Second.md"]));
  });

  test("a folder renamed, then deleted", async () => {
    renameSync(join(s.root, "Fresh"), join(s.root, "Moved"));
    await until("the folder rename", async () => same(await hits("platypus"), ["Moved/Deeper/Inner.md", "Moved/Deeper/Second.md"]));
    rmSync(join(s.root, "Moved"), { recursive: true });
    await until("the folder delete", async () => (await hits("platypus")).length === 0);
    expect((await s.call("list_notes", { limit: 100 })).total).toBe(21);
  });

  test("an attachment added (and removed) shows up in list_attachments", async () => {
    const bytes = Buffer.from("%PDF-1.4\n% watched\n");
    writeFileSync(join(s.root, "assets/new.pdf"), bytes);
    const listed = async () => (await s.call("list_attachments", { limit: 100 })).items.find((a: any) => a.path === "assets/new.pdf");
    await until("the new attachment", async () => Boolean(await listed()));
    expect(await listed()).toEqual({ path: "assets/new.pdf", size: bytes.length, mimeType: "application/pdf" });
    rmSync(join(s.root, "assets/new.pdf"));
    await until("the removed attachment", async () => !(await listed()));
  });

  test("a link to a note that appears later resolves once it exists", async () => {
    writeFileSync(join(s.root, "Inbox/Nonexistent Idea.md"), "# Nonexistent Idea\n\nNow it exists.\n");
    const broken = async () => (await s.call("list_outgoing_links", { path: "Inbox/quick-thought.md" })).items[0].resolvedPath;
    await until("the broken link to resolve", async () => (await broken()) === "Inbox/Nonexistent Idea.md");
    rmSync(join(s.root, "Inbox/Nonexistent Idea.md"));
    await until("the link to break again", async () => (await broken()) === null);
  });

  test("notes inside hidden folders (.obsidian) are ignored", async () => {
    mkdirSync(join(s.root, ".obsidian"), { recursive: true });
    writeFileSync(join(s.root, ".obsidian/hidden.md"), "# Hidden\n\nechidna\n");
    // A visible note written after it: once that one is indexed, the hidden one would have been too.
    writeFileSync(join(s.root, "Inbox/Marker.md"), "# Marker\n\nechidna bilby\n");
    await until("the marker note", async () => same(await hits("bilby"), ["Inbox/Marker.md"]));
    await s.vault.settle();
    expect(await hits("echidna")).toEqual(["Inbox/Marker.md"]);
  });
});

describe("watcher: folders replaced, busy files, big deletes", () => {
  let v: TestServer;
  beforeAll(async () => {
    v = await startTestServer({ watch: true });
  });
  afterAll(() => v?.close());
  const found = async (query: string): Promise<string[]> => (await v.call("search", { query }, "read")).items.map((i: any) => i.path).sort();
  const notesUnder = async (folder: string): Promise<string[]> =>
    (await v.call("list_notes", { path: folder, limit: 1000 })).items.map((i: any) => i.path).sort();

  test("a folder put in the place of another keeps none of the old one's notes (mv Docs Docs.old; mv Docs.new Docs)", async () => {
    mkdirSync(join(v.root, "Docs"));
    writeFileSync(join(v.root, "Docs/old-only.md"), "# Old only\n\nThe ghostly aardwolf.\n");
    writeFileSync(join(v.root, "Docs/both.md"), "# Both\n\nFirst version.\n");
    await until("the first folder", async () => same(await found("aardwolf"), ["Docs/old-only.md"]));
    mkdirSync(join(v.root, "Docs.new"));
    writeFileSync(join(v.root, "Docs.new/both.md"), "# Both\n\nSecond version, with a caracal.\n");
    renameSync(join(v.root, "Docs"), join(v.root, "Docs.old"));
    renameSync(join(v.root, "Docs.new"), join(v.root, "Docs"));
    rmSync(join(v.root, "Docs.old"), { recursive: true });
    await until("the new folder's note", async () => same(await found("caracal"), ["Docs/both.md"]));
    await until("the old folder's note gone", async () => (await found("aardwolf")).length === 0);
    expect(await notesUnder("Docs")).toEqual(["Docs/both.md"]);
    rmSync(join(v.root, "Docs"), { recursive: true });
    await until("the folder gone", async () => (await notesUnder("Docs")).length === 0);
  });

  test("two folders' names swapped, and a note replaced by a folder of its name", async () => {
    mkdirSync(join(v.root, "SwapA"));
    mkdirSync(join(v.root, "SwapB"));
    writeFileSync(join(v.root, "SwapA/x.md"), "# X\n\nThe xerus.\n");
    writeFileSync(join(v.root, "SwapB/y.md"), "# Y\n\nThe yapok.\n");
    writeFileSync(join(v.root, "Thing.md"), "# Thing\n\nThe tapir.\n");
    await until("the three notes", async () => (await found("xerus OR yapok OR tapir")).length === 3);
    renameSync(join(v.root, "SwapA"), join(v.root, "SwapTmp"));
    renameSync(join(v.root, "SwapB"), join(v.root, "SwapA"));
    renameSync(join(v.root, "SwapTmp"), join(v.root, "SwapB"));
    rmSync(join(v.root, "Thing.md"));
    mkdirSync(join(v.root, "Thing.md"));
    writeFileSync(join(v.root, "Thing.md/inside.md"), "# Inside\n\nThe tayra.\n");
    const want = ["SwapA/y.md", "SwapB/x.md", "Thing.md/inside.md"];
    await until("the swapped and replaced paths", async () => same(await found("xerus OR yapok OR tapir OR tayra"), want));
    for (const p of ["SwapA", "SwapB", "Thing.md"]) rmSync(join(v.root, p), { recursive: true });
    await until("all gone", async () => (await found("xerus OR yapok OR tapir OR tayra")).length === 0);
  });

  test("a file written every 10 ms does not hold back the rest of the vault's edits", async () => {
    // Another process writes (as an app's log would): in this one, the test's own awaits left gaps.
    const log = join(v.root, "app.log");
    const script = `const fs=require("fs");const end=Date.now()+8000;(function tick(){fs.appendFileSync(${JSON.stringify(log)},Date.now()+" tick\\n");if(Date.now()<end)setTimeout(tick,10);})();`;
    const appender = Bun.spawn([process.execPath, "-e", script], { stdout: "ignore", stderr: "inherit" });
    try {
      await waitFor(() => existsSync(log), { what: "the log started" });
      await Bun.sleep(200);
      writeFileSync(join(v.root, "Inbox/Busy.md"), "# Busy\n\nThe numbat naps.\n");
      await until("the edit made while the log grows", async () => same(await found("numbat"), ["Inbox/Busy.md"]));
      // Seen while the log was still being written, not once it stopped.
      expect(appender.exitCode).toBe(null);
    } finally {
      appender.kill();
      await appender.exited;
      rmSync(log, { force: true });
      rmSync(join(v.root, "Inbox/Busy.md"), { force: true });
    }
  });

  test("rm -rf of a folder of 1,500 notes leaves none of them in the index", async () => {
    mkdirSync(join(v.root, "Bulk/deep"), { recursive: true });
    for (let i = 0; i < 1500; i++) writeFileSync(join(v.root, i % 2 ? "Bulk" : "Bulk/deep", `n${i}.md`), `# N${i}\n\nThe bulk quoll ${i}.\n`);
    await until("the bulk notes", async () => (await v.call("search", { query: "quoll", limit: 1 }, "read")).total === 1500);
    rmSync(join(v.root, "Bulk"), { recursive: true });
    await until("the bulk notes gone", async () => (await v.call("search", { query: "quoll", limit: 1 }, "read")).total === 0);
    expect(await notesUnder("Bulk")).toEqual([]);
  });
});
