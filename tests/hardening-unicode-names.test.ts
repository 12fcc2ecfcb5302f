// Names as they are on disk, not as an agent types them (the Unicode audit of 2026-12-05): macOS and sync
// clients write names decomposed (NFD), agents and people type them composed (NFC); letter case beyond
// ASCII; characters outside the Basic Multilingual Plane, whose JavaScript length is not SQLite's.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setSetting } from "../lib/store/state-db";
import { runLettuce } from "./helpers/cli";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";

const NFD = (s: string) => s.normalize("NFD");
const NFC = (s: string) => s.normalize("NFC");

function vaultWith(files: Record<string, string>): string {
  const root = tempDir("lettuce-unicode-");
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe("an immutable folder whose name is decomposed on disk", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ root: vaultWith({ [`${NFD("Références")}/a.md`]: "# A\nsource\n", [`${NFD("Références")}/b.md`]: "# B\n" }) });
    setSetting(s.vault.stateDb, "immutablePaths", JSON.stringify([`${NFC("Références")}/`]));
  });
  afterAll(() => s.close());

  test("is protected however the agent spells it", async () => {
    for (const dir of [NFC("Références"), NFD("Références")]) {
      const edit: any = await s.callRaw("apply_edits", { path: `${dir}/a.md`, edits: [{ find: "source", replace: "changed" }] });
      expect(edit.kind).toBe("immutable-path");
      const over: any = await s.callRaw("write_note", { path: `${dir}/a.md`, content: "gone\n", overwrite: true });
      expect(over.kind).toBe("immutable-path");
      const del: any = await s.callRaw("delete_note", { path: `${dir}/b.md` });
      expect(del.kind).toBe("immutable-path");
    }
    expect(readFileSync(join(s.root, NFD("Références"), "a.md"), "utf8")).toBe("# A\nsource\n");
    expect(existsSync(join(s.root, NFD("Références"), "b.md"))).toBe(true);
  });
});

describe("folders and tags spelt otherwise than typed (outside the Basic Multilingual Plane, decomposed, another case)", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({
      root: vaultWith({
        "📁 Projects/top.md": "# Top\n",
        "📁 Projects/Sub/child.md": "# Child\n#𝒜lpha/beta\n\n> [!ai] summarise this\n",
        "📁 Projects/Sub/Deep/grand.md": "# Grand\n",
        "📁 Projects/Sub/pic.png": "png",
      }),
    });
  });
  afterAll(() => s.close());

  test("a folder lists every note under it, and its sub-folders", async () => {
    const all = await s.call("list_notes", { path: "📁 Projects", recursive: true });
    expect(all.items.map((n: any) => n.path).sort()).toEqual(["📁 Projects/Sub/Deep/grand.md", "📁 Projects/Sub/child.md", "📁 Projects/top.md"]);
    expect(all.total).toBe(3);
    const files = await s.call("list_attachments", { path: "📁 Projects" });
    expect(files.items.map((f: any) => f.path)).toEqual(["📁 Projects/Sub/pic.png"]);
  });

  test("a folder scope finds its directives however the folder is spelt", async () => {
    mkdirSync(join(s.root, NFD("Réunions")), { recursive: true });
    writeFileSync(join(s.root, NFD("Réunions"), "r.md"), "# R\n\n> [!ai] file this\n");
    await s.vault.indexer.fullScan();
    for (const scope of [NFC("Réunions"), NFD("Réunions"), NFC("RÉUNIONS")]) {
      const work = await s.call("pending_directives", { path: scope });
      expect(work.map((d: any) => d.path)).toEqual([`${NFD("Réunions")}/r.md`]);
    }
    const listed = await s.call("list_notes", { path: NFC("réunions") });
    expect(listed.items.map((n: any) => n.path)).toEqual([`${NFD("Réunions")}/r.md`]);
  });

  test("a parent tag finds its nested tags, and a folder scope its directives", async () => {
    const tagged = await s.call("notes_by_tag", { tag: "𝒜lpha" });
    expect(tagged.items.map((n: any) => n.path)).toEqual(["📁 Projects/Sub/child.md"]);
    const work = await s.call("pending_directives", { path: "📁 Projects" });
    expect(work.map((d: any) => d.path)).toEqual(["📁 Projects/Sub/child.md"]);
  });
});

describe("links and names in any normalisation and letter case", () => {
  let s: TestServer;
  const cafe = `${NFD("Café")}.md`;
  beforeAll(async () => {
    s = await startTestServer({
      root: vaultWith({
        [cafe]: "# Café\n",
        "Index.md": `# Index\n\nSee [[${NFC("Café")}]] and [the menu](${NFC("Café")}.md).\n\nAlso [[Über]].\n`,
        "Über.md": "# Über\n",
        "x.md": "# X\n",
        "Plan.md": "# Plan\n",
        "plan.md": "# plan\n",
        "Links.md": "# Links\n\n[big](Plan.md) and [small](plan.md)\n",
        "Tags.md": `# Tags\n\n#हिंदी #สวัสดี #${NFD("résumé")}\n`,
        "Tags2.md": `# Tags 2\n\n#${NFC("résumé")}\n`,
      }),
    });
  });
  afterAll(() => s.close());

  const backlinks = async (path: string) => (await s.call("list_backlinks", { path })).items.map((b: any) => b.sourcePath);

  test("a link typed composed finds the note written decomposed, and moves with it", async () => {
    expect(new Set(await backlinks(cafe))).toEqual(new Set(["Index.md"]));
    const moved = await s.call("move_note", { from: cafe, to: "Coffee.md" });
    expect(moved.notesUpdated).toEqual(["Index.md"]);
    const index = readFileSync(join(s.root, "Index.md"), "utf8");
    expect(index).toContain("[[Coffee]]");
    expect(index).toContain("[the menu](Coffee.md)");
  });

  test("a move never makes a twin that differs only in letter case, in any script", async () => {
    const res: any = await s.callRaw("move_note", { from: "x.md", to: "über.md" });
    expect(res.kind).toBe("already-exists");
    expect(existsSync(join(s.root, "über.md"))).toBe(false);
    expect(await backlinks("Über.md")).toEqual(["Index.md"]);
  });

  // SQLite's NOCASE folds ASCII only: `über.md` (or `ÜBER.md`, typed decomposed) answered note-not-found for Über.md.
  test("a note is read by its path in another letter case in any script, as links find it", async () => {
    for (const p of ["über.md", "ÜBER", NFD("über.md")]) expect((await s.call("read_note", { path: p })).path).toBe("Über.md");
    expect((await s.call("read_outline", { path: "über" }))[0]).toMatchObject({ level: 1, title: "Über" });
    // Exact spellings still win among ASCII case twins.
    expect((await s.call("read_note", { path: "plan.md" })).path).toBe("plan.md");
  });

  test("of two notes differing only in case, a link spelled exactly finds its own", async () => {
    expect(await backlinks("Plan.md")).toEqual(["Links.md"]);
    expect(await backlinks("plan.md")).toEqual(["Links.md"]);
  });

  test("tags keep their combining marks, and are one tag however they are composed", async () => {
    const listed = (await s.call("list_tags", {})).items;
    const tags = listed.map((t: any) => t.tag);
    for (const t of ["हिंदी", "สวัสดี", NFC("résumé")]) expect(tags).toContain(t);
    // Typed composed or decomposed, one tag.
    expect(listed.find((t: any) => t.tag === NFC("résumé")).count).toBe(2);
    expect((await s.call("notes_by_tag", { tag: NFD("résumé") })).total).toBe(2);
  });
});

describe("a name whose decomposed form would be too long for the file system", () => {
  let s: TestServer;
  // 41 Hangul syllables: 126 bytes composed, 300 decomposed (over the 255-byte limit of a name).
  const long = `${"한국어로작성된아주긴제목의노트입니다".repeat(2)}회의록정리.md`;
  beforeAll(async () => {
    s = await startTestServer({ root: vaultWith({ [long]: "# 회의록\nfirst\n" }) });
  });
  afterAll(() => s.close());

  test("is read, edited and moved by the name it has", async () => {
    expect(Buffer.byteLength(long.normalize("NFD"))).toBeGreaterThan(255);
    const note = await s.call("read_note", { path: long });
    expect(note.content).toContain("first");
    await s.call("apply_edits", { path: long, edits: [{ find: "first", replace: "second" }] });
    expect(readFileSync(join(s.root, long), "utf8")).toContain("second");
    await s.call("move_note", { from: long, to: "회의록.md" });
    expect(existsSync(join(s.root, "회의록.md"))).toBe(true);
  });
});

describe("half of a surrogate pair, in a path or a cut", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ root: vaultWith({ "a.md": "# A\n" }) });
  });
  afterAll(() => s.close());

  test("a path holding half of a surrogate pair is refused, not written under another name", async () => {
    for (const path of ["b\ud800.md", "c\udc00/d.md"]) {
      const res: any = await s.callRaw("write_note", { path, content: "x\n" });
      expect(res.kind).toBe("path-invalid");
      const read: any = await s.callRaw("read_note", { path });
      expect(read.kind).toBe("path-invalid");
    }
    expect(existsSync(join(s.root, "b\ufffd.md"))).toBe(false);
  });

  test("a proposal's diff sent to the agent never ends in half a surrogate pair", async () => {
    // Two offsets, so that one of the two cuts falls inside an emoji whatever the diff's header length.
    for (const pad of ["", "x"]) {
      const res = await s.call("write_note", { path: `emoji-${pad ? "b" : "a"}.md`, content: `${pad}${"😀".repeat(10_000)}\n` }, "propose");
      expect(res.diff.length).toBeLessThan(9_000);
      expect(res.diff.isWellFormed()).toBe(true);
    }
  });
});

describe("names that show nothing or reorder what follows", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ root: vaultWith({ "AGENTS.md": "# Agents\n", "Person\u200b.md": "# made by the person\n", "a.md": "# A\n" }) });
  });
  afterAll(() => s.close());

  test("an agent cannot create or move to such a name; a person's own stays reachable", async () => {
    const zw: any = await s.callRaw("write_note", { path: "AGENTS\u200b.md", content: "# not the real one\n" });
    expect(zw.kind).toBe("path-invalid");
    const bidi: any = await s.callRaw("move_note", { from: "a.md", to: "notes/\u202egnitteem.md" });
    expect(bidi.kind).toBe("path-invalid");
    const folder: any = await s.callRaw("write_note", { path: "Dir\u2066/x.md", content: "x\n" });
    expect(folder.kind).toBe("path-invalid");
    expect(existsSync(join(s.root, "a.md"))).toBe(true);
    // Joiners are left alone: emoji sequences and Persian words need them.
    await s.call("write_note", { path: "👩\u200d💻 notes.md", content: "# dev\n" });
    const mine = await s.call("read_note", { path: "Person\u200b.md" });
    expect(mine.content).toContain("made by the person");
  });

  test("the terminal shows such a name escaped in a proposal's line", async () => {
    await s.call("apply_edits", { path: "Person\u200b.md", edits: [{ find: "made", replace: "written" }] }, "propose");
    const list = await runLettuce(["proposals", s.root, "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("Person\\u{200b}.md");
    expect(list.stdout).not.toContain("\u200b");
  });
});
