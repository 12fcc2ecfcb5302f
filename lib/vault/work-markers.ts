// What a person leaves in a note for an agent: `> [!ai]` callouts (directives)
// and @handle mentions. Both scanners read the code-masked body (code blanked
// to spaces, same offsets) so that examples inside code never count, and take
// the text they return from the original body.
import { trimBlanksEnd } from "./line-ends";
import { sliceWhole } from "../text-cut";
import { trimRuns } from "../text-ends";

export interface ParsedDirective {
  line: number; // 1-based, in the whole file: the callout's own line
  title: string; // text after the marker on the callout line
  body: string; // the callout's following `>` lines, markers stripped
  done: boolean; // [!ai-done]
}

export interface ParsedMention {
  line: number;
  handle: string;
  context: string; // the line the mention is on, trimmed (a window of it when long)
}

// Obsidian callout types are case-insensitive; `+`/`-` after the type make it foldable.
const CALLOUT_HEAD = /^((?:[ \t]*>)+)[ \t]*\[!(ai|ai-done)\][+-]?/i;

/**
 * A callout line as /^((?:[ \t]*>)+)[ \t]*\[!(ai|ai-done)\][+-]?(?:[ \t]+(.*?))?[ \t]*$/i reads it ([line, quotes,
 * type, title]), with the title's end trimmed by hand: as a pattern, a long run of blanks after a title was tried
 * at every split (64 KB: 5 s on the thread answering requests; a review, 2026-12-05).
 */
function calloutAt(line: string): [string, string, string, string | undefined] | null {
  const h = CALLOUT_HEAD.exec(line);
  if (!h) return null;
  const rest = line.slice(h[0].length);
  if (rest === "") return [line, h[1]!, h[2]!, undefined];
  if (rest.charCodeAt(0) !== 32 && rest.charCodeAt(0) !== 9) return null;
  if (/[\n\r\u2028\u2029]/.test(rest)) return null;
  return [line, h[1]!, h[2]!, trimBlanksEnd(rest.replace(/^[ \t]+/, ""))];
}
// Not after a word character, a dot or a slash: that skips emails (foo@example.com),
// URL paths (medium.com/@user) and things like image@2x.png.
const MENTION = /(?<![\p{L}\p{N}_.+\-@/\\:`=])@([\p{L}_][\p{L}\p{N}_-]*(?:\.[\p{L}\p{N}_-]+)*)/gu;
const MAX_HANDLE = 64;
const MAX_CONTEXT = 240;

function quoteDepth(prefix: string): number {
  let n = 0;
  for (const c of prefix) if (c === ">") n++;
  return n;
}

/** Strip `depth` blockquote markers (and one space after them) from a line, or null if it is less deep. */
function stripQuote(line: string, depth: number): string | null {
  let i = 0;
  for (let d = 0; d < depth; d++) {
    while (i < line.length && (line[i] === " " || line[i] === "\t")) i++;
    if (line[i] !== ">") return null;
    i++;
  }
  if (line[i] === " ") i++;
  return line.slice(i);
}

// What pending_directives repeats for each directive: an instruction, not a document (a
// 50,000-character callout made a page of 1,000 directives 7 MB). read_note has it whole.
export const MAX_DIRECTIVE_TITLE = 300;
const MAX_DIRECTIVE_BODY = 4_000;
/** `s` cut to `n` characters with "…" when longer, never through a surrogate pair (titles, headings, directives). */
export const cut = (s: string, n: number) => (s.length > n ? sliceWhole(s, n - 1) + "…" : s);

export function extractDirectives(body: string, masked: string, bodyLineOffset: number): ParsedDirective[] {
  if (!masked.includes("[!")) return [];
  const lines = body.split("\n");
  const mlines = masked.split("\n");
  const out: ParsedDirective[] = [];
  for (let i = 0; i < mlines.length; i++) {
    const m = calloutAt(mlines[i]!);
    if (!m) continue;
    const orig = calloutAt(lines[i]!) ?? m;
    const depth = quoteDepth(m[1]!);
    const bodyLines: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const next = calloutAt(mlines[j]!);
      if (next && quoteDepth(next[1]!) === depth) break;
      const inner = stripQuote(lines[j]!, depth);
      if (inner === null) break;
      bodyLines.push(trimBlanksEnd(inner));
    }
    out.push({
      line: i + 1 + bodyLineOffset,
      title: cut((orig[3] ?? "").trim(), MAX_DIRECTIVE_TITLE),
      body: cut(trimRuns(bodyLines.join("\n"), "\n"), MAX_DIRECTIVE_BODY),
      done: m[2]!.toLowerCase() === "ai-done",
    });
    i = j - 1;
  }
  return out;
}

function contextOf(line: string, at: number): string {
  const t = line.trim();
  if (t.length <= MAX_CONTEXT) return t;
  const lead = line.length - line.trimStart().length;
  const pos = Math.max(0, at - lead);
  const from = Math.max(0, Math.min(pos - MAX_CONTEXT / 2, t.length - MAX_CONTEXT));
  return (from > 0 ? "…" : "") + t.slice(from, from + MAX_CONTEXT).trim() + (from + MAX_CONTEXT < t.length ? "…" : "");
}

// The text of a Markdown link to a web address: `[@obsdmd](https://twitter.com/obsdmd)` credits someone on
// another site, it does not call on an agent (an agent audit found release-note credits listed as mentions).
// The text stops at the next '[' as well (as the Markdown link pattern's does): running to the next ']', a line of
// 64 KB of '[' was scanned from each one to its end (3.8 s). So does the address: a line of `[](http:` after
// a mention was scanned from each '[' to the line's end (192 KB: 9.9 s on the request thread; the review of 2026-12-07).
const EXTERNAL_LINK = /\[([^[\]\n]*)\]\((?:https?|mailto):[^)\s[]*(?:\s+"[^"\n]*")?\)/g;

/** [start, end) of each external link's text in a line. */
function externalLinkTexts(line: string): [number, number][] {
  if (!line.includes("](")) return [];
  return [...line.matchAll(EXTERNAL_LINK)].map((m) => [m.index!, m.index! + m[1]!.length + 1] as [number, number]);
}

export function extractMentions(body: string, masked: string, bodyLineOffset: number): ParsedMention[] {
  if (!masked.includes("@")) return [];
  const lines = body.split("\n");
  const mlines = masked.split("\n");
  const out: ParsedMention[] = [];
  for (let i = 0; i < mlines.length; i++) {
    const ml = mlines[i]!;
    if (!ml.includes("@")) continue;
    const links = externalLinkTexts(ml);
    // Both in order along the line: one pointer, not every link for every mention (a 250 KB line of
    // links and mentions held the request thread 2.3 s).
    let j = 0;
    for (const m of ml.matchAll(MENTION)) {
      const handle = m[1]!;
      if (handle.length > MAX_HANDLE) continue;
      while (j < links.length && links[j]![1] <= m.index!) j++;
      if (j < links.length && m.index! > links[j]![0] && m.index! < links[j]![1]) continue;
      out.push({ line: i + 1 + bodyLineOffset, handle, context: contextOf(lines[i]!, m.index!) });
    }
  }
  return out;
}
