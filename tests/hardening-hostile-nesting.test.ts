// The second audit of hostile note text (2026-12-05): shapes that still cost far more than their
// size on the request thread after the first. Each case below is sized so that the old code
// runs past its test's time limit, while the fixed code takes a small part of it; no other
// timing is asserted.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Lexer } from "marked";
import { blocks } from "../lib/vault/blocks";
import { paragraphLength, quoteLength } from "../lib/vault/lexer-guards";
import { renderNote } from "../lib/render/note-html";
import { parseNote } from "../lib/vault/parse";
import { splitPassages } from "../lib/semantic/passages";
import { startTestServer, type TestServer } from "./helpers/server";

/** Lines each indented one `unit` deeper than the last, as list items, to `bytes`. */
function deeper(unit: string, bytes: number): string {
  let s = "";
  for (let i = 0; s.length < bytes; i++) s += `${unit.repeat(i)}- x\n`;
  return s;
}

describe("hostile nesting and short lines", () => {
  // marked lexes a list item's content once for each level it sits in: 128 KB of such lines took 2.5 s, 2 MB minutes.
  test("2 MB of list items, each a tab deeper than the last", () => {
    const p = parseNote("deep.md", `# Deep\n\n${deeper("\t", 2_000_000)}\nafter the list [[Target]]\n`);
    expect(p.headings.map((h) => h.title)).toEqual(["Deep"]);
    expect(p.links.map((l) => l.target)).toEqual(["Target"]);
  }, 30_000);

  test("deep indentation keeps the top-level blocks: one list, then what follows it", () => {
    const text = `${deeper("  ", 20_000)}\n# After\n\n    indented code\n`;
    const types = blocks(text.split("\n")).map((b) => b.type).filter((t) => t !== "space");
    expect(types).toEqual(["list", "heading", "code"]);
    // A fence opened deep inside the list is inside it; the heading after the list is one.
    const fenced = `- a\n${" ".repeat(80)}- b\n${" ".repeat(90)}\`\`\`\n${" ".repeat(90)}# not a heading\n${" ".repeat(90)}\`\`\`\n\n# Heading\n`;
    expect(parseNote("f.md", fenced).headings.map((h) => h.title)).toEqual(["Heading"]);
  }, 30_000);

  // marked's paragraph rule tries a long lookahead at every line: ~8 µs a line here, 3 MB of short lines ~10 s.
  test("3 MB of short lines above a rule", () => {
    const p = parseNote("log.md", `# Log\n\n${"[x\n".repeat(1_000_000)}---\n\n## End\n`);
    expect(p.headings.map((h) => h.title)).toEqual(["Log", "End"]);
  }, 5_000);

  // The same lookahead inside marked's blockquote rule, at every '>' line: 250 KB 0.25 s, 6 MB ~6 s.
  test("6 MB of quote lines above a rule", () => {
    const p = parseNote("quote.md", `# Q\n\n${">x\n".repeat(2_000_000)}---\n\n## End\n`);
    expect(p.headings.map((h) => h.title)).toEqual(["Q", "End"]);
  }, 4_000);

  const rules = (Lexer as unknown as { rules: { block: { gfm: { paragraph: RegExp; blockquote: RegExp } } } }).rules.block.gfm;
  /** A rule's paragraph lookahead, cut from its source between `head` and `tail` as lexer-guards.ts does. */
  function lookahead(rule: RegExp, head: string, tail: string): RegExp {
    expect(rule.source.startsWith(head) && rule.source.endsWith(tail)).toBe(true);
    return new RegExp(`(?:${rule.source.slice(head.length, -tail.length)})`, "y");
  }
  const parts = ["x", "word", " ", "   ", "    ", "\t", "-", "- ", "---", "* * *", "_", "___", "*", "+ ", "1. ", "1) ", "12. ", "#", "# ", "####### ", ">", "> ", " >", "```", "~~~", "<div>", "<div", "</p>", "<!--", "<?", "<![CDATA[", "<script", "|", "| a |", "|---|", ":-:", "-:", "\r", "=", "\\"];
  /** 20,000 texts of up to six lines of block openers, the same ones every run. */
  function* randomTexts(): Generator<string> {
    let seed = 42;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let k = 0; k < 20_000; k++) {
      const lines: string[] = [];
      for (let i = Math.floor(rnd() * 6); i >= 0; i--) {
        let l = rnd() < 0.4 ? "> " : "";
        for (let j = Math.floor(rnd() * 4); j > 0; j--) l += parts[Math.floor(rnd() * parts.length)];
        lines.push(l);
      }
      yield lines.join("\n") + (rnd() < 0.3 ? "\n" : "");
    }
  }

  // Each scan against the rule it stands for: the lookahead cut from the rule's source between these two parts.
  const SCANS = [
    { name: "paragraph", rule: rules.paragraph, scan: paragraphLength, head: "^([^\\n]+(?:\\n(?!", tail: ")[^\\n]+)*)" },
    {
      name: "blockquote",
      rule: rules.blockquote,
      scan: quoteLength,
      head: "^( {0,3}> ?(?:(?![ \\t]*(?:\\n|$))(([^\\n]+(?:\\n(?!",
      tail: ")[^\\n]+)*))|[^\\n]*)(?:\\n|$))+",
    },
  ];
  for (const { name, rule, scan, head, tail } of SCANS) {
    test(`the ${name} scan's length is marked's own rule's, on random lines of block openers`, () => {
      const interrupt = lookahead(rule, head, tail);
      for (const src of randomTexts()) {
        const m = rule.exec(src);
        expect([src, scan(src, interrupt)]).toEqual([src, m ? m[0].length : -1]);
      }
    }, 30_000);
  }

  // The scans go in through the lexer's rules, not as tokenizer overrides: marked mends a false table start
  // by merging the paragraphs around it only while its own paragraph method is in place.
  test("the fast rules leave marked's own repairs in place: a false table start stays in its paragraph", () => {
    const html = renderNote("/vault", () => null, "n.md", "Intro line\n| a | b |\n|---|---|---|\n");
    expect(html.match(/<p>/g)?.length).toBe(1);
    const quoted = renderNote("/vault", () => null, "q.md", "> Quoted text\n> a | b\n> |--|--|--|\n");
    expect(quoted.match(/<p>/g)?.length).toBe(1);
  });

  // The heading path went in front of each of the section's windows: a 1 MB heading line, 1,000 times over.
  test("a 1 MB heading line: each passage carries a bounded heading, the text itself once", () => {
    const passages = splitPassages(`${"# ".repeat(500_000)}\n`, 1000, "T");
    expect(passages.length).toBeGreaterThan(500);
    expect(Math.max(...passages.map((p) => p.input.length))).toBeLessThan(1500);
    expect(Math.max(...passages.map((p) => p.heading.length))).toBeLessThanOrEqual(300);
  }, 30_000);
});

describe("through the server", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s?.close());

  test("such notes index on the request thread and are found", async () => {
    const notes: [string, string][] = [
      ["Deep tabs.md", deeper("\t", 200_000)],
      ["Deep spaces.md", deeper("  ", 200_000)],
      ["Short lines.md", `${"[x\n".repeat(60_000)}---\n`],
      ["Quote lines.md", `${">x\n".repeat(60_000)}---\n`],
      ["Long heading.md", `${"# ".repeat(100_000)}\n`],
    ];
    for (const [path, text] of notes) writeFileSync(join(s.root, path), `${text}\nnestingmarker\n`);
    await s.vault.indexer.update(notes.map(([p]) => p));
    expect((await s.call("search", { query: "nestingmarker", limit: 10 }, "read")).total).toBe(notes.length);
    expect((await (await s.rpc({ jsonrpc: "2.0", id: 1, method: "ping" })).json()) as object).toMatchObject({ result: {} });
  }, 30_000);
});
