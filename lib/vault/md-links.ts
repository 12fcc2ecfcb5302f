// Markdown links, [text](destination "title"), found in one pass over the text.
//
// The rule is the parser's pattern, kept below as MD_LINK_RULE (and checked against this scan in
// tests/vault-md-links.test.ts): link text without brackets or line breaks, whitespace, an <angle>
// destination or a bare one of at most 4,096 characters without spaces or ')', an optional
// quoted title, whitespace, ')'. As a regex it tried the bare destination again from every '[' of a
// line like "[a]([a]([a](…", 4,096 characters each time: 250 KB took 0.3 s to parse and 0.6 s more
// to rewrite on move_note, on the thread answering every caller. Here each character is read a
// bounded number of times: a bare destination's end is found once for the run it lies in.
export const MD_LINK_RULE = /(!?)\[([^[\]\n]*)\]\(\s*(<[^<>\n]+>|(?=([^)\s]{1,4096}))\4)(?:\s+(?:"[^"\n]*"|'[^'\n]*'))?\s*\)/g;

const MAX_BARE = 4096;

export interface MdLink {
  /** Offset of the match: its '!' for an image or embed, else its '['. */
  index: number;
  /** The whole match, as MD_LINK_RULE matches it. */
  raw: string;
  bang: "!" | "";
  text: string;
  /** The destination as written: with its angle brackets, if any. */
  dest: string;
}

// JavaScript's \s, by code unit: testing /\s/ on s[i] made a one-character string and ran a regex for every
// character a destination spans, a fifth of all parse time on obsidian-hub.
function isSpaceCode(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 160) return false;
  return c === 160 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}
const isSpace = (s: string, i: number) => i < s.length && isSpaceCode(s.charCodeAt(i));

// The runs the scan skips over, matched by sticky patterns rather than a loop over code units: a parse
// worker reads each note once, mostly in code not yet compiled, where a loop costs ~10 ns a character
// and the regex engine's compiled loop a fraction of that from its first call. A third of
// obsidian-hub's bytes are link destinations (long URLs), so these loops were a quarter of its parse.
// \s here is the same set as isSpaceCode (it is JavaScript's own \s).
const SPACES = /\s*/y;
const TEXT = /[^[\]\n]*/y; // link text: up to the first bracket or line break
const BARE = /[^)\s]*/y; // a bare destination: up to ')' or whitespace

/** Where the run `re` (sticky, matching the empty string too) matches from `i` ends. */
function runEnd(re: RegExp, s: string, i: number): number {
  re.lastIndex = i;
  re.test(s);
  return re.lastIndex;
}

function skipSpaces(s: string, i: number): number {
  return i < s.length && isSpaceCode(s.charCodeAt(i)) ? runEnd(SPACES, s, i) : i;
}

/** The end of `\s+(?:"…"|'…')` from `i` (a title), or -1. */
function titleEnd(s: string, i: number): number {
  const w = skipSpaces(s, i);
  if (w === i) return -1;
  const q = s[w];
  if (q !== '"' && q !== "'") return -1;
  for (let j = w + 1; j < s.length; j++) {
    const c = s[j];
    if (c === q) return j + 1;
    if (c === "\n") return -1;
  }
  return -1;
}

/** The end of the link after a destination ending at `d` (an optional title, spaces, ')'), or -1. */
function closeAfter(s: string, d: number): number {
  const t = titleEnd(s, d);
  if (t !== -1) {
    const c = skipSpaces(s, t);
    if (s[c] === ")") return c + 1;
  }
  const c = skipSpaces(s, d);
  return s[c] === ")" ? c + 1 : -1;
}

/**
 * The Markdown links of `s`, in order, as `s.matchAll(MD_LINK_RULE)` finds them. (An array, not a generator:
 * resuming one per link cost more than the links.)
 */
export function mdLinks(s: string): MdLink[] {
  const out: MdLink[] = [];
  if (!s.includes("](")) return out; // every link has one
  let from = 0; // where the next match may start (the end of the last one)
  // The run of bare-destination characters (not ')' nor whitespace) last measured: [runStart, runStop).
  let runStart = -1;
  let runStop = -1;
  // What follows that run (a title, ')'), read once for every '[' whose destination ends there: re-read for
  // each, an unclosed title ran to the line's end up to 1,024 times.
  let closedAt = -1;
  for (let b = s.indexOf("[", from); b !== -1; b = s.indexOf("[", b + 1)) {
    if (b < from) continue;
    // The text runs to the first bracket or line break, which must be "](" (this reads most of a note's
    // bytes between brackets).
    const c = runEnd(TEXT, s, b + 1);
    const cc = s.charCodeAt(c); // NaN at the text's end
    if (cc !== 93 || s.charCodeAt(c + 1) !== 40 /* ( */) {
      if (cc === 91) b = c - 1; // the next '[' is the next candidate
      continue;
    }
    const r = skipSpaces(s, c + 2);
    let end = -1;
    let destEnd = -1;
    if (s[r] === "<") {
      let a = r + 1;
      while (a < s.length && s[a] !== "<" && s[a] !== ">" && s[a] !== "\n") a++;
      if (s[a] === ">" && a > r + 1) {
        end = closeAfter(s, a + 1);
        if (end !== -1) destEnd = a + 1;
      }
    }
    if (end === -1 && r < s.length && s[r] !== ")" && !isSpace(s, r)) {
      if (!(r >= runStart && r < runStop)) {
        runStart = r;
        runStop = runEnd(BARE, s, r);
        closedAt = closeAfter(s, runStop);
      }
      // The rule takes at most MAX_BARE characters; a longer run leaves one of them where ')' must be.
      if (runStop - r <= MAX_BARE) {
        end = closedAt;
        if (end !== -1) destEnd = runStop;
      }
    }
    if (end === -1) continue;
    const start = b > from && s[b - 1] === "!" ? b - 1 : b;
    out.push({ index: start, raw: s.slice(start, end), bang: start < b ? "!" : "", text: s.slice(b + 1, c), dest: s.slice(r, destEnd) });
    from = end;
  }
  return out;
}
