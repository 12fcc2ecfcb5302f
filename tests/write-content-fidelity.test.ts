// What the surgical write tools leave in a person's note, byte for byte (the write-content audit of
// 2026-12-05): line endings that match the note, whole characters, blocks that keep rendering as they did.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";

let s: TestServer;
const NFD = (x: string) => x.normalize("NFD");
beforeAll(async () => {
  const root = tempDir();
  const files: Record<string, string> = {
    "lf.md": "# Title\n\n## A\n\ntext\n",
    "emoji.md": "x😀y\n",
    "cafe.md": `# ${NFD("Café")}\n\nThe ${NFD("Café")} and the Cafe.\n`,
    "table.md": "# T\n\n## Data\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
    "quote.md": "# Q\n\n## Said\n\n> a quote\n",
    "list.md": "# L\n\n## Items\n\n- one\n- two\n",
    "tagged.md": "# Tagged\n\n## #project status\n\nold\n\n## Other\n",
    "Dup.md": "# root dup\n",
    "d/Dup.md": "# d dup\n",
    "Unique.md": "# unique\n",
    "log.md": "# Log\n\n## [2026-01-01] note | pasted\n\n```js\nconsole.log(1)\n",
  };
  for (const [p, t] of Object.entries(files)) {
    const abs = join(root, p);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, t);
  }
  s = await startTestServer({ root });
});
afterAll(() => s.close());

const read = (p: string) => readFileSync(join(s.root, p), "utf8");

test("CRLF sent into an LF note is written as LF: no mixed line endings", async () => {
  await s.call("patch_section", { path: "lf.md", heading: "A", mode: "append", content: "x\r\ny" });
  await s.call("apply_edits", { path: "lf.md", edits: [{ find: "text\r\n", replace: "TEXT\r\nmore\r\n" }] });
  expect(read("lf.md")).not.toContain("\r");
  expect(read("lf.md")).toContain("TEXT\nmore\n");
});

test("apply_edits refuses half a surrogate pair and never matches part of a character", async () => {
  const half: any = await s.callRaw("apply_edits", { path: "emoji.md", edits: [{ find: "\uD83D", replace: "X" }] });
  expect(half.kind).toBe("invalid-input");
  expect(read("emoji.md")).toBe("x😀y\n");
  // "Cafe" is in the note once as itself; the decomposed Café's letters are not a match.
  await s.call("apply_edits", { path: "cafe.md", edits: [{ find: "Cafe", replace: "Bistro" }] });
  expect(read("cafe.md")).toBe(`# ${NFD("Café")}\n\nThe ${NFD("Café")} and the Bistro.\n`);
});

test("patch_section puts a blank line between blocks of different kinds, so a person's table stays a table", async () => {
  await s.call("patch_section", { path: "table.md", heading: "Data", mode: "prepend", content: "- note" });
  expect(read("table.md")).toBe("# T\n\n## Data\n\n- note\n\n| a | b |\n|---|---|\n| 1 | 2 |\n");
  await s.call("patch_section", { path: "quote.md", heading: "Said", mode: "append", content: "| x |\n|---|" });
  expect(read("quote.md")).toBe("# Q\n\n## Said\n\n> a quote\n\n| x |\n|---|\n");
  // Same kinds still continue.
  await s.call("patch_section", { path: "list.md", heading: "Items", mode: "append", content: "- three" });
  expect(read("list.md")).toBe("# L\n\n## Items\n\n- one\n- two\n- three\n");
});

test("a heading whose title starts with # is named by that title", async () => {
  await s.call("patch_section", { path: "tagged.md", heading: "#project status", mode: "replace", content: "new" });
  expect(read("tagged.md")).toBe("# Tagged\n\n## #project status\n\nnew\n\n## Other\n");
  // "## Other" still names Other.
  await s.call("patch_section", { path: "tagged.md", heading: "## Other", mode: "append", content: "more" });
  expect(read("tagged.md")).toEndWith("## Other\n\nmore\n");
});

test("file_page writes its body with LF, and cites a shared name by its path", async () => {
  await s.call("file_page", { path: "pages/P.md", title: "P", content: "l1\r\nl2\r\n", citations: ["Unique"] });
  expect(read("pages/P.md")).not.toContain("\r");
  // From d/, [[Dup]] finds d/Dup.md (its own folder) today; the page names it by its path all the same.
  await s.call("file_page", { path: "d/Q.md", title: "Q", content: "q", citations: ["d/Dup.md", "Dup.md", "Unique"] });
  const page = read("d/Q.md");
  expect(page).toContain("- [[d/Dup|Dup]]\n- [[Dup]]\n- [[Unique]]\n");
});

test("append_log closes a code block the log left open, so the entry is not inside it", async () => {
  await s.call("append_log", { op: "note", title: "after code" });
  const log = read("log.md");
  expect(log).toStartWith("# Log\n\n## [2026-01-01] note | pasted\n\n```js\nconsole.log(1)\n```\n\n## [");
  expect((await s.call("read_outline", { path: "log.md" })).map((h: any) => h.title).at(-1)).toContain("after code");
  // A closed block is left as it is.
  await s.call("append_log", { op: "note", title: "again" });
  expect(read("log.md").match(/```/g)!.length).toBe(2);
});
