// What a reader of a note never sees as Markdown: Obsidian comments (%% … %%), HTML comments
// (<!-- … -->) and $$ … $$ math. Obsidian finds no links, tags or headings inside them, so the
// parser must not either (an audit found [[T]] in a comment listed as a backlink, and move_note
// rewriting it). One scanner for the parser, move_note's rewrite and search snippets, so that
// they cannot disagree about where a comment ends.
import { blocks, maskCode, type Block } from "./blocks";
// Runs of spaces cut from one string: most notes of a real vault hide a comment (obsidian-hub's template
// leaves one in nine notes of ten), and a new " ".repeat() per line of each was a few percent of the parse.
import { codeSpanRanges, spaces } from "./code-spans";

type Opener = "%%" | "<!--" | "$$";
const CLOSER: Record<Opener, string> = { "%%": "%%", "<!--": "-->", $$: "$$" };

// `text` with the ranges [ranges[k], ranges[k + 1]) (in order, apart) turned to spaces, line breaks kept.
// Not a regex replace per character: comments are in most notes of a real vault (templates leave %% … %%
// in each), and the replace was most of the cost. Built as parts joined once: a string grown piece by piece
// is a rope, which its first reader copies out piece by piece (5-10 % of obsidian-hub's parse).
export function blankRanges(text: string, ranges: number[]): string {
  if (!ranges.length) return text;
  const parts: string[] = [];
  let from = 0;
  for (let k = 0; k < ranges.length; k += 2) {
    const to = ranges[k + 1]!;
    parts.push(text.slice(from, ranges[k]));
    for (let i = ranges[k]!; i < to; ) {
      const nl = text.indexOf("\n", i);
      const end = nl === -1 || nl >= to ? to : nl;
      parts.push(spaces(end - i));
      if (end < to) parts.push("\n");
      i = end + 1;
    }
    from = to;
  }
  parts.push(text.slice(from));
  return parts.join("");
}

/**
 * `text` with its comments (%% … %%, <!-- … -->; not math) turned to spaces, its code untouched: code is
 * blanked first for the scan, so a %% in code is text. With `drop`, the hidden text goes and only its line
 * breaks stay (the web page: spaces in its place made the text after a comment an indented code block).
 */
export function blankComments(text: string, drop = false): string {
  if (!text.includes("%%") && !text.includes("<!--")) return text;
  const lines = text.split("\n");
  const code = maskCode(lines, blocks(lines), text);
  const hidden = blankHidden(code, false);
  if (hidden === code) return text;
  let out = "";
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    if (hidden.charCodeAt(i) === code.charCodeAt(i)) continue;
    let j = i + 1;
    while (j < text.length && hidden.charCodeAt(j) !== code.charCodeAt(j)) j++;
    out += text.slice(from, i) + (drop ? hidden.slice(i, j).replace(/ +/g, "") : hidden.slice(i, j));
    from = i = j;
  }
  return out + text.slice(from);
}

/** Whether the text before `at` on its line is at most three spaces (where an HTML block may open). */
function opensLine(text: string, at: number): boolean {
  const start = text.lastIndexOf("\n", at - 1) + 1;
  return at - start <= 3 && /^ *$/.test(text.slice(start, at));
}

/**
 * `text` with comments (and, with `math`, $$ … $$ blocks) turned to spaces, line breaks kept, so
 * offsets and lines do not move. Run it on text whose code is already blanked: a `%%` in code is
 * text. An unclosed comment hides the rest of the text, as Obsidian's reading view does; an
 * unclosed `$$` is a dollar sign, not math (Obsidian renders nothing as math without its closer).
 * Linear whatever the text holds (a note is untrusted input): each marker's next place is searched
 * for only once it is behind the scan, so no stretch is searched again for the same marker.
 */
export function blankHidden(text: string, math = true): string {
  return blankRanges(text, hiddenRanges(text, math).ranges);
}

/**
 * What blankHidden blanks: [start, end) pairs in order. `unclosed`: an opener had no closer (the rest of the
 * text hidden, or the opener taken as text): maskBody's fast path leaves such a text to the usual one.
 * `code`: code spans ([start, end) pairs in order) whose markers are text, as if they were blanked.
 */
function hiddenRanges(text: string, math: boolean, code: number[] | null = null): { ranges: number[]; unclosed: boolean } {
  const find = code ? (s: string, from: number) => outsideCode(text, s, from, code) : (s: string, from: number) => text.indexOf(s, from);
  const ranges: number[] = [];
  const openers: Opener[] = [];
  if (text.includes("%%")) openers.push("%%");
  if (text.includes("<!--")) openers.push("<!--");
  if (math && text.includes("$$")) openers.push("$$");
  // The common note has none: the text as it is, with no copy.
  if (!openers.length) return { ranges, unclosed: false };
  // Where each opener is next found (-2: not searched yet, -1: none left).
  const next = openers.map(() => -2);
  const closerGone = new Set<Opener>();
  let from = 0;
  for (;;) {
    let k = -1;
    for (let o = 0; o < openers.length; o++) {
      let p = next[o]!;
      if (p !== -1 && p < from) next[o] = p = find(openers[o]!, from);
      if (p !== -1 && (k === -1 || p < next[k]!)) k = o;
    }
    if (k === -1) break;
    const opener = openers[k]!;
    const at = next[k]!;
    // Once a closer is not found, none is after any later opener either: searched once (linear on "a <!-- " × n).
    // An HTML comment's closer may share its opener's dashes: `<!-->` and `<!--->` are whole (empty) comments
    // (HTML's rule and marked's); taken as openers alone, each hid the rest of the note, links and headings too.
    const end = closerGone.has(opener) ? -1 : find(CLOSER[opener], at + (opener === "<!--" ? 2 : opener.length));
    if (end === -1) closerGone.add(opener);
    // Math does not run over a blank line ("$$ is a lot" … "And $$ again" are prose), and an unclosed
    // <!-- hides the rest only when it opens a line, as an HTML block does (mid-line it is text): both
    // hid every link and heading after them, and a move left those links dangling (review of the change).
    if ((opener === "$$" && end !== -1 && /\n[ \t]*\n/.test(text.slice(at, end))) || (opener === "<!--" && end === -1 && !opensLine(text, at))) {
      next[k] = find(opener, at + opener.length);
      continue;
    }
    if (end === -1) {
      // No `$$` after this one anywhere: no more math to look for.
      if (opener === "$$") {
        next[k] = -1;
        continue;
      }
      ranges.push(at, text.length);
      break;
    }
    const stop = end + CLOSER[opener].length;
    ranges.push(at, stop);
    from = stop;
  }
  return { ranges, unclosed: closerGone.size > 0 };
}

/**
 * text.indexOf(s, from) passing over occurrences inside the code spans `code`: `s` (a comment's marker)
 * holds no backtick, so an occurrence that meets a span lies inside it. A binary search per hop: a scan
 * of the spans from the start each time would cost the spans times the markers.
 */
function outsideCode(text: string, s: string, from: number, code: number[]): number {
  for (let p = text.indexOf(s, from); ; p = text.indexOf(s, p)) {
    if (p === -1) return -1;
    // The first span ending after p.
    let lo = 0;
    let hi = code.length >> 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (code[2 * mid + 1]! <= p) lo = mid + 1;
      else hi = mid;
    }
    if (lo === code.length >> 1 || code[2 * lo]! > p) return p;
    p = code[2 * lo + 1]!; // inside that span: look again after it
  }
}

/**
 * The blocks less the headings a comment or math block holds, and the lines with what comments hide
 * taken out of the headings that stay ("# Plan %% draft %%" is the heading "Plan"). `codeMasked` is
 * the body with code blanked, `masked` the same with comments and math blanked too: a heading is
 * hidden when every character of its first line that code left visible is blanked in `masked`
 * ("%% note %% Title" over a setext underline is still the heading Title).
 */
export function visibleBlocks(bl: Block[], bodyLines: string[], codeMasked: string, masked: string): { bl: Block[]; lines: string[] } {
  if (masked === codeMasked || !bl.some((b) => b.type === "heading")) return { bl, lines: bodyLines };
  // Line offsets from the lines' lengths, as far as the headings go (blocks come in order): no second scan of the text.
  let line = 0;
  let offset = 0;
  const offsetOf = (n: number) => {
    for (; line < n && line < bodyLines.length; line++) offset += bodyLines[line]!.length + 1;
    return offset;
  };
  const hiddenAt = (i: number) => masked.charCodeAt(i) === 32 && codeMasked.charCodeAt(i) !== 32 && codeMasked.charCodeAt(i) !== 9;
  let lines = bodyLines;
  const kept = bl.filter((b) => {
    if (b.type !== "heading") return true;
    const from = offsetOf(b.startLine);
    const first = bodyLines[b.startLine] ?? "";
    // Comments and math only ever turn characters to spaces: where a heading's lines read the same in both
    // texts, nothing of them is hidden, and the heading stays as it is (compared natively, not a character
    // at a time through hiddenAt as below: obsidian-hub has 21,000 headings, nine in ten notes a comment).
    let end = from - 1;
    for (let n = b.startLine; n < b.startLine + b.lineCount && n < bodyLines.length; n++) end += bodyLines[n]!.length + 1;
    if (masked.slice(from, end) === codeMasked.slice(from, end)) return true;
    let seen = false;
    let hidden = false;
    for (let i = from; i < from + first.length && !seen; i++) {
      const c = codeMasked.charCodeAt(i);
      if (c === 32 || c === 9) continue;
      if (hiddenAt(i)) hidden = true;
      else seen = true;
    }
    if (hidden && !seen) return false;
    for (let n = b.startLine; n < b.startLine + b.lineCount && n < bodyLines.length; n++) {
      const at = offsetOf(n);
      const text = bodyLines[n]!;
      // Most heading lines hide nothing: looked at first, not copied a character at a time.
      let i = 0;
      while (i < text.length && !hiddenAt(at + i)) i++;
      if (i === text.length) continue;
      let out = text.slice(0, i);
      for (; i < text.length; i++) if (!hiddenAt(at + i)) out += text[i];
      if (lines === bodyLines) lines = bodyLines.slice();
      // The comment's own spaces were code-visible: what is left of it is a run of blanks.
      lines[n] = out.replace(/[ \t]{2,}/g, " ");
    }
    return true;
  });
  return { bl: kept, lines };
}

/**
 * A note's body split by line (its headings' lines without what comments hide), its blocks (less the headings hidden in comments and math) and its
 * text as the parser reads it: code, comments and math blanked, offsets and lines kept. Every
 * reader of links, tags and headings starts here, so all of them see the same text.
 */
export function maskBody(body: string): { bodyLines: string[]; bl: Block[]; masked: string } {
  const bodyLines = body.split("\n");
  const all = blocks(bodyLines);
  const fast = commentsOverCode(body, all);
  if (fast) {
    const masked = blankRanges(body, fast.all);
    // The code-masked text is made only for a heading a comment reaches (rare), which visibleBlocks reads closely.
    if (!headingsMeet(all, bodyLines, fast.comments)) return { bodyLines, bl: all, masked };
    const seen = visibleBlocks(all, bodyLines, maskCode(bodyLines, all, body), masked);
    return { bodyLines: seen.lines, bl: seen.bl, masked };
  }
  const codeMasked = maskCode(bodyLines, all, body);
  const masked = blankHidden(codeMasked);
  const seen = visibleBlocks(all, bodyLines, codeMasked, masked);
  return { bodyLines: seen.lines, bl: seen.bl, masked };
}

/**
 * For a body whose only code is code spans: the ranges its masked text blanks (its code spans and, found
 * as on the code-masked text, its comments: [start, end) pairs in order), and the comments' alone; null when
 * the body is not of that kind. Then the masked text is the body with those ranges blanked, in one copy,
 * where the usual way makes the code-masked text first (a copy, which its reader copies again out of a
 * rope) and scans that. Comments are found on the body passing over markers inside code spans, which are
 * exactly the markers the code-masked text no longer has (blanking removes occurrences, never adds one,
 * and no marker holds a backtick). Math ($$, whose blank-line rule reads the code-masked lines) and an
 * opener without a closer (whose rule reads the line before it) are left to the usual way, as are code
 * blocks, quotes and lists (maskCode's other work).
 */
function commentsOverCode(body: string, bl: Block[]): { all: number[]; comments: number[] } | null {
  if (body.includes("$$") || (!body.includes("%%") && !body.includes("<!--"))) return null;
  if (bl.some((b) => b.type === "code" || b.type === "blockquote" || b.type === "list")) return null;
  const spans = body.includes("`") ? codeSpanRanges(body) : [];
  const { ranges, unclosed } = hiddenRanges(body, false, spans.length ? spans : null);
  if (unclosed) return null;
  if (!spans.length) return { all: ranges, comments: ranges };
  // A span lies inside a comment or apart from all (a comment's opener and closer are outside every span):
  // the spans apart from comments go in between them, in order.
  const all: number[] = [];
  let k = 0;
  for (let s = 0; s < spans.length; s += 2) {
    for (; k < ranges.length && ranges[k + 1]! <= spans[s]!; k += 2) all.push(ranges[k]!, ranges[k + 1]!);
    if (k < ranges.length && ranges[k]! <= spans[s]!) continue; // inside ranges[k]
    all.push(spans[s]!, spans[s + 1]!);
  }
  for (; k < ranges.length; k += 2) all.push(ranges[k]!, ranges[k + 1]!);
  return { all, comments: ranges };
}

/** Whether a heading's lines meet one of the ranges (so that visibleBlocks must read it). */
function headingsMeet(bl: Block[], bodyLines: string[], ranges: number[]): boolean {
  let line = 0;
  let offset = 0;
  let k = 0;
  for (const b of bl) {
    if (b.type !== "heading") continue;
    for (; line < b.startLine && line < bodyLines.length; line++) offset += bodyLines[line]!.length + 1;
    let end = offset - 1;
    for (let n = b.startLine; n < b.startLine + b.lineCount && n < bodyLines.length; n++) end += bodyLines[n]!.length + 1;
    // [offset, end): the heading's lines (blocks come in order, so the ranges are walked once).
    while (k < ranges.length && ranges[k + 1]! <= offset) k += 2;
    if (k < ranges.length && ranges[k]! < end) return true;
  }
  return false;
}
