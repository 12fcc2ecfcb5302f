// Obsidian's reading of a note where Lettuce read it otherwise (the Obsidian audits of 2026-12-05): what
// comments and math hold, setext headings over several lines, move_note's view of code spans, which
// words are tags, and Markdown links' fragments. Each case through the real server, on a real temp vault.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";
import { addWorkspaceNotes } from "./helpers/workspace-notes";
import { visibleText } from "../lib/semantic/passages";

function vaultWith(files: Record<string, string>): string {
  const root = tempDir("lettuce-obsidian-");
  addWorkspaceNotes(root, files);
  return root;
}

const names = (list: any[]) => list.map((x: any) => x.path ?? x.name ?? x.tag ?? x.title).sort();

const read = (s: TestServer, path: string) => readFileSync(join(s.root, path), "utf8");

describe("comments and math hide links, tags and headings", () => {
  let s: TestServer;
  const notes: Record<string, string> = {
    "T.md": "# T\n",
    "c1.md": "%%[[T]] #incomment%%\n",
    "c2.md": "before\n%%\nhidden [[T]] #inblock\n# heading in comment\n%%\nafter #seen\n",
    "c3.md": "<!-- [[T]] #inhtml -->\n",
    "c4.md": "$$\n[[T]] #inmath\n# heading in math\n$$\n",
    "c5.md": "%%\n# Hidden title\n%%\ntext\n",
    "real.md": "# Real\n[[T]] #visible, costs $5 or $6\n",
    "c6.md": "# Plan %% draft %%\n\n%% aside %% Setext title\n===\n",
    // Comment and math marks inside code are text: they hide nothing.
    "code.md": "```\n%%\n```\n`<!--` [[T]] #incode `$$`\n",
  };
  beforeAll(async () => {
    s = await startTestServer({ root: vaultWith(notes) });
  });
  afterAll(() => s.close());

  test("list_backlinks lists only the note whose link a reader sees", async () => {
    const back = await s.call("list_backlinks", { path: "T.md" });
    expect(back.items.map((i: any) => i.sourcePath).sort()).toEqual(["code.md", "real.md"]);
  });

  test("list_tags has no tag from a comment or math block", async () => {
    const tags = (await s.call("list_tags", {})).items.map((i: any) => i.tag).sort();
    expect(tags).toEqual(["incode", "seen", "visible"]);
  });

  test("read_outline has no heading from a comment or math block, and such a heading is no title", async () => {
    expect(await s.call("read_outline", { path: "c2.md" })).toEqual([]);
    expect(await s.call("read_outline", { path: "c4.md" })).toEqual([]);
    expect((await s.call("read_note", { path: "c5.md" })).title).toBe("c5");
  });

  test("a heading is named without the comments it holds", async () => {
    expect((await s.call("read_outline", { path: "c6.md" })).map((h: any) => h.title)).toEqual(["Plan", "Setext title"]);
    expect((await s.call("read_note", { path: "c6.md" })).title).toBe("Plan");
  });

  test("move_note leaves the links inside comments and math as written", async () => {
    const moved = await s.call("move_note", { from: "T.md", to: "Renamed.md" });
    expect(moved.linksUpdated).toBe(2);
    for (const p of ["c1.md", "c2.md", "c3.md", "c4.md"]) expect(read(s, p)).toBe(notes[p]!);
    expect(read(s, "real.md")).toBe("# Real\n[[Renamed]] #visible, costs $5 or $6\n");
  });
});

// `<!-->` and `<!--->` are whole, empty comments (HTML's rule, and marked's): read as openers alone, each hid
// the rest of its note, so links, tags and headings after one were not in the index (found by the parse
// review of 2026-12-07).
describe("an empty HTML comment hides nothing after it", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({
      root: vaultWith({
        "T.md": "# T\n",
        "e1.md": "<!-->\n# Shown\n[[T]] #afterempty\n",
        "e2.md": "text <!--> [[T]] <!---> #afterdash <!-- [[T]] #hidden -->\n",
        "e3.md": "<!--->\n## Also shown\n",
      }),
    });
  });
  afterAll(() => s.close());

  test("its links, tags and headings are read", async () => {
    const back = await s.call("list_backlinks", { path: "T.md" });
    expect(back.items.map((i: any) => i.sourcePath).sort()).toEqual(["e1.md", "e2.md"]);
    const tags = (await s.call("list_tags", {})).items.map((i: any) => i.tag).sort();
    expect(tags).toEqual(["afterdash", "afterempty"]);
    expect((await s.call("read_outline", { path: "e1.md" })).map((h: any) => h.title)).toEqual(["Shown"]);
    expect((await s.call("read_outline", { path: "e3.md" })).map((h: any) => h.title)).toEqual(["Also shown"]);
  });

  test("the embedded passages keep the text after it", () => {
    expect(visibleText("a <!--> b <!---> c <!-- d --> e", null)).toEqual({ text: "a   b   c   e", hidden: null });
    expect(visibleText("<!-- still open", null).hidden).toBe("<!--");
  });
});

describe("patch_section with a heading inside a comment or math block", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({
      root: vaultWith({
        "p1.md": "## A\n\n%%\n## hidden\n%%\n\na\n\n## B\n",
        "p2.md": "# A\n\n$$\n# x\n$$\n\na\n\n# B\n",
      }),
    });
  });
  afterAll(() => s.close());

  test("appends after the section's last line, not inside the comment", async () => {
    await s.call("patch_section", { path: "p1.md", heading: "A", mode: "append", content: "x" });
    expect(read(s, "p1.md")).toBe("## A\n\n%%\n## hidden\n%%\n\na\n\nx\n\n## B\n");
    await s.call("patch_section", { path: "p2.md", heading: "A", mode: "append", content: "x" });
    expect(read(s, "p2.md")).toBe("# A\n\n$$\n# x\n$$\n\na\n\nx\n\n# B\n");
  });
});

describe("patch_section under a setext heading over several lines", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({
      root: vaultWith({
        "s1.md": "Long title\ncontinued\n=========\n\nbody\n\n# Next\n",
        "s2.md": "One\ntwo\nthree\n---\n\nbody\n",
      }),
    });
  });
  afterAll(() => s.close());

  test("keeps every title line and the underline", async () => {
    await s.call("patch_section", { path: "s1.md", heading: "Long title continued", mode: "replace", content: "NEW" });
    expect(read(s, "s1.md")).toBe("Long title\ncontinued\n=========\n\nNEW\n\n# Next\n");
    await s.call("patch_section", { path: "s2.md", heading: "One two three", mode: "prepend", content: "first" });
    expect(read(s, "s2.md")).toBe("One\ntwo\nthree\n---\n\nfirst\n\nbody\n");
  });
});

describe("move_note rewrites the links the parser sees, no others", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({
      root: vaultWith({
        "T.md": "# T\n",
        "spans.md": "a `b\nc` [[T]] `d\ne`\n",
        "inside.md": "text `code with\n[[T]] inside` more [[T]]\n",
        "mixed.md": "[[T]] %% [[T]] %% <!-- [[T]] --> $$[[T]]$$ [[T|t]]\n",
        "bom.md": "\ufeff`x` [[T]] `y\r\n[[T]]` [[T]]\r\n",
      }),
    });
  });
  afterAll(() => s.close());

  test("a link between two code spans that run over lines is rewritten; links in spans, comments and math are not", async () => {
    const back = await s.call("list_backlinks", { path: "T.md" });
    expect([...new Set(back.items.map((i: any) => i.sourcePath))].sort()).toEqual(["bom.md", "inside.md", "mixed.md", "spans.md"]);
    const moved = await s.call("move_note", { from: "T.md", to: "U.md" });
    expect(moved.linksUpdated).toBe(6);
    expect(read(s, "spans.md")).toBe("a `b\nc` [[U]] `d\ne`\n");
    expect(read(s, "inside.md")).toBe("text `code with\n[[T]] inside` more [[U]]\n");
    expect(read(s, "mixed.md")).toBe("[[U]] %% [[T]] %% <!-- [[T]] --> $$[[T]]$$ [[U|t]]\n");
    expect(read(s, "bom.md")).toBe("\ufeff`x` [[U]] `y\r\n[[T]]` [[U]]\r\n");
  });
});

describe("words spelt in hex letters are tags; colours are not", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({
      root: vaultWith({
        "words.md": "#cafe #face #dad #add #beef #decade\n",
        "colours.md": "#fff #eee #ffffff #ff0000 #1e1e1e #a1b2c3 #ff000080\n",
        "front.md": "---\ntags: [cafe, bead, fff]\n---\nbody\n",
      }),
    });
  });
  afterAll(() => s.close());

  test("inline words are tags, colours are prose, frontmatter tags are all tags", async () => {
    expect((await s.call("read_note", { path: "words.md" })).tags.sort()).toEqual(["add", "beef", "cafe", "dad", "decade", "face"]);
    expect((await s.call("read_note", { path: "colours.md" })).tags).toEqual([]);
    expect((await s.call("read_note", { path: "front.md" })).tags.sort()).toEqual(["bead", "cafe", "fff"]);
  });
});

describe("emoji in tags", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({
      root: vaultWith({
        "e1.md": "#🍎 and #tag🍎x and #👩‍💻/dev and #👍🏽 and #❤️ and #🇫🇷\n",
        "e2.md": "#1984 #2️⃣ alone\n",
      }),
    });
  });
  afterAll(() => s.close());

  test("an emoji is part of a tag, whole with its joiners, skin tone and variation selector", async () => {
    expect((await s.call("read_note", { path: "e1.md" })).tags.sort()).toEqual(["❤️", "👍🏽", "👩‍💻/dev", "🇫🇷", "🍎", "tag🍎x"].sort());
    const listed = (await s.call("list_tags", {})).items.map((i: any) => i.tag);
    expect(listed).toContain("🍎");
    expect((await s.call("notes_by_tag", { tag: "👩‍💻" })).items?.map((i: any) => i.path) ?? []).toEqual(["e1.md"]);
  });

  test("digits with no emoji or letter are still no tag", async () => {
    expect((await s.call("read_note", { path: "e2.md" })).tags).toEqual([]);
  });
});

describe("a Markdown link's fragment", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({
      root: vaultWith({
        "Note.md": "# Note\n## My Heading\n## 100% sure\n",
        "md.md": "[t](Note.md#My%20Heading)\n",
        "wiki.md": "[[Note#My Heading]]\n",
        "bad.md": "[t](Note.md#100%sure)\n",
      }),
    });
  });
  afterAll(() => s.close());

  test("is percent-decoded as its path is, and kept as written when an escape is bad", async () => {
    const back = await s.call("list_backlinks", { path: "Note.md" });
    const heading = (p: string) => back.items.find((i: any) => i.sourcePath === p)?.heading;
    expect(heading("md.md")).toBe("My Heading");
    expect(heading("wiki.md")).toBe("My Heading");
    expect(heading("bad.md")).toBe("100%sure");
  });
});
