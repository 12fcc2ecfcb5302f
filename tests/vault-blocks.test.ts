// simpleBlocks (lib/vault/block-scan.ts) answers for most notes without marked's block lexer. Wherever it
// answers, what the parser takes from the blocks must be the lexer's: the top-level headings, and the
// text with its code masked. Held here on notes generated from tricky lines (lists nested by spaces and
// tabs, indented code, breaks that look like items, tables, HTML) and on every note of the corpora.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { simpleBlocks } from "../lib/vault/block-scan";
import { lexedBlocks, maskCode, type Block } from "../lib/vault/blocks";
import { noteBody } from "../lib/vault/parse";
import { CORPORA, describeWithCorpus } from "./helpers/corpora";

const headings = (bl: Block[]) => bl.filter((b) => b.type === "heading").map((b) => [b.startLine, b.depth]);

/** Whether simpleBlocks answers for `body`, and if it does, that its answer is the lexer's. */
function agrees(body: string): boolean {
  const lines = body.split("\n");
  const simple = simpleBlocks(lines);
  if (!simple) return false;
  const lexed = lexedBlocks(lines);
  const what = JSON.stringify(body);
  expect(headings(simple), what).toEqual(headings(lexed));
  expect(maskCode(lines, simple, body), what).toBe(maskCode(lines, lexed, body));
  return true;
}

const LINES = [
  "", "", "", "   ", "\t", "        ",
  "Some prose here.", "More prose `code # not` text.", "2024 was a year.", "(aside)",
  "- item", "* star item", "+ plus item", "1. one", "2. two", "10) ten", "-", "1.", "- ", "-     five spaces", "-\ttab after", "100. hundred",
  "  - nested two", "   - nested three", "    - nested four", "\t- tab nested", "        - deep", "\t\t- two tabs", "  \t- space tab",
  "    indented text", "\tindented by a tab", "     five spaced text", "    # indented hash", "    <div>",
  "  continued two", "   * nested star",
  "* * *", "---", "___", "- - -", "***", "===", "--",
  "# Heading", "## Second", "#tag not heading", "   # spaced heading",
  "```", "```js", "~~~", "    ```", "- ```", "\t```",
  "> quote", "> - quote item", ">     quoted indent", "> ```",
  "| a | b |", "|---|---|", "a | b", "--|--",
  "<div>", "</div>", "<!-- c -->", "<!--", "-->", "<span>inline</span> text",
  "[ref]: /url", "[[Wiki link]] at start",
  "  1. nested ordered", "\t1. tab ordered", "- [ ] task", "    - [x] done task", "- a | b", ": colon", "  ", "- # heading item", "- > quote item",
  "-    four after", "   - three in", "         nine in", "01. lead", "<!-- open", "close -->", "   10. ten in", "       seven in", " \t- space tab item",
  "- **bold**: x", "**b** text", "- [link](x) item", "####### seven", "- #tag x", "--flag x",
];

// A small deterministic generator (mulberry32), so that a failure names the same note every run.
function rng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("simpleBlocks gives the lexer's headings and code", () => {
  test("on generated notes of tricky lines, including the nested lists it now takes", () => {
    const next = rng(7);
    let answered = 0;
    let indentedAnswered = 0;
    for (let n = 0; n < 20000; n++) {
      const count = 2 + Math.floor(next() * 10);
      const lines: string[] = [];
      for (let k = 0; k < count; k++) lines.push(LINES[Math.floor(next() * LINES.length)]!);
      const body = lines.join("\n");
      if (agrees(body)) {
        answered++;
        if (lines.some((l) => /^( {4}|\t|  \t)/.test(l) && l.trim() !== "")) indentedAnswered++;
      }
    }
    // The generator reaches both paths, and the new one (indented lines answered without the lexer) often.
    expect(answered).toBeGreaterThan(2000);
    expect(indentedAnswered).toBeGreaterThan(500);
  });

  test("the cases it must leave to the lexer, or answer as the lexer does", () => {
    const cases = [
      "- a\n    - b\n        - c\n# Top",
      "- a\n\n    inside the item\n# Top",
      "Para\n\n    code here\n# Top",
      "# H\n    code after a heading",
      "1. a\n\n    inside",
      "100. a\n\n    code or not",
      "* * *\n\n    code after a break",
      "text\n2. not an item\n\n    code",
      "| a | b |\n|---|---|\n    code ends the table",
      "- a\n\tb\n\n\t- c\n# H",
      "- a\n    ```\n    # in code\n    ```\n# H",
      "-\ttab item\n\n    x",
      // Found by the review of the change: four blanks after the mark, a line 4 past a deep item's content,
      // a line after an HTML comment, "01." after a paragraph, a table kept open by a line of a tab.
      "-    x\n    #tag [[Link]]",
      "1)    item\n    see [[Other]] #todo",
      "   - n3\n         x9\n\t#tag",
      "  1. o\n\t\t\tx\n  \t#tag",
      "  10. x\n\t\t\tx\n    text4",
      "<!--\nc -->\n\t#tag",
      "prose\n01. lead\n\n    #tag",
      "#tag\n  |---|\n\t\n   10. o\n       x7\n \t- st1\n- 1. x",
    ];
    for (const c of cases) agrees(c);
    // An outline of nested bullets, the usual reason a note has indented lines, needs no lexer.
    expect(agrees("# Plan\n- one\n    - two\n        - three\n\t- four\n- five\n\n    - six\n## Next\ntext")).toBe(true);
    // Indented code after a paragraph and a blank line is code: left to the lexer.
    expect(simpleBlocks("Para\n\n    code".split("\n"))).toBeNull();
  });
});

describeWithCorpus(["obsidian-help", "obsidian-hub", "dnd-srd-wiki"], "simpleBlocks agrees with the lexer on every corpus note", () => {
  test("obsidian-help, obsidian-hub and the SRD wiki", () => {
    let notes = 0;
    let answered = 0;
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        if (e.name.startsWith(".")) continue;
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith(".md")) {
          notes++;
          if (agrees(noteBody(readFileSync(p, "utf8")))) answered++;
        }
      }
    };
    for (const name of ["obsidian-help", "obsidian-hub", "dnd-srd-wiki"]) walk(join(CORPORA, name));
    expect(notes).toBeGreaterThan(7000);
    expect(answered / notes).toBeGreaterThan(0.97);
  }, 120_000);
});
