// The write tools through the real server and the SDK client: every tool's
// success and error kinds, scope refusals, byte-for-byte preservation, and
// the index reflecting each write before the call returns.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { listEdits } from "../lib/write/edits";
import { localDate } from "../lib/write/text";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const sha = (b: string | Buffer) => new Bun.CryptoHasher("sha256").update(b).digest("hex");
const file = (p: string) => readFileSync(join(s.root, p), "utf8");
async function fail(name: string, args: Record<string, unknown>, scope: "read" | "propose" | "write" = "write") {
  const res: any = await s.callRaw(name, args, scope);
  expect(res.isError).toBe(true);
  return res as { kind: string; content: { text: string }[]; data?: any };
}

const WRITE_TOOLS = ["write_note", "apply_edits", "patch_section", "file_page", "append_log", "move_note", "delete_note", "complete_directive"];

describe("scopes", () => {
  test("tools/list shows write tools to write and propose tokens only, described as proposals for propose", async () => {
    const list = async (scope: "read" | "propose" | "write") => (await (await s.client(scope)).listTools()).tools;
    const read = await list("read");
    for (const t of [...WRITE_TOOLS, "list_my_proposals", "withdraw_proposal"]) expect(read.map((x) => x.name)).not.toContain(t);
    const write = await list("write");
    const propose = await list("propose");
    for (const name of WRITE_TOOLS) {
      const w = write.find((t) => t.name === name)!;
      const p = propose.find((t) => t.name === name)!;
      expect(w).toBeDefined();
      expect(p).toBeDefined();
      expect(w.description).not.toContain("Queues a proposal");
      expect(p.description).toStartWith("Queues a proposal");
      expect(w.annotations?.readOnlyHint).toBe(false);
    }
    expect(propose.map((t) => t.name)).toContain("list_my_proposals");
    expect(propose.map((t) => t.name)).toContain("withdraw_proposal");
  });

  test("a read token may not call a write tool or the proposal tools", async () => {
    const res = await fail("write_note", { path: "Inbox/x.md", content: "x" }, "read");
    expect(res.kind).toBe("forbidden");
    expect((await fail("list_my_proposals", {}, "read")).kind).toBe("forbidden");
    expect((await fail("withdraw_proposal", { proposalId: 1 }, "read")).kind).toBe("forbidden");
    expect(existsSync(join(s.root, "Inbox/x.md"))).toBe(false);
  });
});

describe("write_note", () => {
  test("creates a note, returns its hash and edit id, and the index has it before the call returns", async () => {
    const content = "---\ntitle: Soft locks\ntags: [concept]\n---\n\n# Soft locks\n\nA zanzibarian idea.\n";
    const res = await s.call("write_note", { path: "Concepts/Soft locks.md", content });
    expect(res.path).toBe("Concepts/Soft locks.md");
    expect(res.created).toBe(true);
    expect(res.hash).toBe(sha(content));
    expect(typeof res.editId).toBe("number");
    expect(file("Concepts/Soft locks.md")).toBe(content);
    const hits = await s.call("search", { query: "zanzibarian" });
    expect(hits.items.map((h: any) => h.path)).toEqual(["Concepts/Soft locks.md"]);
    const read = await s.call("read_note", { path: "Concepts/Soft locks.md" });
    expect(read.hash).toBe(res.hash);
    expect(read.tags).toContain("concept");
  });

  test("adds .md, and refuses to replace without overwrite or expectedHash", async () => {
    const res = await s.call("write_note", { path: "Inbox/no extension", content: "first\n" });
    expect(res.path).toBe("Inbox/no extension.md");
    const again = await fail("write_note", { path: "Inbox/no extension.md", content: "second\n" });
    expect(again.kind).toBe("already-exists");
    expect(file("Inbox/no extension.md")).toBe("first\n");
    const ok = await s.call("write_note", { path: "Inbox/no extension.md", content: "second\n", overwrite: true });
    expect(ok.created).toBe(false);
    expect(file("Inbox/no extension.md")).toBe("second\n");
  });

  test("expectedHash: a match replaces, a stale hash is a conflict and writes nothing", async () => {
    const { hash } = await s.call("read_note", { path: "Inbox/no extension.md" });
    const stale = await fail("write_note", { path: "Inbox/no extension.md", content: "third\n", expectedHash: sha("first\n") });
    expect(stale.kind).toBe("conflict");
    expect(stale.data.currentHash).toBe(hash);
    expect(file("Inbox/no extension.md")).toBe("second\n");
    const ok = await s.call("write_note", { path: "Inbox/no extension.md", content: "third\n", expectedHash: hash });
    expect(ok.hash).toBe(sha("third\n"));
  });

  test("a person's edit in an editor after the agent read the note is a conflict", async () => {
    const { hash } = await s.call("read_note", { path: "Inbox/no extension.md" });
    writeFileSync(join(s.root, "Inbox/no extension.md"), "typed by a person\n");
    const res = await fail("apply_edits", { path: "Inbox/no extension.md", edits: [{ find: "third", replace: "3rd" }], expectedHash: hash });
    expect(res.kind).toBe("conflict");
    expect(file("Inbox/no extension.md")).toBe("typed by a person\n");
  });

  test("bad paths and non-notes are refused", async () => {
    expect((await fail("write_note", { path: "../escape.md", content: "x" })).kind).toBe("path-invalid");
    expect((await fail("write_note", { path: "/etc/passwd", content: "x" })).kind).toBe("path-invalid");
    expect((await fail("write_note", { path: ".trash/x.md", content: "x" })).kind).toBe("path-invalid");
    expect((await fail("write_note", { path: ".obsidian/app.md", content: "x" })).kind).toBe("path-invalid");
    expect((await fail("write_note", { path: ".lettuce/state.md", content: "x" })).kind).toBe("path-invalid");
    expect((await fail("write_note", { path: "assets/picture.png", content: "x" })).kind).toBe("not-a-note");
  });

  test("a note over the size cap is refused with too-large", async () => {
    process.env.LETTUCE_MAX_NOTE_BYTES = "1000";
    try {
      const res = await fail("write_note", { path: "Inbox/big.md", content: "x".repeat(1001) });
      expect(res.kind).toBe("too-large");
      expect(res.data.limit).toBe(1000);
      expect(existsSync(join(s.root, "Inbox/big.md"))).toBe(false);
    } finally {
      delete process.env.LETTUCE_MAX_NOTE_BYTES;
    }
  });
});

describe("apply_edits", () => {
  test("edits in order, keeping the frontmatter and every untouched byte", async () => {
    const before = file("Projects/Lettuce.md");
    const res = await s.call("apply_edits", {
      path: "Projects/Lettuce.md",
      edits: [
        { find: "Everything must work offline.", replace: "Everything must work offline, always." },
        { find: "offline, always.", replace: "offline, always (even on a plane)." },
      ],
    });
    const after = file("Projects/Lettuce.md");
    expect(after).toBe(before.replace("Everything must work offline.", "Everything must work offline, always (even on a plane)."));
    expect(res.hash).toBe(sha(after));
    expect(after.slice(0, before.indexOf("# Lettuce"))).toBe(before.slice(0, before.indexOf("# Lettuce")));
  });

  test("a find that matches 0 or N times names the edit and writes nothing", async () => {
    const before = file("Projects/Lettuce.md");
    const none = await fail("apply_edits", {
      path: "Projects/Lettuce.md",
      edits: [
        { find: "Three pieces", replace: "Four pieces" },
        { find: "no such text anywhere", replace: "x" },
      ],
    });
    expect(none.kind).toBe("edit-no-match");
    expect(none.data).toEqual({ edit: 1, matches: 0 });
    const many = await fail("apply_edits", { path: "Projects/Lettuce.md", edits: [{ find: "Lettuce", replace: "Romaine" }] });
    expect(many.kind).toBe("edit-ambiguous");
    expect(many.data.edit).toBe(0);
    expect(many.data.matches).toBeGreaterThan(1);
    expect(file("Projects/Lettuce.md")).toBe(before);
  });

  test("a long find that matches everywhere is answered at once, counted up to 100", async () => {
    // Counting every overlapping match cost the find's length per match: 13 s here, on the request thread.
    await s.call("write_note", { path: "Inbox/aaaa.md", content: "a".repeat(1_000_000) });
    const many = await fail("apply_edits", { path: "Inbox/aaaa.md", edits: [{ find: "a".repeat(20_000), replace: "b" }] });
    expect(many.kind).toBe("edit-ambiguous");
    expect(many.data.matches).toBe(100);
    expect(many.content[0]!.text).toContain("at least 100 times");
  });

  test("more edits than the cap is too-many-edits", async () => {
    const edits = Array.from({ length: 101 }, (_, i) => ({ find: `x${i}`, replace: "y" }));
    expect((await fail("apply_edits", { path: "Projects/Lettuce.md", edits })).kind).toBe("too-many-edits");
  });

  test("a missing note is note-not-found", async () => {
    expect((await fail("apply_edits", { path: "Nope/none.md", edits: [{ find: "a", replace: "b" }] })).kind).toBe("note-not-found");
  });

  test("a CRLF note stays CRLF, and its other lines keep their bytes", async () => {
    const crlf = "---\r\ntitle: Windows note\r\n---\r\n\r\n# Windows note\r\n\r\nFirst line.\r\nSecond line.\r\n";
    writeFileSync(join(s.root, "Inbox/windows.md"), crlf);
    await s.vault.indexer.update(["Inbox/windows.md"]);
    await s.call("apply_edits", { path: "Inbox/windows.md", edits: [{ find: "First line.\nSecond", replace: "First line, edited.\nNew line.\nSecond" }] });
    expect(file("Inbox/windows.md")).toBe(crlf.replace("First line.\r\nSecond", "First line, edited.\r\nNew line.\r\nSecond"));
  });
});

describe("encodings and names", () => {
  test("a BOM survives an edit; a file that is not UTF-8 is refused, not mangled", async () => {
    writeFileSync(join(s.root, "Inbox/bom.md"), "\uFEFF# Bom\n\nbody\n");
    writeFileSync(join(s.root, "Inbox/latin1.md"), Buffer.from([0x23, 0x20, 0x43, 0x61, 0x66, 0xe9, 0x0a]));
    await s.vault.indexer.update(["Inbox/bom.md", "Inbox/latin1.md"]);
    await s.call("apply_edits", { path: "Inbox/bom.md", edits: [{ find: "body", replace: "new body" }] });
    expect(readFileSync(join(s.root, "Inbox/bom.md"))).toEqual(Buffer.from("\uFEFF# Bom\n\nnew body\n"));
    const res = await fail("apply_edits", { path: "Inbox/latin1.md", edits: [{ find: "Caf", replace: "Kaf" }] });
    expect(res.kind).toBe("unsupported-encoding");
    expect(readFileSync(join(s.root, "Inbox/latin1.md"))).toEqual(Buffer.from([0x23, 0x20, 0x43, 0x61, 0x66, 0xe9, 0x0a]));
  });

  test("writing to another letter case of an existing note changes that note, not a twin", async () => {
    const res = await s.call("write_note", { path: "inbox/QUICK-THOUGHT.md", content: "replaced\n", overwrite: true });
    expect(res.path).toBe("Inbox/quick-thought.md");
    expect(file("Inbox/quick-thought.md")).toBe("replaced\n");
    expect(existsSync(join(s.root, "inbox"))).toBe(false);
  });
});

describe("patch_section", () => {
  test("append goes to the end of the section, after nested headings, before the next sibling", async () => {
    await s.call("patch_section", { path: "Projects/Lettuce.md", heading: "Architecture", mode: "append", content: "Appended under Architecture." });
    const t = file("Projects/Lettuce.md");
    expect(t).toContain("(even on a plane).\n\nAppended under Architecture.\n\n## Status");
  });

  test("a list item appended to a list stays in the list; prepend goes under the heading; by id", async () => {
    await s.call("patch_section", { path: "Projects/Lettuce.md", heading: "design-rules", mode: "append", content: "- Never lose a line." });
    await s.call("patch_section", { path: "Projects/Lettuce.md", heading: "### Design rules", mode: "prepend", content: "Rules we keep:" });
    const t = file("Projects/Lettuce.md");
    expect(t).toContain("### Design rules\n\nRules we keep:\n\n- Files on disk");
    // Design rules (h3) runs to the next h2, so it now ends with the paragraph appended above.
    expect(t).toContain("Appended under Architecture.\n\n- Never lose a line.\n\n## Status");
    await s.call("write_note", { path: "Inbox/list.md", content: "# List\n\n## Items\n\n- one\n- two\n\n## After\n" });
    await s.call("patch_section", { path: "Inbox/list.md", heading: "Items", mode: "append", content: "- three\n" });
    await s.call("patch_section", { path: "Inbox/list.md", heading: "Items", mode: "prepend", content: "- zero" });
    expect(file("Inbox/list.md")).toBe("# List\n\n## Items\n\n- zero\n- one\n- two\n- three\n\n## After\n");
  });

  test("replace swaps the whole body, nested headings included, and leaves the frontmatter alone", async () => {
    const before = file("Projects/Lettuce.md");
    await s.call("patch_section", { path: "Projects/Lettuce.md", heading: "Architecture", mode: "replace", content: "Replaced.\n" });
    const t = file("Projects/Lettuce.md");
    expect(t).toContain("## Architecture\n\nReplaced.\n\n## Status\n");
    expect(t).not.toContain("Design rules");
    expect(t.startsWith(before.slice(0, before.indexOf("# Lettuce")))).toBe(true);
    const outline = await s.call("read_outline", { path: "Projects/Lettuce.md" });
    expect(outline.map((h: any) => h.title)).toEqual(["Lettuce", "Architecture", "Status"]);
  });

  test("unknown and ambiguous headings have their own kinds", async () => {
    const none = await fail("patch_section", { path: "Projects/Lettuce.md", heading: "Nope", mode: "append", content: "x" });
    expect(none.kind).toBe("heading-not-found");
    expect(none.data.headings.map((h: any) => h.id)).toContain("status");
    // A long note: the first 30 headings and how many there are, not the whole outline (kilobytes, twice).
    await s.call("write_note", { path: "Inbox/long-outline.md", content: Array.from({ length: 120 }, (_, i) => `## Part ${i}\n\ntext\n`).join("\n") });
    const many = await fail("patch_section", { path: "Inbox/long-outline.md", heading: "Nope", mode: "append", content: "x" });
    expect(many.data.headings).toHaveLength(30);
    expect(many.data.headingsTotal).toBe(120);
    await s.call("write_note", { path: "Inbox/twins.md", content: "# Twins\n\n## Notes\n\none\n\n## Notes\n\ntwo\n" });
    const two = await fail("patch_section", { path: "Inbox/twins.md", heading: "Notes", mode: "append", content: "x" });
    expect(two.kind).toBe("heading-ambiguous");
    expect(two.data.candidates.map((c: any) => c.id)).toEqual(["notes", "notes-1"]);
    await s.call("patch_section", { path: "Inbox/twins.md", heading: "notes-1", mode: "append", content: "three" });
    expect(file("Inbox/twins.md")).toBe("# Twins\n\n## Notes\n\none\n\n## Notes\n\ntwo\n\nthree\n");
  });
});

describe("file_page and append_log", () => {
  test("file_page writes the page with wikilinks to its citations and a log.md entry", async () => {
    const res = await s.call("file_page", {
      path: "Concepts/Why files win.md",
      title: "Why files win",
      content: "Files on disk outlive every app.",
      citations: ["Local First", "Inbox/Meeting Notes 2026-03-02.md", "[[Wikilinks]]"],
      tags: ["answer"],
    });
    expect(res.citations).toEqual(["Concepts/Local First.md", "Inbox/Meeting Notes 2026-03-02.md", "Concepts/Wikilinks.md"]);
    const page = file("Concepts/Why files win.md");
    expect(page).toStartWith("---\ntitle: Why files win\ntags:\n  - answer\n---\n\n# Why files win\n\nFiles on disk outlive every app.\n");
    expect(page).toContain("## Sources\n\n- [[Local First]]\n- [[Meeting Notes 2026-03-02]]\n- [[Wikilinks]]\n");
    const log = file("log.md");
    expect(log).toContain(`## [${localDate()}] query | Why files win\n\nFiled [[Concepts/Why files win|Why files win]], citing [[Local First]]`);
    const back = await s.call("list_backlinks", { path: "Concepts/Local First.md" });
    expect(back.items.map((b: any) => b.sourcePath)).toContain("Concepts/Why files win.md");
  });

  test("file_page refuses an unknown citation and an existing page", async () => {
    const bad = await fail("file_page", { path: "Concepts/X.md", title: "X", content: "x", citations: ["Local First", "No such note"] });
    expect(bad.kind).toBe("note-not-found");
    expect(bad.data.citation).toBe(1);
    const dup = await fail("file_page", { path: "Concepts/Why files win.md", title: "Again", content: "x", citations: ["Local First"] });
    expect(dup.kind).toBe("already-exists");
  });

  test("append_log adds a ledger entry at the bottom", async () => {
    const before = file("log.md");
    const res = await s.call("append_log", { op: "lint", title: "Weekly lint", body: "All clear.", date: "2026-05-01" });
    expect(res.path).toBe("log.md");
    expect(file("log.md")).toBe(before + "\n## [2026-05-01] lint | Weekly lint\n\nAll clear.\n");
  });

  test("bad append_log input is an invalid-params error, not a crash", async () => {
    const res = await s.rpc({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "append_log", arguments: { op: "two words", title: "x" } } });
    const body: any = await res.json();
    expect(body.error.code).toBe(-32602);
    for (const date of ["2026-02-31", "2025-02-29", "2026-13-01"]) {
      const r: any = await (await s.rpc({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "append_log", arguments: { op: "lint", title: "x", date } } })).json();
      expect(r.error?.code, date).toBe(-32602);
    }
  });
});

describe("move_note", () => {
  test("moves the note and rewrites wikilinks and Markdown links, keeping headings and aliases", async () => {
    const res = await s.call("move_note", { from: "Concepts/Local First.md", to: "Ideas/Local-first software.md" });
    expect(res.path).toBe("Ideas/Local-first software.md");
    expect(res.from).toBe("Concepts/Local First.md");
    expect(existsSync(join(s.root, "Concepts/Local First.md"))).toBe(false);
    expect(res.notesUpdated).toContain("index.md");
    expect(file("index.md")).toContain("[Local-first principles](Ideas/Local-first%20software.md)");
    expect(file("Concepts/Wikilinks.md")).toContain("[[Local-first software|the local-first idea]]");
    expect(file("Concepts/Why files win.md")).toContain("- [[Local-first software]]");
    const back = await s.call("list_backlinks", { path: "Ideas/Local-first software.md" });
    expect(back.items.map((b: any) => b.sourcePath)).toEqual(expect.arrayContaining(["index.md", "Concepts/Wikilinks.md", "Concepts/Why files win.md"]));
    const lint = await s.call("list_outgoing_links", { path: "index.md" });
    expect(lint.items.filter((l: any) => l.resolvedPath === null && /local/i.test(l.target))).toEqual([]);
    expect((await fail("read_note", { path: "Concepts/Local First.md" })).kind).toBe("note-not-found");
  });

  test("a heading link keeps its heading; a path link stays a path", async () => {
    await s.call("write_note", { path: "Inbox/pointer.md", content: "See [[Ideas/Local-first software#Local First|the heading]] and [[Ideas/Local-first software]].\n" });
    await s.call("move_note", { from: "Ideas/Local-first software.md", to: "Ideas/Local first.md" });
    expect(file("Inbox/pointer.md")).toBe("See [[Ideas/Local first#Local First|the heading]] and [[Ideas/Local first]].\n");
  });

  test("the moved note's own relative Markdown links are re-pointed from its new folder", async () => {
    await s.call("write_note", { path: "Inbox/rel.md", content: "# Rel\n\nSee [the soup](../Recipes/Lettuce%20Soup.md#method) and [[Menemen]].\n" });
    await s.call("move_note", { from: "Inbox/rel.md", to: "Deep/er/rel.md" });
    expect(file("Deep/er/rel.md")).toBe("# Rel\n\nSee [the soup](../../Recipes/Lettuce%20Soup.md#method) and [[Menemen]].\n");
    const out = await s.call("list_outgoing_links", { path: "Deep/er/rel.md" });
    expect(out.items.map((l: any) => l.resolvedPath).sort()).toEqual(["Recipes/Lettuce Soup.md", "Recipes/Menemen.md"]);
  });

  // Two linking notes the write batch must take as two files: case twins on a disk that keeps both, and two
  // names of one hard-linked file (a write replaces one name's file; the other keeps the old text).
  for (const [what, a, b, make] of [
    ["two case twins", "Inbox/Links.md", "Inbox/links.md", (x: string, y: string) => (writeFileSync(x, "See [[Aim]].\n"), writeFileSync(y, "See [[Aim]].\n"))],
    ["two hard-linked notes", "Inbox/HardA.md", "Inbox/HardB.md", (x: string, y: string) => (writeFileSync(x, "See [[Aim]].\n"), linkSync(x, y))],
  ] as const) {
    test(`moving a note that ${what} link to rewrites the link in both, each in its own file`, async () => {
      writeFileSync(join(s.root, "Inbox/Aim.md"), "# Aim\n");
      make(join(s.root, a), join(s.root, b));
      await s.vault.indexer.fullScan();
      const res = await s.call("move_note", { from: "Inbox/Aim.md", to: "Inbox/Goal.md" });
      expect(res.path).toBe("Inbox/Goal.md");
      expect(file(a)).toBe("See [[Goal]].\n");
      expect(file(b)).toBe("See [[Goal]].\n");
      for (const f of ["Inbox/Goal.md", a, b]) rmSync(join(s.root, f));
      await s.vault.indexer.fullScan();
    });
  }

  test("a twin that differs only in letter case is another note: never overwritten; a real case-only rename works", async () => {
    // Two notes on a case-sensitive disk, as a person's sync tool can leave them; and a folder twin.
    writeFileSync(join(s.root, "Inbox/Twin.md"), "# Upper\n\nupper twin\n");
    writeFileSync(join(s.root, "Inbox/twin.md"), "# lower\n\nprecious lower twin\n");
    mkdirSync(join(s.root, "inbox"));
    writeFileSync(join(s.root, "inbox/Twin.md"), "# folder twin\n");
    await s.vault.indexer.fullScan();
    for (const to of ["Inbox/twin.md", "inbox/Twin.md"]) {
      expect((await fail("move_note", { from: "Inbox/Twin.md", to })).kind, to).toBe("already-exists");
    }
    expect(file("Inbox/twin.md")).toBe("# lower\n\nprecious lower twin\n");
    expect(file("Inbox/Twin.md")).toBe("# Upper\n\nupper twin\n");
    expect(file("inbox/Twin.md")).toBe("# folder twin\n");
    // With no twin there, a new spelling of the same name is a rename.
    const res = await s.call("move_note", { from: "Inbox/Twin.md", to: "Inbox/TWIN.md" });
    expect(res.path).toBe("Inbox/TWIN.md");
    expect(file("Inbox/TWIN.md")).toBe("# Upper\n\nupper twin\n");
    expect(file("Inbox/twin.md")).toBe("# lower\n\nprecious lower twin\n");
    rmSync(join(s.root, "inbox"), { recursive: true });
    for (const f of ["Inbox/TWIN.md", "Inbox/twin.md"]) rmSync(join(s.root, f));
    await s.vault.indexer.fullScan();
  });

  test("refuses an existing destination, a missing source, and a source under sources/", async () => {
    expect((await fail("move_note", { from: "Ideas/Local first.md", to: "index.md" })).kind).toBe("already-exists");
    expect((await fail("move_note", { from: "Nope.md", to: "Elsewhere.md" })).kind).toBe("note-not-found");
    expect((await fail("move_note", { from: "Ideas/Local first.md", to: "Ideas/Local first" })).kind).toBe("invalid-input");
    const imm = await fail("move_note", { from: "sources/Growing Lettuce in Containers.md", to: "Garden/Containers.md" });
    expect(imm.kind).toBe("immutable-path");
  });
});

describe("delete_note", () => {
  test("a note whose name is as long as a name may be goes to the trash twice", async () => {
    const name = "n".repeat(252) + ".md"; // 255 bytes: " (2)" does not fit beside it
    for (let i = 0; i < 3; i++) {
      await s.call("write_note", { path: `Inbox/${name}`, content: `# Long ${i}\n` });
      const res = await s.call("delete_note", { path: `Inbox/${name}` });
      const trashed = res.trashPath.split("/").pop();
      expect(Buffer.byteLength(trashed)).toBeLessThanOrEqual(255);
      expect(file(res.trashPath)).toBe(`# Long ${i}\n`);
    }
  });

  test("moves the note to .trash/, out of the index", async () => {
    await s.call("write_note", { path: "Inbox/doomed.md", content: "# Doomed\n\nquuxwibble\n" });
    const res = await s.call("delete_note", { path: "Inbox/doomed.md" });
    expect(res.hash).toBeNull();
    expect(res.trashPath).toBe(".trash/Inbox/doomed.md");
    expect(existsSync(join(s.root, "Inbox/doomed.md"))).toBe(false);
    expect(file(".trash/Inbox/doomed.md")).toBe("# Doomed\n\nquuxwibble\n");
    expect((await s.call("search", { query: "quuxwibble" })).items).toEqual([]);
    await s.call("write_note", { path: "Inbox/doomed.md", content: "again\n" });
    expect((await s.call("delete_note", { path: "Inbox/doomed.md" })).trashPath).toBe(".trash/Inbox/doomed (2).md");
  });

  test("refuses sources/, a stale hash, and a missing note", async () => {
    expect((await fail("delete_note", { path: "sources/Growing Lettuce in Containers.md" })).kind).toBe("immutable-path");
    expect((await fail("delete_note", { path: "Recipes/Menemen.md", expectedHash: sha("old") })).kind).toBe("conflict");
    expect(existsSync(join(s.root, "Recipes/Menemen.md"))).toBe(true);
    expect((await fail("delete_note", { path: "Inbox/doomed.md" })).kind).toBe("note-not-found");
  });
});

describe("immutable paths", () => {
  test("a note under sources/ can be created once, never changed", async () => {
    const created = await s.call("write_note", { path: "sources/New clip.md", content: "# New clip\n" });
    expect(created.created).toBe(true);
    expect((await fail("write_note", { path: "sources/New clip.md", content: "changed", overwrite: true })).kind).toBe("immutable-path");
    expect((await fail("apply_edits", { path: "sources/New clip.md", edits: [{ find: "New", replace: "Old" }] })).kind).toBe("immutable-path");
    expect((await fail("patch_section", { path: "sources/New clip.md", heading: "New clip", mode: "append", content: "x" })).kind).toBe("immutable-path");
    expect(file("sources/New clip.md")).toBe("# New clip\n");
  });
});

describe("complete_directive", () => {
  const NOTE = "Inbox/Meeting Notes 2026-03-02.md";
  test("flips [!ai] to [!ai-done] and adds the answer inside the callout", async () => {
    const line = file(NOTE).split("\n").findIndex((l) => l.startsWith("> [!ai]")) + 1;
    const res = await s.call("complete_directive", { path: NOTE, line, answer: "- Reads first\n- One patch tool" });
    expect(res.line).toBe(line);
    const t = file(NOTE);
    expect(t).toContain("> [!ai-done] Summarize the section above\n> Three bullet points at most. Keep the decisions and who raised them.\n>\n> - Reads first\n> - One patch tool\n");
    const again = await fail("complete_directive", { path: NOTE, line });
    expect(again.kind).toBe("directive-done");
    expect((await fail("complete_directive", { path: NOTE, line: 1 })).kind).toBe("not-a-directive");
    expect((await fail("complete_directive", { path: NOTE, line: 9999 })).kind).toBe("not-a-directive");
  });
});

describe("timeline", () => {
  test("every committed write is recorded with tool, agent label and token name", async () => {
    const edits = listEdits(s.vault.stateDb, { limit: 1000 });
    const tools = new Set(edits.map((e) => e.tool));
    for (const t of WRITE_TOOLS) expect(tools).toContain(t);
    const tokenName = (s.vault.stateDb.query("SELECT name FROM tokens WHERE scope = 'write' ORDER BY id DESC").get() as { name: string }).name;
    for (const e of edits) {
      expect(e.agent).toBe("lettuce-tests");
      expect(e.token).toBe(tokenName);
    }
    const pending = s.vault.stateDb.query("SELECT count(*) AS n FROM agent_edits WHERE state = 'pending'").get() as { n: number };
    expect(pending.n).toBe(0);
  });
});
