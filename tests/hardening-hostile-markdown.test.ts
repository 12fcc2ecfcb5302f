// Notes are untrusted input: no Markdown, however odd, may cost more than
// linear time to parse. Notes under 256 KB are parsed on the request thread
// when the watcher or a write indexes them, so before these fixes an 80 KB
// line of '[' held every caller for 3 s (the Markdown-link pattern rescanned
// the line from each bracket), and a heading of 100k backticks for 6 s (the
// code-span pattern). Each note here is 400 KB: at the old cost each would
// run for minutes and the test's 30 s would fail it; linear, all of them
// take well under a second. No timing is asserted beyond that.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { backtickRuns, blankCodeSpans } from "../lib/vault/code-spans";
import { splitPassages } from "../lib/semantic/passages";
import { parseNote } from "../lib/vault/parse";
import { maySetextHeading } from "../lib/vault/lexer-guards";
import { REPO, startTestServer, type TestServer } from "./helpers/server";

const SIZE = 400_000;
const fill = (unit: string) => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);

const HOSTILE: [string, string][] = [
  ["a line of [", `# T\n\n${fill("[")}\n`],
  ["[a](b repeated", `# T\n\n${fill("[a](b")}\n`],
  ["[a](<b repeated", `# T\n\n${fill("[a](<b")}\n`],
  ['[a](b "t repeated', `# T\n\n${fill('[a](b "t')}\n`],
  ["a heading of backticks", `# ${fill("`")}\n`],
  ["a heading of [", `# ${fill("[")}\n`],
  ["a heading of [a](", `# ${fill("[a](")}\n`],
  ["backtick runs of growing length", `# T\n\n${Array.from({ length: 880 }, (_, i) => "`".repeat(i + 1) + "a").join("")}\n`],
  ["[[ with no close", `# T\n\n${fill("[[a|")}\n`],
  ["a line of | (spaces once cleaned)", `# T\n\n${fill("|")}\n`],
  ["lines of ===", `# T\n\n${fill("===\n")}`],
  ["a line of <http:", `# T\n\n${fill("<http:")}\n`],
  // The content audit of 2026-12-05: the rule/setext pattern tried every split of a line of blanks (250 KB: 45 s).
  ["a line of spaces, then a letter", `# T\n\n${fill(" ")}x\n`],
  ["a line of tabs, then #", `# T\n\n${fill("\t")}#\n`],
  // A review of those fixes: blanks before a heading's end or after a callout's title, '[' before a web link.
  ["a heading, then blanks, then a letter", `# a${fill(" ")}x\n`],
  ["a callout's title, then blanks", `> [!ai] a${fill(" ")}x\n> ${fill(" ")}y\n`],
  ["a line of [, then a web link's end and a mention", `# T\n\n${fill("[")}](http://x) @bob\n`],
  // Nested lists without the lexer (lib/vault/blocks.ts simpleBlocks): a break's pattern gave back one repetition at a time.
  ["a list item, then a line of - - - and a letter", `# T\n\n- a\n${fill("- ")}x\n\n    y\n`],
  ["an outline nested by tabs and spaces", `# T\n\n${fill("- a\n\t- b\n\n    c\n")}`],
  // The read-side review of 2026-12-07: a tag's trailing slashes were cut by /\/+$/, tried from each slash (100k: 11 s).
  ["a frontmatter tag of slashes, then a letter", `---\ntags: ["${fill("/")}x"]\n---\n# T\n`],
  ["an inline tag of slashes, then a letter", `# T\n\n#a${fill("/")}x\n`],
  // The same review: a mention's line of `[](http:` (the web-link pattern's address ran to the line's end from each '[').
  ["a mention, then a line of [](http:", `# T\n\n@bob ${fill("[](http:")}\n`],
  ["a mention, then a line of [](https:a(", `# T\n\n@bob ${fill("[](https:a(")}\n`],
  // A directive's body trimmed of blank lines by /^\n+|\n+$/g: a run of them inside the body was rescanned from each.
  ["a directive whose body is blank lines, then a word", `# T\n\n> [!ai] do it\n> a\n${fill(">\n")}> x\n`],
];

describe("hostile Markdown parses in linear time", () => {
  for (const [what, text] of HOSTILE) {
    test(what, () => {
      const parsed = parseNote("hostile.md", text);
      expect(parsed.title.length).toBeGreaterThan(0);
    }, 30_000);
  }

  for (const [what, text] of HOSTILE) {
    test(`${what}: split into passages`, () => {
      expect(Array.isArray(splitPassages(text, 1000, "T"))).toBe(true);
    }, 30_000);
  }

  test("the setext guard: false only where no underline can come before a blank line", () => {
    expect(maySetextHeading("Title\n=====\n")).toBe(true);
    expect(maySetextHeading("two\nlines\n---\n")).toBe(true);
    expect(maySetextHeading("Title\n\n===\n")).toBe(false);
    expect(maySetextHeading("x".repeat(100_000))).toBe(false);
    expect(maySetextHeading("word\n".repeat(150) + "---\n")).toBe(true);
    expect(maySetextHeading("word\n".repeat(1000))).toBe(false); // a "heading" past 200 lines is the paragraph it looks like
    expect(maySetextHeading("word\n".repeat(1000) + "---\n")).toBe(false);
  });

  // Not in HOSTILE: before the fix this never came back (hours), so it runs in a process of its own that can be stopped.
  test("a pasted log of 60,000 lines above a --- or === line", () => {
    const script = `
      const { parseNote } = require(${JSON.stringify(join(REPO, "lib/vault/parse"))});
      const log = Array.from({ length: 60000 }, (_, i) => "2026-12-05 10:" + i + " GET /api/notes 200 [[Inbox]] #log").join("\\n");
      for (const u of ["---", "==="]) {
        const p = parseNote("log.md", "# Server log\\n\\n" + log + "\\n" + u + "\\n\\n## After\\n");
        console.log(JSON.stringify({ headings: p.headings.map((h) => h.title), links: p.links.length, tags: p.tags }));
      }`;
    const r = Bun.spawnSync([process.execPath, "-e", script], { timeout: 60_000, stderr: "pipe" });
    expect(r.exitCode, r.stderr.toString()).toBe(0);
    for (const line of r.stdout.toString().trim().split("\n")) {
      const out = JSON.parse(line);
      expect(out.headings).toEqual(["Server log", "After"]); // no 60,000-line heading
      expect(out.links).toBe(60000);
      expect(out.tags).toEqual(["log"]);
    }
  }, 90_000);

  test("patch_section's heading-only parse finds what parseNote finds", () => {
    const { parseHeadings } = require("../lib/vault/parse") as typeof import("../lib/vault/parse");
    const texts = [...HOSTILE.map(([, t]) => t), "---\ntitle: x\n---\n# A\n\ntext\nSetext\n---\n\n```\n# not\n```\n## B #\n"];
    for (const t of texts) expect(parseHeadings(t)).toEqual(parseNote("x.md", t).headings);
  }, 30_000);

  test("code spans: a run closes at the next run of the same length; unclosed runs are text", () => {
    expect(blankCodeSpans("a `b` c")).toBe("a     c");
    expect(blankCodeSpans("``x`y`` #tag")).toBe("        #tag");
    expect(blankCodeSpans("`a ``b`` #t")).toBe("`a       #t");
    expect(blankCodeSpans("`one\nline two`")).toBe("    \n         ");
    expect(blankCodeSpans("no code")).toBe("no code");
    expect(backtickRuns("a``b`c``").close.slice(0, 3)).toEqual([2, -1, -1]);
  });

  test("a line of links to web addresses and @mentions: each mention checked once (2 MB took ~a minute)", () => {
    const line = "[x](http://a) @b [@c](https://e.example) ".repeat(50_000);
    const p = parseNote("m.md", `# T\n\n${line}\n`);
    expect(p.mentions.length).toBe(50_000); // @b, never the credit inside a link's text
    expect(p.mentions.every((m) => m.handle === "b")).toBe(true);
  }, 30_000);

  // The lenient YAML fallback (for frontmatter Bun's parser refuses) spelled out keys that are maps at every
  // level: 500 bytes of `{` took 10 s, 1 KB over a minute. And it read 250 KB of invalid escapes in 8 s.
  test("frontmatter a lenient parser would take minutes over is a frontmatter error", () => {
    for (const fm of ["a: " + "{".repeat(1000), "a: [{[{" + "[{".repeat(400)]) {
      const p = parseNote("f.md", `---\n${fm}\n---\n# F\n`);
      expect(p.frontmatterError).toMatch(/map or a list/);
      expect(p.frontmatter).toEqual({});
    }
    const escapes = parseNote("e.md", `---\na: "${"\\x".repeat(100_000)}"\n---\n# E\n`);
    expect(escapes.frontmatterError).toBeTruthy();
    // What the fallback is for still reads: a plain scalar starting with '@', an unclosed flow list, and a
    // template's `{{date}}` (a map keyed by a map: one level, refused only as keys within keys).
    expect(parseNote("ok.md", "---\naliases:\n  - @handle\ntags: [a, b\n---\n# Ok\n").frontmatter).toEqual({ aliases: ["@handle"], tags: ["a", "b"] });
    const template = parseNote("t.md", "---\ntags: [template, daily]\ncreated: {{date}}\nauthor: @me\n---\n# T\n");
    expect(template.frontmatterError).toBeFalsy();
    expect(template.frontmatter).toMatchObject({ tags: ["template", "daily"], author: "@me" });
  }, 30_000);

  test("links and tags around the fixed patterns still come out", () => {
    const p = parseNote("n.md", "# T\n\n[x](Other.md) [[Wiki]] `[[Hidden]] #nottag` #real [a [b](B.md) ![img](<My File.png> \"title\")\n");
    expect(p.links.map((l) => l.target).sort()).toEqual(["B.md", "My File.png", "Other.md", "Wiki"]);
    expect(p.tags).toEqual(["real"]);
  });
});

describe("through the server", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s?.close());

  test("hostile notes under the worker threshold index on the request thread and leave it answering", async () => {
    const paths = HOSTILE.map((_, i) => `Hostile ${i}.md`);
    HOSTILE.forEach(([, text], i) => writeFileSync(join(s.root, paths[i]!), text.slice(0, 200_000) + "\nhostilemarker\n"));
    await s.vault.indexer.update(paths);
    expect((await s.call("search", { query: "hostilemarker", limit: 50 }, "read")).total).toBe(HOSTILE.length);
    expect((await (await s.rpc({ jsonrpc: "2.0", id: 1, method: "ping" })).json()) as any).toMatchObject({ result: {} });
  }, 30_000);

  // log.md is read as a ledger by get_vault_info, recent_activity and the web UI's work page, on the request
  // thread: one pattern for a whole heading backtracked over a run of blanks (2,000 spaces: 3 s; 10,000: minutes).
  test("a log.md heading with long runs of blanks is read as a ledger in linear time", async () => {
    const blanks = fill(" ");
    writeFileSync(
      join(s.root, "log.md"),
      `# Log\n\n## [2026-03-01] ingest${blanks}x\n## [2026-03-02] query |${blanks}y ${fill("\t")}##\n## [2026-03-03] lint | Last ${fill(" \t")}#\n`,
    );
    await s.vault.indexer.update(["log.md"]);
    const { entries } = await s.call("recent_activity", {}, "read");
    expect(entries.map((e: any) => [e.date, e.op.replace(/ +/g, " "), e.title])).toEqual([
      ["2026-03-03", "lint", "Last"],
      ["2026-03-02", "query", "y"],
      ["2026-03-01", "ingest x", ""],
    ]);
    expect((await s.call("get_vault_info", {}, "read")).liveness.lastLogDate).toBe("2026-03-03");
  }, 30_000);

  test("2 MB of one Chinese character, or of random CJK, index in bounded time and memory (their n-grams)", async () => {
    // Each character makes a bigram (lib/vault/ngram.ts): random CJK makes ~700,000 distinct tokens a note, one
    // character ~700,000 of one token. Only the first NGRAM_MAX_CHARS characters are made n-grams.
    let x = 7;
    let random = "";
    while (random.length < 700_000) random += String.fromCodePoint(0x4e00 + ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) % 20_000));
    const notes: [string, string][] = [
      ["One character.md", `# One\n\n${"中".repeat(700_000)}\n`],
      ["Random CJK.md", `# Random\n\n${random}\n`],
      // Under the worker threshold: indexed on the request thread.
      ["Random small.md", `# Small\n\n${random.slice(0, 80_000)}\n`],
    ];
    const rss0 = process.memoryUsage().rss;
    for (const [path, text] of notes) {
      writeFileSync(join(s.root, path), text);
      const t0 = performance.now();
      await s.vault.indexer.update([path]);
      const ms = performance.now() - t0;
      // ~0.3 s, ~1.8 s (on the full-text writer thread) and ~0.1 s here; linear, so a loaded machine stays far inside this.
      expect(ms, path).toBeLessThan(20_000);
    }
    expect(process.memoryUsage().rss - rss0).toBeLessThan(1024 * 1024 * 1024);
    const probe = random.slice(500_000, 500_004);
    expect((await s.call("search", { query: probe }, "read")).items.map((i: { path: string }) => i.path)).toEqual(["Random CJK.md"]);
    expect((await s.call("search", { query: "中中中" }, "read")).items.map((i: { path: string }) => i.path)).toEqual(["One character.md"]);
    expect((await (await s.rpc({ jsonrpc: "2.0", id: 1, method: "ping" })).json()) as any).toMatchObject({ result: {} });
  }, 60_000);

  test("a frontmatter of nested YAML aliases is a frontmatter error, not 300 MB of JSON", async () => {
    // 6 levels of 9 aliases over 500-character leaves: 4.7 KB of text that expands 9^5 times.
    let y = `a: &a [${Array(9).fill(JSON.stringify("L".repeat(500))).join(",")}]\n`;
    for (let i = 1; i < 6; i++) y += `${"abcdef"[i]}: &${"abcdef"[i]} [${Array(9).fill("*" + "abcdef"[i - 1]).join(",")}]\n`;
    const text = `---\n${y}---\n# Bomb\n\naliasbombmarker\n`;
    expect(parseNote("bomb.md", text).frontmatterError).toMatch(/aliases expand/);
    const ok = parseNote("ok.md", "---\nbase: &b {x: 1}\nother: *b\n---\n# Ok\n");
    expect(ok.frontmatter).toEqual({ base: { x: 1 }, other: { x: 1 } });
    await s.call("write_note", { path: "Inbox/bomb.md", content: text });
    const res: any = await s.callRaw("read_note", { path: "Inbox/bomb.md" }, "read");
    expect(res.content[0].text.length).toBeLessThan(20_000);
    expect(JSON.parse(res.content[0].text).frontmatter).toEqual({});
    expect((await s.call("search", { query: "aliasbombmarker" }, "read")).total).toBe(1);
  }, 30_000);
});
