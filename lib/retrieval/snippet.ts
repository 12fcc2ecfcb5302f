// Search snippets, built in JS from a bounded window of a note's text.
// FTS5's snippet() scans every token of a matching note, and its cost grows
// faster than the note (8 s for one 2 MB note here, minutes for 10 MB): a
// single search could hold the server. Here each hit costs at most
// SNIPPET_WINDOW characters of work, however large the note.
//
// Snippets also skip what a reader would not call text: Obsidian comments
// (%% … %%), HTML comments, and lines that are only markup (badges, images,
// embeds, HTML tags, rules, table separators).
import { blankHidden } from "../vault/comments";
import { foldText, type QueryTerm } from "./fts-query";
import { wholeCut } from "../text-cut";

/** Characters of a note's body a snippet looks at (from its start). */
export const SNIPPET_WINDOW = 64 * 1024;
/** Roughly how long a snippet is, in characters. */
export const SNIPPET_CHARS = 160;

const TOKEN = /[\p{L}\p{N}]/u;
// Inside a word, for where a snippet starts and ends: a combining mark is part of its word (`नमस्ते`, `ذَهَبَ`).
const WORD_PART = /[\p{L}\p{N}\p{M}]/u;

// Markup that carries no words of its own: badge links, images, embeds, HTML tags, entities. No part runs
// over an opener of its own kind ('[', '(' past one level of parentheses in a URL, '<'): from every "![" or
// "<a" of a line without a closer, a part that did scanned to the line's end, and a 64 KB line held the
// request thread ~1 s per search hit.
// (Unrolled: a loop of one character at a time slowed Bun's engine to ~0.3 µs a character past ~200 K,
// and it stopped matching past ~1 M: a pasted data: image.)
const URL_PART = String.raw`\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\)`;
const MARKUP = new RegExp(
  String.raw`\[!\[[^[\]]*\]${URL_PART}\]${URL_PART}|!\[[^[\]]*\]${URL_PART}|!\[\[[^[\]]*\]\]|<\/?[A-Za-z][^<>]*>|&[a-z]+;|&#\d+;`,
  "gi",
);

/** A line as a reader sees it: comments blanked (same length), "" when nothing but markup is left. */
interface ProseLine {
  /** Offset of the line in the window. */
  start: number;
  text: string;
}

/**
 * The window's lines with Obsidian and HTML comments blanked out (they may
 * span lines; an unclosed one runs to the end, as Obsidian renders it) and
 * markup-only lines emptied. Offsets within a line are kept.
 */
export function* proseLines(window: string): Generator<ProseLine> {
  // The parser's comment scanner (lib/vault/comments.ts), less math: a snippet may quote a formula.
  let start = 0;
  for (const line of blankHidden(window, false).split("\n")) {
    yield { start, text: isMarkupOnly(line) ? "" : line };
    start += line.length + 1;
  }
}

function isMarkupOnly(line: string): boolean {
  if (!TOKEN.test(line)) return true;
  if (!/[!<&]/.test(line)) return false;
  return !TOKEN.test(line.replace(MARKUP, " "));
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// A letter that ends a word: any but one of a script written without spaces, to which a word may be glued
// (我们使用Python编写: the index finds python there, lib/vault/ngram.ts, so the snippet does too).
const WORD_LETTER = "(?![\\p{scx=Han}\\p{scx=Hira}\\p{scx=Kana}\\p{scx=Thai}\\p{scx=Laoo}\\p{scx=Khmr}\\p{scx=Mymr}\\p{scx=Tibt}])[\\p{L}\\p{N}]";

/** A regex over folded text that finds any of the terms at a token boundary (anywhere, for a term found inside words). */
function termPattern(terms: QueryTerm[]): RegExp | null {
  const alts = terms
    .filter((t) => t.tokens.length)
    .map((t) => (t.inside ? "" : `(?<!${WORD_LETTER})`) + t.tokens.map(escapeRe).join("[^\\p{L}\\p{N}]+") + (t.prefix || t.inside ? "" : `(?!${WORD_LETTER})`));
  if (!alts.length) return null;
  return new RegExp(`(?:${alts.join("|")})`, "u");
}

/** Where in `line` the folded-text offset `at` falls (folding may change lengths: ligatures, some scripts). */
function originOf(line: string, folded: string, at: number): number {
  if (folded.length === line.length) return at;
  let f = 0;
  for (let i = 0; i < line.length; ) {
    const ch = String.fromCodePoint(line.codePointAt(i)!);
    f += foldText(ch).length;
    if (f > at) return i;
    i += ch.length;
  }
  return line.length;
}

/**
 * A snippet of `body` around the first hit of `terms` outside comments and
 * markup, or the note's first prose when no term is found in the window (a
 * title-only match, or a hit past the window). Reads at most SNIPPET_WINDOW characters.
 */
export function buildSnippet(body: string, terms: QueryTerm[]): string {
  const truncated = body.length > SNIPPET_WINDOW;
  const window = truncated ? body.slice(0, SNIPPET_WINDOW) : body;
  const pattern = termPattern(terms);
  const lines = proseLines(window);
  let first: { line: ProseLine; at: number } | null = null;
  let proseBefore = false;
  let firstProse: ProseLine | null = null;
  // Walk by hand: breaking out of for…of would close the generator, and the snippet continues from it.
  for (let n = lines.next(); !n.done; n = lines.next()) {
    const line = n.value;
    if (!line.text) continue;
    firstProse ??= line;
    if (pattern) {
      const folded = foldText(line.text);
      const m = pattern.exec(folded);
      if (m) {
        first = { line, at: originOf(line.text, folded, m.index) };
        break;
      }
    }
    proseBefore = true;
  }
  if (!first) {
    if (!firstProse) return "";
    // Walk again to that line, so that a comment opened above it is still known below it.
    const again = proseLines(window);
    for (let n = again.next(); !n.done && n.value.start !== firstProse.start; n = again.next());
    return assemble(firstProse.text, 0, again, false, truncated);
  }
  // Start a few words before the hit, at a word boundary.
  const { line, at } = first;
  let start = Math.max(0, at - Math.floor(SNIPPET_CHARS / 3));
  while (start > 0 && start < at && WORD_PART.test(line.text[start - 1]!) && WORD_PART.test(line.text[start]!)) start++;
  // Never inside a character: in a run of emoji, or on a mark at the end of the walk above.
  start = wholeCut(line.text, start);
  return assemble(line.text, start, lines, proseBefore || line.text.slice(0, start).trim() !== "", truncated);
}

/** The snippet text from `text[start…]` on, continued with the following prose lines, cut at about SNIPPET_CHARS. */
function assemble(text: string, start: number, rest: Generator<ProseLine>, before: boolean, truncated: boolean): string {
  let out = squeeze(text.slice(start));
  let more = false;
  for (let n = rest.next(); !n.done; n = rest.next()) {
    const l = n.value;
    if (!l.text.trim()) continue;
    if (out.length > SNIPPET_CHARS) {
      more = true;
      break;
    }
    out += " " + squeeze(l.text);
  }
  if (out.length > SNIPPET_CHARS) {
    let end = SNIPPET_CHARS;
    while (end < out.length && end < SNIPPET_CHARS + 40 && WORD_PART.test(out[end]!)) end++;
    end = wholeCut(out, end);
    more = more || end < out.length;
    out = out.slice(0, end).trimEnd();
  }
  return `${before ? "…" : ""}${out}${more || truncated ? "…" : ""}`;
}

/** Whitespace runs to one space, trimmed. */
function squeeze(s: string): string {
  return s.replace(/\s+/g, " ").trim();
}
