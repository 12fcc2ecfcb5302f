// Links to a name several notes share, as Obsidian resolves them, and moves that would change where such a
// link goes (the Obsidian and write-content audits of 2026-12-05). Obsidian's rule, observed on 1.13.7 through
// getFirstLinkpathDest: the exact vault path, then a note in the linking note's own folder, then the
// shortest path.
import { afterEach, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { runLettuce } from "./helpers/cli";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";

let s: TestServer | null = null;
afterEach(() => {
  s?.close();
  s = null;
});

async function serve(files: Record<string, string>): Promise<TestServer> {
  const root = tempDir();
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), text);
  }
  s = await startTestServer({ root });
  return s;
}

const read = (p: string) => readFileSync(join(s!.root, p), "utf8");
const targets = async (path: string) => Object.fromEntries((await s!.call("list_outgoing_links", { path })).items.map((l: any) => [l.target, l.resolvedPath]));
const resolved = async (path: string) => (await s!.call("list_outgoing_links", { path })).items.map((l: any) => l.resolvedPath);

test("a name several notes share resolves to the one beside the linking note, then the shortest path; an exact path wins", async () => {
  await serve({
    "A/Dup.md": "# A dup\n",
    "Longer/B/Dup.md": "# B dup\n",
    "Longer/B/src.md": "[[Dup]] and [d](Dup.md) and ![[Dup]]\n",
    "Longer/C/src.md": "[[Dup]]\n",
    "Longer/B/Deep/src.md": "[[Dup]]\n",
    "Root.md": "[[Dup]]\n",
  });
  expect(await targets("Longer/B/src.md")).toEqual({ Dup: "Longer/B/Dup.md", "Dup.md": "Longer/B/Dup.md" });
  // Elsewhere (an ancestor's folder counts for nothing): the shortest path.
  expect(await targets("Longer/C/src.md")).toEqual({ Dup: "A/Dup.md" });
  expect(await targets("Longer/B/Deep/src.md")).toEqual({ Dup: "A/Dup.md" });
  expect((await s!.call("list_backlinks", { path: "Longer/B/Dup.md" })).items.map((b: any) => b.sourcePath)).toEqual(["Longer/B/src.md", "Longer/B/src.md", "Longer/B/src.md"]);

  // Moving the other Dup leaves the link beside its own note alone.
  const moved = await s!.call("move_note", { from: "A/Dup.md", to: "Z/Other.md" });
  expect(moved.notesUpdated.sort()).toEqual(["Longer/B/Deep/src.md", "Longer/C/src.md", "Root.md"]);
  expect(read("Longer/B/src.md")).toBe("[[Dup]] and [d](Dup.md) and ![[Dup]]\n");
  expect(read("Longer/C/src.md")).toBe("[[Other]]\n");

  // A note at the vault path itself wins over the one beside the link.
  writeFileSync(join(s!.root, "Dup.md"), "# Root dup\n");
  await s!.vault.indexer.fullScan();
  expect((await targets("Longer/B/src.md")).Dup).toBe("Dup.md");
});

test("a move to a name another note has keeps that note's links pointing at it", async () => {
  await serve({
    "deep/x/Foo.md": "# real Foo\n",
    "N1.md": "see [[Foo]] and [f](Foo.md) and [[Foo#Part|the part]]\n",
    "Bar.md": "# Bar\n",
    "L.md": "[[Bar]]\n",
  });
  const moved = await s!.call("move_note", { from: "Bar.md", to: "a/Foo.md" });
  expect(moved.notesUpdated.sort()).toEqual(["L.md", "N1.md"]);
  expect(read("L.md")).toBe("[[a/Foo]]\n");
  expect(read("N1.md")).toBe("see [[deep/x/Foo]] and [f](deep/x/Foo.md) and [[deep/x/Foo#Part|the part]]\n");
  expect(await resolved("N1.md")).toEqual(["deep/x/Foo.md", "deep/x/Foo.md", "deep/x/Foo.md"]);
  // Undone as one edit.
  expect((await runLettuce(["revert", s!.root, String(moved.editId)])).code).toBe(0);
  expect(read("N1.md")).toBe("see [[Foo]] and [f](Foo.md) and [[Foo#Part|the part]]\n");
});

test("a move to a name another note has as its alias keeps the alias links on that note, still showing the alias", async () => {
  await serve({
    "Other.md": "---\naliases: [Plan]\n---\n# Other\n",
    "Draft.md": "# Draft\n",
    "L.md": "[[Draft]] and [[Plan]] and [[Plan|my plan]]\n",
    "T.md": "| a | b |\n|---|---|\n| [[Plan]] | x |\n",
  });
  await s!.call("move_note", { from: "Draft.md", to: "Plan.md" });
  expect(read("L.md")).toBe("[[Plan]] and [[Other|Plan]] and [[Other|my plan]]\n");
  expect(read("T.md")).toBe("| a | b |\n|---|---|\n| [[Other\\|Plan]] | x |\n");
  expect(await resolved("L.md")).toEqual(["Plan.md", "Other.md", "Other.md"]);
  expect(await resolved("T.md")).toEqual(["Other.md"]);
});

test("the moved note's own links keep the notes they named from its old folder", async () => {
  await serve({
    "a/Me.md": "[[./Near]] and [o](Other.md)\n",
    "a/Near.md": "# near a\n",
    "b/Other.md": "# other b\n",
    "c/Near.md": "# near c\n",
    "c/Other.md": "# other c\n",
  });
  // From a/, [o](Other.md) finds b/Other.md by name (the shortest of two); from c/ it would be c/Other.md.
  expect(await targets("a/Me.md")).toEqual({ "./Near": "a/Near.md", "Other.md": "b/Other.md" });
  await s!.call("move_note", { from: "a/Me.md", to: "c/Me.md" });
  expect(await resolved("c/Me.md")).toEqual(["a/Near.md", "b/Other.md"]);
  expect(read("c/Me.md")).toBe("[[a/Near]] and [o](../b/Other.md)\n");
});

// Obsidian warns that links do not work with these in a file name: a move to `X#Y.md` rewrote every link to
// `[[X#Y]]`, which is X.md's heading Y.
test("an agent cannot create or move to a name a link could not name; a person's own stays reachable", async () => {
  await serve({ "T.md": "# T\n", "X.md": "# X\n", "L.md": "[[T]] [[T|alias]] [x](T.md)\n", "C# notes.md": "# the person's\n", "a#b/old.md": "# in a folder\n" });
  for (const to of ["X#Y.md", "X|Y.md", "X]Y.md", "X[Y.md", "X^Y.md", "new#dir/T.md"]) {
    const res: any = await s!.callRaw("move_note", { from: "T.md", to });
    expect(res.kind).toBe("path-invalid");
  }
  expect((await s!.callRaw("write_note", { path: "Q#1.md", content: "x\n" }) as any).kind).toBe("path-invalid");
  expect(read("L.md")).toBe("[[T]] [[T|alias]] [x](T.md)\n");
  // Names already there are read and edited; an existing folder may hold a new note.
  await s!.call("write_note", { path: "C# notes.md", content: "# edited\n", overwrite: true });
  await s!.call("write_note", { path: "a#b/new.md", content: "# new\n" });
  expect(read("C# notes.md")).toBe("# edited\n");
});

test("a destination ending in / is a folder the note moves into, keeping its name, as mv does", async () => {
  await serve({ "Sub/keep.md": "# keep\n", "Idea.md": "# Idea\n", "L.md": "[[Idea]]\n" });
  const moved = await s!.call("move_note", { from: "Idea.md", to: "Sub/" });
  expect(moved.path).toBe("Sub/Idea.md");
  expect(read("Sub/Idea.md")).toBe("# Idea\n");
  expect(read("L.md")).toBe("[[Idea]]\n");
  expect((await s!.call("move_note", { from: "Sub/Idea.md", to: "New/Deeper//" })).path).toBe("New/Deeper/Idea.md");
});

test("a move keeps the spaces a person put around a link's target", async () => {
  await serve({ "Target Note.md": "# T\n", "L.md": "[[ Target Note ]] and [[Target Note |x]]\n" });
  await s!.call("move_note", { from: "Target Note.md", to: "Renamed Note.md" });
  expect(read("L.md")).toBe("[[ Renamed Note ]] and [[Renamed Note |x]]\n");
});

// Obsidian's Properties.md: a text or list property can hold "[[Link]]". They were not indexed: no backlink,
// lint called the target an orphan, and a move left the property pointing at another note of the old name.
test("links in properties are links: backlinks, lint and moves see them", async () => {
  await serve({
    "Proj/Note.md": "# Note\n",
    "Archive/Note.md": "# Archived\n",
    "Other.md": '---\nrelated: "[[Proj/Note]]"\nsee:\n  - "[[Missing one]]"\n  - "[[Proj/Note|the note]]"\n---\n# Other\n\nBody [[Proj/Note]].\n',
  });
  const back = (await s!.call("list_backlinks", { path: "Proj/Note.md" })).items;
  expect(back.length).toBe(3);
  expect((await s!.call("read_note", { path: "Other.md" })).outgoingLinks.map((l: any) => l.target)).toEqual(["Proj/Note", "Missing one", "Proj/Note", "Proj/Note"]);
  const lint = await s!.call("lint", { rule: "unresolved-link" });
  expect(JSON.stringify(lint)).toContain("Missing one");
  const moved = await s!.call("move_note", { from: "Proj/Note.md", to: "Proj/Renamed.md" });
  expect(moved.linksUpdated).toBe(3);
  expect(read("Other.md")).toBe('---\nrelated: "[[Proj/Renamed]]"\nsee:\n  - "[[Missing one]]"\n  - "[[Proj/Renamed|the note]]"\n---\n# Other\n\nBody [[Proj/Renamed]].\n');
});

// A mid-line "<!--" with no "-->" is text (an HTML block opens only at a line's start), and math does not run
// over a blank line: both hid every link after them, and a move left those links dangling (review).
test("an unclosed <!-- in prose and two $$ in separate paragraphs hide nothing: a move rewrites the links after them", async () => {
  await serve({
    "Old.md": "# Old\n",
    "A.md": "In HTML, write <!-- to start a comment.\n\n# Section\n\nSee [[Old]] #tag\n",
    "B.md": "Budget: $$ is a lot\n\n# H\n\nAnd $$ again, [[Old]].\n",
  });
  expect((await s!.call("list_backlinks", { path: "Old.md" })).items.map((b: any) => b.sourcePath).sort()).toEqual(["A.md", "B.md"]);
  const moved = await s!.call("move_note", { from: "Old.md", to: "New.md" });
  expect(moved.notesUpdated.sort()).toEqual(["A.md", "B.md"]);
  expect(read("A.md")).toContain("See [[New]] #tag");
  expect(read("B.md")).toContain("And $$ again, [[New]].");
});

// A move to `Bob's Notes.md` made `related: '[[Bob's Notes]]'`, which is no YAML (the property read "[[Bob").
test("a move rewrites a property's link escaped for its YAML quoting, or leaves it and says so", async () => {
  await serve({
    "Old.md": "# Old\n",
    "S.md": "---\nrelated: '[[Old]]'\nsee: \"[[Old|the old one]]\"\nflow: [[Old]]\n---\n# S\n",
  });
  const moved = await s!.call("move_note", { from: "Old.md", to: "Bob's, \"quoted\" Notes.md" });
  expect(read("S.md")).toBe(`---\nrelated: '[[Bob''s, "quoted" Notes]]'\nsee: "[[Bob's, \\"quoted\\" Notes|the old one]]"\nflow: [[Old]]\n---\n# S\n`);
  expect(moved.notesNotUpdated).toEqual([{ path: "S.md", reason: "property-quoting" }]);
  const fm = (await s!.call("read_note", { path: "S.md" })).frontmatter;
  expect(fm.related).toBe(`[[Bob's, "quoted" Notes]]`);
  expect(fm.see).toBe(`[[Bob's, "quoted" Notes|the old one]]`);
});
