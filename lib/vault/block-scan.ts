// The line scan that answers for most notes without marked's block lexer (simpleBlocks): where their
// headings and column-0 code blocks are, following lists and tables as marked reads them, or null when a
// note holds something only the lexer can place. Apart from blocks.ts, which lexes the rest and masks code.
import type { Lexer as LexerClass } from "marked";

// marked loads on first need: most notes never reach its lexer (see simpleBlocks), and loading it
// cost every parse worker and the main thread ~10-15 ms of a cold index's start-up.
let lexer: typeof LexerClass | null = null;
export function markedLexer(): typeof LexerClass {
  return (lexer ??= (require("marked") as typeof import("marked")).Lexer);
}

export interface Block {
  type: string;
  startLine: number; // 0-based, in the body
  lineCount: number;
  depth?: number;
}

export const FENCE = /^[ \t>]*(```+|~~~+)/;

// A note with none of these lines has no code blocks, and its only top-level
// headings are ATX lines starting in column 0: fences, indented lines (code or
// nested lists), indented '#' lines, HTML blocks other than comments, and
// setext underlines (the last two checked below).
const NEEDS_LEXER = /^(?:[ \t>]*(?:```|~~~)| {4}|\t| {1,3}#)/;
// marked's own rule for the start of an HTML block; other lines starting with '<' (inline HTML) are prose.
let htmlBlock: RegExp | null = null;
const HTML_BLOCK = () => (htmlBlock ??= (markedLexer() as unknown as { rules: { block: { gfm: { html: RegExp } } } }).rules.block.gfm.html);
const UNDERLINE = /^ {0,3}(?:=+|-+)[ \t]*$/;
/** The level of a column-0 ATX heading line, as /^#{1,6}(?=[ \t]|$)/ reads it (its match's length), or 0. */
function atxDepth(line: string): number {
  let n = 0;
  while (n < 7 && line.charCodeAt(n) === 35 /* # */) n++;
  const next = line.charCodeAt(n);
  return n <= 6 && (n === line.length || next === 32 || next === 9) ? n : 0;
}
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
  // Below 4 columns the blanks are spaces (a tab reaches column 4): the column is the character's index.
  const indent = indentOf(line);
  const c = line.charCodeAt(indent);
  if ((c === 45 || c === 42 || c === 95) && isThematic(line)) return -1;
  const m = ITEM_LINE.exec(line);
  if (m) {
    const itemIndent = m[1]!.length;
    if (listCol >= 0 && itemIndent >= listCol) return listCol; // an item nested in the open one
    // An empty item ends at a blank line (an item may start with one blank line only): left to the lexer.
    // A number other than 1 does not interrupt a paragraph: no list.
    // (marked's rule is the digit 1 itself: "01." does not interrupt one either.)
    if (m[0].length === line.length || (listCol < 0 && !prevBlank && m[3] !== undefined && m[3] !== "1")) return -1;
    if (!plainItem(m, line)) return -1;
    if (m[4]!.includes("\t")) return Number.MAX_SAFE_INTEGER; // a tab after the mark: content column left to the lexer
    return itemIndent + m[2]!.length + m[4]!.length;
  }
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
 * Whether an HTML block (marked's rule matched on its first line) is of a kind that runs to the next blank
 * line, whatever it holds: a block tag (<div>, <iframe>: the rule's third group), a lone open tag (<img …>,
 * <video …>: the fourth) or a closing tag. The other kinds (<pre>, <script>, <?, <!X, CDATA) end at their
 * closer and stay with the lexer.
 */
function runsToBlank(html: RegExpExecArray, line: string): boolean {
  return html[3] !== undefined || html[4] !== undefined || line.startsWith("</");
}

// The longest such block the scan follows. (The lexer reads a skeleton of the note that has a blank line
// after every MAX_RUN_LINES lines without one, lib/vault/blocks.ts: a longer block would end there.)
const MAX_HTML_LINES = 1000;
const BLANK_LINE = /^[ \t]*$/; // marked's blank line here: spaces and tabs only ("\n[ \t]*\n")

/**
 * Where an HTML block that opens a block of its own at line `i` (after a blank line, outside lists and
 * tables) ends as marked's rule reads it: at its first blank line (the index of that line), or at the
 * note's end; -1 when it is longer than the scan follows. Everything up to there is the block's: no
 * heading, fence or list inside it counts. Half of obsidian-hub's lexed notes went to the lexer only for
 * such a block (a YouTube <iframe>), and the lexer costs ~10× the scan a byte, cold in each worker.
 */
function htmlBlockEnd(lines: string[], i: number): number {
  for (let j = i + 1; j < lines.length; j++) {
    if (BLANK_LINE.test(lines[j]!)) return j;
    if (j - i >= MAX_HTML_LINES) return -1;
  }
  return lines.length;
}

/**
 * Whether the note holds a line this scan is known to read otherwise than the lexer: a line of blanks that
 * trim() removes but marked does not (U+00A0: a paragraph's line to marked, a blank one in places here, so
 * a "---" under it is a heading to one and not the other). Such a note with an HTML block still goes to the
 * lexer, as every note with an HTML block did before the scan followed them: following them must not move
 * a note from the lexer's reading to the scan's.
 */
function scanDiffers(lines: string[]): boolean {
  for (const line of lines) if (line.length && line.trim() === "" && !BLANK_LINE.test(line)) return true;
  return false;
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
 * top-level heading or code; nor do HTML blocks that run to a blank line and open a block of their
 * own (htmlBlockEnd). Indented code, indented fences, other HTML blocks and setext headings still go
 * to the lexer.
 */
export function simpleBlocks(lines: string[]): Block[] | null {
  const out: Block[] = [];
  let plain: boolean | undefined; // no line scanDiffers finds (looked for once, at the first HTML block)
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
    // (Each pattern below is tried only on lines whose first character it can match: most lines that get
    // here are list items and headings, which none of COMMENT_START, NEEDS_LEXER and UNDERLINE can match.)
    if (inComment || ((c === 60 /* < */ || c === 32) && COMMENT_START.test(line))) {
      // An HTML comment block runs to the line that closes it; a '#' inside is not a heading. Its closer may
      // share the opener's dashes: `<!-->` and `<!--->` are whole (empty) comments, to marked and to HTML.
      inComment = !line.includes("-->", inComment ? 0 : line.indexOf("<!--") + 2);
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
      const depth = atxDepth(line);
      if (depth) out.push({ type: "heading", startLine: i, lineCount: 1, depth });
      listCol = depth ? -1 : listAfter(line, listCol, prevBlank, prevIndented);
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
    const indent = c === 32 || c === 9 ? indentOf(line) : 0;
    if (indent >= 4) {
      // Indented: inside the open list item, or a paragraph's or item's next line; else (indented code, a
      // fence or HTML inside a list) the lexer decides.
      // In a table's rows (an indented line ends them as code) the lexer decides too.
      const inside = listCol >= 0 && indent >= listCol ? true : !prevBlank && !afterComment && continues(lines[i - 1]!, listCol);
      if (tableOpen || !inside || FENCE.test(line) || line.trimStart().startsWith("<")) return null;
      prevBlank = false;
      prevIndented = true;
      continue;
    }
    if ((c === 32 || c === 9 || c === 62 /* > */ || c === 96 /* ` */ || c === 126) /* ~ */ && NEEDS_LEXER.test(line)) return null;
    if (c === 60 /* < */ || (c === 32 && line.trimStart().startsWith("<"))) {
      const html = HTML_BLOCK().exec(line + "\n");
      if (html) {
        const opens = c === 60 && prevBlank && listCol < 0 && !tableOpen && (i === 0 || BLANK_LINE.test(lines[i - 1]!));
        const end = opens && runsToBlank(html, line) && (plain ??= !scanDiffers(lines)) ? htmlBlockEnd(lines, i) : -1;
        if (end < 0) return null;
        i = end - 1; // the blank line that ends it is read as any other
        prevBlank = prevIndented = false;
        continue;
      }
    }
    if ((c === 45 /* - */ || c === 61 /* = */ || c === 32) && UNDERLINE.test(line) && i > 0 && lines[i - 1]!.trim() !== "") return null;
    listCol = c === 62 /* > */ || c === 60 /* < */ ? -1 : listAfter(line, listCol, prevBlank, prevIndented);
    prevBlank = prevIndented = false;
  }
  return inComment ? null : out;
}

