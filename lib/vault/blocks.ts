// Where a note body's blocks are (headings, code, lists, quotes) and its code
// masked out, so that the parser never sees tags or links inside code. Kept
// apart from parse.ts: this is the part tuned for the cold-index budget.
import type { Lexer as LexerClass, MarkedOptions, Token } from "marked";
import { blankCodeSpans } from "./code-spans";
import { lexerGuards, withFastRules } from "./lexer-guards";
import { FENCE, markedLexer, simpleBlocks, type Block } from "./block-scan";

export type { Block };

let lexerOptions: MarkedOptions | null = null;

/** A block lexer with the setext guard and the fast rules (lexer-guards.ts); the options (and their tokenizer) are built once and shared. */
function guardedLexer(): LexerClass {
  lexerOptions ??= new (require("marked") as typeof import("marked")).Marked({ gfm: true, tokenizer: lexerGuards as never }).defaults;
  return withFastRules(new (markedLexer())(lexerOptions));
}

function blank(s: string): string {
  return s.replace(/[^\n]/g, " ");
}

// Block structure is decided by how each line starts. Prose lines are most of
// a vault's bytes and marked's block lexer runs at about 9 MB/s on them here,
// too slow for the cold-index budget; so marked lexes a "skeleton" of the note
// with the same lines, where each prose line keeps only its leading markers.
// Headings, fences, rules, setext underlines and HTML keep their full text.
// The rule/table/setext branch is "[ \t>]* then one or more of [-=*_:| \t] to the end of the line", written so
// that the two parts cannot share a space or tab: as written plainly, a line of 250 KB of spaces and one
// letter made the engine try every split, 45 s on the thread answering requests (the content audit).
const KEEP_WHOLE = /^(?: {0,3}#|[ \t>]*(?:```|~~~)|[ \t>]*(?:[-=*_:|][-=*_:| \t]*|[ \t])$|[ \t>]*<)/;
const LEAD = /^[ \t>]*(?:(?:[-*+]|\d{1,9}[.)])(?=[ \t]|$)[ \t]*)?/;

// marked matches a paragraph (or a quote) with one regex over all its lines. Past ~50,000 lines
// Bun's regex engine gives up and answers "no match" after ~0.4 s, and marked then takes the
// block one line at a time, each time trying that regex again: a pasted log of 60,000 lines
// above a `---` held a thread for hours. So a run of this many lines without a blank one gets
// a blank line in the skeleton (at a prose line; the note's own lines are untouched), which ends
// the paragraph or quote there as a blank line would.
export const MAX_RUN_LINES = 10_000;

// marked lexes a list item's content again for every level it is nested in, so a note whose lines
// are each indented deeper than the last (a tab more, two spaces more) cost the square of its size:
// 128 KB of such lines held the request thread 2.5 s. Only top-level spans are read from the
// skeleton, and a line indented this far lies inside any top-level list item (whose content starts
// by column 18) whatever its depth, so the skeleton cuts deeper indentation to this width.
export const MAX_INDENT_COLUMNS = 48;
const DEEP_INDENT = /^[ \t>]*?[ \t]{13}/;

function capIndent(line: string): string {
  if (!DEEP_INDENT.test(line)) return line;
  let out = "";
  let i = 0;
  while (i < line.length) {
    const c = line.charCodeAt(i);
    if (c === 62 /* > */) {
      out += ">";
      i++;
      continue;
    }
    if (c !== 32 && c !== 9) break;
    // A run of blanks, a tab counted as a whole tab stop (4 columns).
    let cols = 0;
    const from = i;
    while (i < line.length && (line.charCodeAt(i) === 32 || line.charCodeAt(i) === 9)) cols += line.charCodeAt(i++) === 9 ? 4 : 1;
    out += cols > MAX_INDENT_COLUMNS ? " ".repeat(MAX_INDENT_COLUMNS) : line.slice(from, i);
  }
  return out + line.slice(i);
}

function skeleton(bodyLines: string[]): string {
  const lines = bodyLines.slice();
  let run = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] = capIndent(lines[i]!));
    run = line.trim() === "" ? 0 : run + 1;
    // A '>' may close an HTML block (-->, ?>, ]]>, </pre>): such lines keep their text too.
    if (KEEP_WHOLE.test(line) || line.includes(">", 1)) continue;
    if (run >= MAX_RUN_LINES) {
      lines[i] = "";
      run = 0;
      continue;
    }
    if (line.length < 3) continue;
    const lead = LEAD.exec(line)![0];
    if (lead.length < line.length) lines[i] = lead + "x";
  }
  return lines.join("\n");
}


/** Top-level blocks of the body, with line spans (marked's raws add up to the source). */
export function blocks(lines: string[]): Block[] {
  return simpleBlocks(lines) ?? lexedBlocks(lines);
}

/** The same from marked's block lexer, for any note (exported for the test that holds simpleBlocks to it). */
export function lexedBlocks(lines: string[]): Block[] {
  let tokens: Token[];
  try {
    tokens = guardedLexer().blockTokens(skeleton(lines), []) as Token[];
  } catch {
    return [];
  }
  const out: Block[] = [];
  let line = 0;
  for (const t of tokens) {
    const n = countNewlines(t.raw);
    out.push({ type: t.type, startLine: line, lineCount: n + (t.raw.endsWith("\n") ? 0 : 1), depth: (t as { depth?: number }).depth });
    line += n;
  }
  return out;
}

function countNewlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf("\n"); i !== -1; i = s.indexOf("\n", i + 1)) n++;
  return n;
}

/**
 * Replace code (fenced, indented, inline) with spaces of the same length so that
 * tags and links inside code are not seen, while offsets and line numbers stay true.
 */
export function maskCode(bodyLines: string[], bl: Block[], body?: string): string {
  // Most notes have no code, quote or list block: then the text is the body as it is
  // (bodyLines is body split on "\n"), with no copy of every line and no join.
  if (body !== undefined && !bl.some((b) => b.type === "code" || b.type === "blockquote" || b.type === "list")) {
    return body.includes("`") ? blankCodeSpans(body) : body;
  }
  const lines = bodyLines.slice();
  for (const b of bl) {
    if (b.type === "code") {
      for (let i = b.startLine; i < b.startLine + b.lineCount && i < lines.length; i++) lines[i] = blank(lines[i]!);
    } else if (b.type === "blockquote" || b.type === "list") {
      maskNestedFences(lines, b.startLine, b.startLine + b.lineCount);
    }
  }
  const masked = lines.join("\n");
  return masked.includes("`") ? blankCodeSpans(masked) : masked;
}

function maskNestedFences(lines: string[], from: number, to: number): void {
  let fence: string | null = null;
  for (let i = from; i < to && i < lines.length; i++) {
    const m = FENCE.exec(lines[i]!);
    if (fence) {
      const closes = m && m[1]![0] === fence[0] && m[1]!.length >= fence.length;
      lines[i] = blank(lines[i]!);
      if (closes) fence = null;
    } else if (m) {
      fence = m[1]!;
      lines[i] = blank(lines[i]!);
    }
  }
}
