// Where a note body's blocks are (headings, code, lists, quotes) and its code
// masked out, so that the parser never sees tags or links inside code. Kept
// apart from parse.ts: this is the part tuned for the cold-index budget.
import type { Lexer as LexerClass, MarkedOptions, Token } from "marked";
import { blankCodeSpans } from "./code-spans";
import { lexerGuards, withFastRules } from "./lexer-guards";

// marked loads on first need: most notes never reach its lexer (see simpleBlocks), and loading it
// cost every parse worker and the main thread ~10-15 ms of a cold index's start-up.
let lexer: typeof LexerClass | null = null;
let lexerOptions: MarkedOptions | null = null;
function markedLexer(): typeof LexerClass {
  return (lexer ??= (require("marked") as typeof import("marked")).Lexer);
}

/** A block lexer with the setext guard and the fast rules (lexer-guards.ts); the options (and their tokenizer) are built once and shared. */
function guardedLexer(): LexerClass {
  lexerOptions ??= new (require("marked") as typeof import("marked")).Marked({ gfm: true, tokenizer: lexerGuards as never }).defaults;
  return withFastRules(new (markedLexer())(lexerOptions));
}

const FENCE = /^[ \t>]*(```+|~~~+)/;

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

export interface Block {
  type: string;
  startLine: number; // 0-based, in the body
  lineCount: number;
  depth?: number;
}

// A note with none of these lines has no code blocks, and its only top-level
// headings are ATX lines starting in column 0: fences, indented lines (code or
// nested lists), indented '#' lines, HTML blocks other than comments, and
// setext underlines (the last two checked below).
const NEEDS_LEXER = /^(?:[ \t>]*(?:```|~~~)| {4}|\t| {1,3}#)/;
// marked's own rule for the start of an HTML block; other lines starting with '<' (inline HTML) are prose.
let htmlBlock: RegExp | null = null;
const HTML_BLOCK = () => (htmlBlock ??= (markedLexer() as unknown as { rules: { block: { gfm: { html: RegExp } } } }).rules.block.gfm.html);
const UNDERLINE = /^ {0,3}(?:=+|-+)[ \t]*$/;
const ATX_LINE = /^#{1,6}(?=[ \t]|$)/;
const COMMENT_START = /^ {0,3}<!--/;
// The first characters a line can start with to matter to simpleBlocks: space, tab, # > ` ~ < = - and a
// table's delimiter row (| :)
// (A typed array over ASCII: a sparse array's holes, and NaN for an empty line, took the slow lookup.)
const MAY_MATTER = asciiSet(" \t#>`~<=-|:");
// A table's delimiter row, roughly (| --- |, --|--, :-:|): its rows run to a blank line, and an indented
// line ends them as code, which the lexer must see.
const TABLE_DELIMITER = /^[ \t]*[|:-][-:| \t]*$/;

// A fenced code block that starts in column 0 (marked's fences rule, less its 0-3 spaces of
// indentation): a backtick fence's info string holds no backtick.
const FENCE_OPEN = /^(?:`{3,}(?=[^`]*$)|~{3,})/;

/** Whether `line` closes a fence opened with `run` (marked: up to 3 spaces, the run, more of its character, spaces). */
function closesFence(line: string, run: string): boolean {
  let i = 0;
  while (i < 3 && line.charCodeAt(i) === 32) i++;
  if (!line.startsWith(run, i)) return false;
  i += run.length;
  const ch = run.charCodeAt(0);
  while (line.charCodeAt(i) === ch) i++;
  while (line.charCodeAt(i) === 32) i++;
  return i === line.length;
}

// A list item's line: up to 3 spaces, a bullet or a number and its mark, then a blank or the line's end.
const ITEM_LINE = /^( {0,3})([-*+]|(\d{1,9})[.)])(?=[ \t]|$)([ \t]*)/;
/**
 * A thematic break (- - -, ***, ___), which a list item's pattern also matches ("* * *"): it ends a list.
 * A scan, not /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/: that regex gave back one repetition at a time on
 * a line of "- - - … x", 0.34 s a megabyte.
 */
function isThematic(line: string): boolean {
  let i = 0;
  while (i < 3 && line.charCodeAt(i) === 32) i++;
  const mark = line.charCodeAt(i);
  if (mark !== 45 && mark !== 42 && mark !== 95) return false;
  let marks = 0;
  for (; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === mark) marks++;
    else if (c !== 32 && c !== 9) return false;
  }
  return marks >= 3;
}
// Characters that can start a line of some block other than a paragraph (or a list item, checked apart).
const BLOCK_START = asciiSet(" \t#>`~<=|");
// Where a line's first character may open a block, what must follow for it to do so: a list mark and a blank
// ("**bold**" is prose), a fence's three marks, a link reference definition's "]:" ("[[Link]]" and
// "[text](url)" are prose). Any "#" counts: marked ends a list item at one, "#tag" included.
const ITEM_MARK_AT = /^[-*+](?:[ \t]|$)/;
const FENCE_AT = /^(?:```|~~~)/;
const DEFINITION = /^\[[^\]]{1,999}\]:/;

/** Whether the text from `at` of `line` opens a block other than a paragraph (conservatively: yes where unsure). */
function opensBlock(line: string, at: number): boolean {
  const c = line.charCodeAt(at);
  const rest = () => line.slice(at, at + 1002);
  switch (c) {
    case 42: // *
    case 43: // +
    case 45: // -
    case 95: // _
      return ITEM_MARK_AT.test(rest()) || isThematic(line.slice(at));
    case 96: // `
    case 126: // ~
      return FENCE_AT.test(rest());
    case 91: // [
      return DEFINITION.test(rest());
    default:
      return BLOCK_START[c] === 1;
  }
}

function asciiSet(chars: string): Uint8Array {
  const set = new Uint8Array(128);
  for (const ch of chars) set[ch.charCodeAt(0)] = 1;
  return set;
}

/**
 * Columns of a line's leading blanks (a tab to the next multiple of 4), counted to at most 32: past an
 * item's content column (17 at most) by 4 or more is all the scan asks.
 */
function indentOf(line: string): number {
  let cols = 0;
  for (let i = 0; i < line.length && cols < 32; i++) {
    const c = line.charCodeAt(i);
    if (c === 32) cols++;
    else if (c === 9) cols = (cols & ~3) + 4;
    else break;
  }
  return cols;
}

/**
 * The column where the content of the list the scan is in starts, after `line` (-1: not in a list). An
 * indented line after a blank one is inside that list when it is indented at least that far, and
 * indented code otherwise. Conservative where CommonMark is subtle: an answer of -1 only sends an
 * indented line after a blank to the lexer.
 */
function listAfter(line: string, listCol: number, prevBlank: boolean, prevIndented: boolean): number {
  const c = line.charCodeAt(indentOf(line));
  if ((c === 45 || c === 42 || c === 95) && isThematic(line)) return -1;
  const m = ITEM_LINE.exec(line);
  if (m) {
    const indent = m[1]!.length;
    if (listCol >= 0 && indent >= listCol) return listCol; // an item nested in the open one
    // An empty item ends at a blank line (an item may start with one blank line only): left to the lexer.
    // A number other than 1 does not interrupt a paragraph: no list.
    // (marked's rule is the digit 1 itself: "01." does not interrupt one either.)
    if (m[0].length === line.length || (listCol < 0 && !prevBlank && m[3] !== undefined && m[3] !== "1")) return -1;
    if (!plainItem(m, line)) return -1;
    if (m[4]!.includes("\t")) return Number.MAX_SAFE_INTEGER; // a tab after the mark: content column left to the lexer
    return indent + m[2]!.length + m[4]!.length;
  }
  const indent = indentOf(line);
  if (indent >= listCol) return listCol;
  // Less indented than the item's content: a lazy continuation of its paragraph, as marked reads one (a
  // paragraph's line, after a line indented less than 4), or the list's end.
  if (prevBlank || prevIndented || opensBlock(line, indent)) return -1;
  return listCol;
}

/**
 * Whether an item opens with a paragraph a later line may continue: not with another block (a fence, a
 * heading, a quote) nor with indented code (marked reads 4 blanks after the mark as that already).
 */
function plainItem(m: RegExpExecArray, line: string): boolean {
  return m[4]!.length < 4 && !opensBlock(line, m[0].length);
}

/**
 * Whether an indented line, less indented than the open list item's content (if any), right after `prev`
 * (not blank) continues prev's paragraph lazily, rather than starting code. Not when prev was itself
 * indented 4 or more past its container's content (marked then ends the item, and the line is code).
 */
function continues(prev: string, listCol: number): boolean {
  const indent = indentOf(prev);
  if (indent - Math.max(listCol, 0) >= 4) return false;
  if (indent >= 4) return true; // inside the open item: a continuation the scan already took
  const c = prev.charCodeAt(indent);
  if ((c === 45 || c === 42 || c === 95) && isThematic(prev)) return false;
  const m = ITEM_LINE.exec(prev);
  if (m) return m[0].length < prev.length && plainItem(m, prev);
  // A paragraph's line; not a table's row (an indented line ends a table and starts code).
  return !opensBlock(prev, indent) && !prev.includes("|");
}

/**
 * Headings and column-0 fenced code blocks of a note that needs no lexer, or
 * null when it does. Most notes take this path, which skips a third of the
 * cold index's parse time and gives the lexer's answer (tests/vault-blocks.test.ts
 * checks it against the lexer on the corpora and on generated notes of tricky lines).
 * A fence in column 0 interrupts a paragraph, a list and a quote alike, and
 * everything up to its closing fence is code: such notes need no lexer either (a
 * fifth of the synthetic vault's notes, a quarter of its bytes, took the lexer for
 * them alone). Nor do indented lines that continue a paragraph or a list item
 * (nested lists, the usual reason a note has indented lines): they hold no
 * top-level heading or code. Indented code, indented fences, HTML blocks and setext
 * headings still go to the lexer.
 */
export function simpleBlocks(lines: string[]): Block[] | null {
  const out: Block[] = [];
  let inComment = false;
  let prevBlank = true;
  let prevIndented = false;
  let tableOpen = false;
  let prevComment = false;
  let listCol = -1;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const afterComment = prevComment;
    prevComment = false;
    if (line.length === 0) {
      if (!inComment) prevBlank = true;
      prevIndented = tableOpen = false;
      continue;
    }
    const c = line.charCodeAt(0);
    // Most lines start with a letter: none of the patterns below can match them.
    if (!inComment && (c > 127 || MAY_MATTER[c] === 0)) {
      // Only a list's state can change here: an item (* + or a number), a break (* _), or prose after a blank line.
      if (c === 42 || c === 43 || c === 95 || (c >= 48 && c <= 57) || ((prevBlank || prevIndented) && listCol >= 0)) listCol = listAfter(line, listCol, prevBlank, prevIndented);
      prevBlank = prevIndented = false;
      continue;
    }
    if (inComment || COMMENT_START.test(line)) {
      // An HTML comment block runs to the line that closes it; a '#' inside is not a heading.
      inComment = !line.includes("-->", inComment ? 0 : line.indexOf("<!--") + 4);
      listCol = -1;
      prevBlank = prevIndented = false;
      prevComment = true; // an HTML block: the next line is no paragraph's continuation
      continue;
    }
    if ((c === 32 || c === 9) && line.trim() === "") {
      prevBlank = true;
      prevIndented = false;
      // marked ends a table's rows at a line of spaces only: a tab keeps it open.
      if (!line.includes("\t")) tableOpen = false;
      continue;
    }
    if (!tableOpen && line.includes("|") && TABLE_DELIMITER.test(line)) tableOpen = true;
    if (c === 35 /* # */) {
      const m = ATX_LINE.exec(line);
      if (m) out.push({ type: "heading", startLine: i, lineCount: 1, depth: m[0].length });
      listCol = m ? -1 : listAfter(line, listCol, prevBlank, prevIndented);
      prevBlank = prevIndented = false;
      continue;
    }
    if (c === 96 /* ` */ || c === 126 /* ~ */) {
      const open = FENCE_OPEN.exec(line);
      if (open) {
        let j = i + 1;
        while (j < lines.length && !closesFence(lines[j]!, open[0])) j++;
        // Unclosed: code to the end of the note.
        const end = Math.min(j, lines.length - 1);
        out.push({ type: "code", startLine: i, lineCount: end - i + 1 });
        i = end;
        listCol = -1;
        prevBlank = prevIndented = false;
        continue;
      }
    }
    if ((c === 32 || c === 9) && indentOf(line) >= 4) {
      // Indented: inside the open list item, or a paragraph's or item's next line; else (indented code, a
      // fence or HTML inside a list) the lexer decides.
      const indent = indentOf(line);
      // In a table's rows (an indented line ends them as code) the lexer decides too.
      const inside = listCol >= 0 && indent >= listCol ? true : !prevBlank && !afterComment && continues(lines[i - 1]!, listCol);
      if (tableOpen || !inside || FENCE.test(line) || line.trimStart().startsWith("<")) return null;
      prevBlank = false;
      prevIndented = true;
      continue;
    }
    if (NEEDS_LEXER.test(line)) return null;
    if (c === 60 /* < */ || (c === 32 && line.trimStart().startsWith("<"))) {
      if (HTML_BLOCK().test(line + "\n")) return null;
    }
    if (UNDERLINE.test(line) && i > 0 && lines[i - 1]!.trim() !== "") return null;
    listCol = c === 62 /* > */ || c === 60 /* < */ ? -1 : listAfter(line, listCol, prevBlank, prevIndented);
    prevBlank = prevIndented = false;
  }
  return inComment ? null : out;
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
