// A note in the web UI as Obsidian shows it (the web rendering audit of 2026-12-05): block embeds and block
// links, heading links written as Obsidian writes them, ids that do not repeat the page's own.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";
import { loginSession, type WebSession } from "./web-helpers";

let s: TestServer;
let web: WebSession;
const NOTES: Record<string, string> = {
  "Target.md": "# Target\n\n## Section One\n\nFirst paragraph\nof two lines. ^blk1\n\nOther text.\n\n- item a\n- item b ^li-1\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n^tbl\n\n## Section Two\n\n### Sub of two\n\nDeep.\n",
  "Host.md": "# Host\n\n![[Target#^blk1]]\n\n![[Target#^li-1]]\n\n![[Target#^tbl]]\n\n![[Target]]\n\n## Section Two\n\nMine.\n",
  "Footnotes.md": "# Notes\n\nA claim[^1] and another[^src].\n\n[^1]: First source.\n[^src]: Named source.\n",
  "Math.md": "# Math\n\n$$\na \\\\ b_1 *c*\n$$\n\nInline $x^2 *y*$ and prose with $5 and $10.\n",
  "Comments.md": "# C\n\nUse `%%` to start a comment. Shown %%hidden one%% too.\n\n```c\nprintf(\"%%d %%s\");\n```\n\n%%\nA block comment\n\nover paragraphs\n%%\n\nAfter. #cafe #🍎 #ff0000\n",
  "Pics.md": "![[gone.png]] and ![[pic.png|300]] and ![alt|200](pic.png)\n",
  "pic.png": "not really a png",
  "Plain.md": "# Plain\n\nplain text\n",
  "FootEmbed.md": "Main[^1]\n\n![[Plain]]\n\n> [!note] A callout\n> inside\n\n[^1]: main foot\n",
  "AfterComment.md": "Intro\n\n%% todo\nthis part %% The real paragraph **bold**.\n\n%%draft%% # Title\n",
  "Links.md": "[[Target#Section Two#Sub of two]] and [md](Target.md#Section%20Two) and [[Target#^blk1]] and [[#^here]]\n\nA line here ^here\n",
};
const html = async (path: string) => ((await (await web.fetch(`/api/note?path=${encodeURIComponent(path)}`)).json()) as { html: string }).html;

beforeAll(async () => {
  const root = tempDir();
  for (const [p, t] of Object.entries(NOTES)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), t);
  }
  s = await startTestServer({ root });
  web = await loginSession(s.vault, s.url);
});
afterAll(() => s.close());

test("a block embed shows that block alone: a paragraph, a list item, the table above a lone id", async () => {
  const h = await html("Host.md");
  const embeds = h.split('<div class="embed">').slice(1);
  expect(embeds[0]).toContain("First paragraph");
  expect(embeds[0]).not.toContain("Other text");
  expect(embeds[0]).not.toContain("^blk1");
  expect(embeds[1]).toContain("item b");
  expect(embeds[1]).not.toContain("item a");
  expect(embeds[2]).toContain("<table>");
  expect(embeds[2]).not.toContain("item b");
});

test("an embedded note's headings take no ids, so the page's own are the only ones", async () => {
  const h = await html("Host.md");
  expect(h.match(/id="h-section-two"/g)!.length).toBe(1);
});

test("block ids are anchors, not text; links to blocks and nested or encoded headings reach them", async () => {
  const t = await html("Target.md");
  expect(t).toContain('id="b-blk1"');
  expect(t).not.toMatch(/\^blk1|\^li-1/);
  const l = await html("Links.md");
  expect(l).toContain('href="/notes/Target.md#h-sub-of-two"');
  expect(l).toContain('href="/notes/Target.md#h-section-two"');
  expect(l).toContain('href="/notes/Target.md#b-blk1"');
  expect(l).toContain('id="b-here"');
  expect(l).toContain("Target › Section Two › Sub of two");
});

test("footnotes are numbered links to a list at the end; math is shown exactly as written", async () => {
  const f = await html("Footnotes.md");
  expect(f).toContain('href="#fn-1"');
  expect(f).toContain('<li id="fn-1">');
  expect(f).toContain("Named source.");
  expect(f).not.toContain("[^1]");
  const m = await html("Math.md");
  expect(m).toContain('<div class="math">a \\\\ b_1 *c*</div>');
  expect(m).toContain('<span class="math">x^2 *y*</span>');
  expect(m).toContain("$5 and $10");
});

test("comments are hidden, but a %% inside code is text; tags follow the index's rule", async () => {
  const c = await html("Comments.md");
  expect(c).toContain("<code>%%</code> to start a comment.");
  expect(c).toContain("Shown");
  expect(c).not.toContain("hidden one");
  expect(c).toContain('printf("%%d %%s");');
  expect(c).not.toContain("A block comment");
  expect(c).not.toContain("over paragraphs");
  expect(c).toContain("After.");
  expect(c).toContain('href="/tags/cafe"');
  expect(c).toContain(`href="/tags/${encodeURIComponent("🍎")}"`);
  expect(c).not.toContain('href="/tags/ff0000"');
});

test("an embed of a missing attachment is shown, not a link to a note to create; an image's size is no link text", async () => {
  const p = await html("Pics.md");
  expect(p).toContain('<span class="unresolved">gone.png</span>');
  expect(p).not.toContain("gone.png.md");
  const links = (await s.call("list_outgoing_links", { path: "Pics.md" })).items.map((l: any) => l.displayText);
  expect(links).toEqual([null, null, "alt"]);
});

test("a page's footnotes survive an embed and a callout; text after a comment is not made code", async () => {
  const f = await html("FootEmbed.md");
  expect(f).toContain('<section class="footnotes">');
  expect(f).toContain("main foot");
  const a = await html("AfterComment.md");
  expect(a).not.toContain("<pre>");
  expect(a).toContain("The real paragraph <strong>bold</strong>.");
  expect(a).toContain('<h1 id="h-title">Title</h1>');
});
