import { parseFrontmatterYaml } from "./frontmatter-yaml";
import { HeadingIds } from "./heading-ids";
import { mdLinks } from "./md-links";
import { foldName } from "./paths";
import { withoutClosingHashes } from "./line-ends";
import type { Block } from "./blocks";
import { maskBody } from "./comments";
import { MAX_TAG_CHARS, normalizeTag, TAG, TagSet } from "./tags";
import { cut, extractDirectives, extractMentions, type ParsedDirective, type ParsedMention } from "./work-markers";

export interface ParsedLink {
  target: string; // link target as written, without heading/block part or alias
  targetKey: string; // lowercased last path segment without .md: the key resolution uses
  display: string | null;
  kind: "wikilink" | "markdown";
  heading: string | null;
  block: string | null;
  embed: boolean;
  line: number; // 1-based, in the whole file
}

export interface ParsedHeading {
  level: number;
  title: string;
  id: string;
  line: number;
}

export interface ParsedNote {
  title: string;
  frontmatter: Record<string, unknown>;
  frontmatterError: string | null;
  tags: string[];
  aliases: string[];
  links: ParsedLink[];
  headings: ParsedHeading[];
  /** `> [!ai]` / `> [!ai-done]` callouts and @handle mentions (lib/vault/work-markers.ts). */
  directives: ParsedDirective[];
  mentions: ParsedMention[];
  /** The note's text without frontmatter: what full-text search sees. */
  body: string;
}

const FRONTMATTER = /^---[ \t]*\r?\n([\s\S]*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;

/** Split `---` YAML frontmatter from the body. Exposed for the write path, which must keep it byte for byte. */
export function splitFrontmatter(content: string): { yaml: string | null; raw: string; body: string } {
  const m = FRONTMATTER.exec(content);
  if (!m) {
    // An empty block (---\n---) has no inner line, which the main pattern needs.
    const empty = /^---[ \t]*\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/.exec(content);
    if (empty) return { yaml: "", raw: empty[0], body: content.slice(empty[0].length) };
    return { yaml: null, raw: "", body: content };
  }
  return { yaml: m[1] ?? "", raw: m[0], body: content.slice(m[0].length) };
}

// `s` without a final ".md" (any case). The same as s.replace(/\.md$/i, ""), which cost
// ~2 µs a call here: called for every note and every link, ~4 % of the main thread's profile.
function withoutMd(s: string): string {
  const n = s.length;
  if (n < 3 || s.charCodeAt(n - 3) !== 46 /* . */) return s;
  const m = s.charCodeAt(n - 2) | 0x20;
  const d = s.charCodeAt(n - 1) | 0x20;
  return m === 109 /* m */ && d === 100 /* d */ ? s.slice(0, n - 3) : s;
}

export function noteName(path: string): string {
  return withoutMd(path.slice(path.lastIndexOf("/") + 1));
}

/** Resolution key of a link target: its last path segment, lowercased, without `.md`. */
export function targetKeyOf(target: string): string {
  return foldName(withoutMd(target.slice(target.lastIndexOf("/") + 1)));
}

function asStringList(v: unknown, splitOnSpace: boolean): string[] {
  if (v == null) return [];
  if (Array.isArray(v)) return v.flatMap((x) => (x == null ? [] : asStringList(x, splitOnSpace)));
  if (typeof v === "string" || typeof v === "number") {
    const s = String(v);
    return s
      .split(splitOnSpace ? /[,\s]+/ : /,/)
      .map((x) => x.trim())
      .filter(Boolean);
  }
  return [];
}

const WIKILINK = /(!?)\[\[([^\[\]\n]+?)\]\]/g;

/**
 * Bounds on the names a note gives itself, which every listing repeats (list_notes, search,
 * list_workspace, resources/list, outlines): a one-line note starting with "# " made a 1.9 MB
 * title, and one "#tag" of 105,000 characters came back in every page of list_tags. A title or
 * heading is cut (with "…"); a tag or alias that long is no tag or alias at all.
 */
export const MAX_NAME_CHARS = 300;
export { MAX_TAG_CHARS, normalizeTag };

const capName = (s: string) => cut(s, MAX_NAME_CHARS);

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return starts;
}

/**
 * 1-based line numbers for offsets asked in increasing order (a restart costs a rescan from the top): the
 * parser's links come in order, and a table of every line's start, made for each note, was 3 % of a cold
 * index's parse.
 */
function lineCursor(text: string): (offset: number) => number {
  let pos = 0;
  let line = 1;
  return (offset) => {
    if (offset < pos) {
      pos = 0;
      line = 1;
    }
    for (let i = text.indexOf("\n", pos); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) line++;
    pos = offset;
    return line;
  };
}

function lineAt(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

// A character that one of headingPlainText's replacements needs: [ ` * _ ~ = ^
const INLINE_MARKUP = /[[`*_~=^]/;

/** Plain text of a heading's inline Markdown, as a renderer would show it. */
export function headingPlainText(md: string): string {
  // Nothing for the replacements below to act on (the usual heading): the same as running them.
  if (!INLINE_MARKUP.test(md)) return md.trim();
  return md
    .replace(/!?\[\[([^[\]|]*?)(?:\\?\|([^[\]]*))?\]\]/g, (_, t: string, a?: string) => a ?? t)
    .replace(/!?\[([^[\]]*)\]\([^()]*(?:\([^()]*\)[^()]*)*\)/g, "$1")
    .replace(/`([^`]*)`/g, "$1")
    .replace(/(\*\*|__|\*|_|~~|==)(.+?)\1/g, "$2")
    .replace(/\s\^[\w-]+$/, "") // one space, not \s+: a long run of spaces before no ^id was rescanned from each
    .trim();
}

export function parseWikilinkInner(inner: string): { target: string; heading: string | null; block: string | null; display: string | null } {
  // In tables the alias pipe is escaped as \| so that it does not split the cell. (By index, not by the
  // patterns /\\?\|/ and /\\$/: three regex calls per link, for 30,000 links in obsidian-hub.)
  const bar = inner.indexOf("|");
  let ref = inner;
  let display: string | null = null;
  if (bar !== -1) {
    ref = inner.slice(0, bar > 0 && inner.charCodeAt(bar - 1) === 92 /* \ */ ? bar - 1 : bar);
    display = inner.slice(bar + 1).trim();
  }
  if (ref.endsWith("\\")) ref = ref.slice(0, -1);
  let heading: string | null = null;
  let block: string | null = null;
  const hash = ref.indexOf("#");
  let target = ref;
  if (hash !== -1) {
    target = ref.slice(0, hash);
    const frag = ref.slice(hash + 1).trim();
    if (frag.startsWith("^")) block = frag.slice(1);
    else heading = frag.split("#").filter(Boolean).join("#") || null;
  }
  return { target: target.trim(), heading, block, display: display || null };
}

/** `s` percent-decoded, or as written when it holds a bad escape (a literal "100%"). */
export function decodedOr(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** A link that leaves the vault: a scheme (`https:`, `mailto:`) or a host (`//example.com`). */
export function isExternal(url: string): boolean {
  return /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(url) || url.startsWith("//");
}

/** Text as the parser reads it: without a leading byte-order mark (editors on Windows add one), LF line ends. */
function plainText(content: string): string {
  const text = content.charCodeAt(0) === 0xfeff ? content.slice(1) : content;
  return text.includes("\r") ? text.replace(/\r\n?/g, "\n") : text;
}

/** A note's text after its frontmatter, as the parser reads it (what a reader of the note sees). */
export function noteBody(content: string): string {
  return splitFrontmatter(plainText(content)).body;
}

function headingsOf(bodyLines: string[], bl: Block[], bodyLineOffset: number): ParsedHeading[] {
  const headings: ParsedHeading[] = [];
  const ids = new HeadingIds();
  for (const b of bl) {
    if (b.type !== "heading") continue;
    // The skeleton kept ATX heading lines whole; a setext heading's text is the line(s) above its underline.
    const first = bodyLines[b.startLine] ?? "";
    const text = /^ {0,3}#/.test(first)
      ? withoutClosingHashes(first.replace(/^ {0,3}#{1,6}(?:[ \t]+|$)/, "")).replace(/^#+$/, "")
      : bodyLines.slice(b.startLine, b.startLine + b.lineCount - 1).join(" ");
    const title = capName(headingPlainText(text));
    headings.push({ level: b.depth ?? 1, title, id: ids.next(title), line: b.startLine + 1 + bodyLineOffset });
  }
  return headings;
}

/**
 * A note's headings alone, as parseNote finds them: for patch_section, which runs on the
 * request thread and needs no links, tags or properties (their patterns over a 2 MB note
 * of links held every caller for 1.7 s).
 */
export function parseHeadings(content: string): ParsedHeading[] {
  const fm = splitFrontmatter(plainText(content));
  const { bodyLines, bl } = maskBody(fm.body);
  return headingsOf(bodyLines, bl, fm.raw ? lineStarts(fm.raw).length - 1 : 0);
}

/** A line of a note that holds a link: its 0-based number, and its text as the parser read it (code, comments and math blanked). */
export interface LinkLine {
  line: number;
  masked: string;
  /** A frontmatter line: its links sit in YAML scalars, whose quoting a rewrite must keep. */
  property?: boolean;
}

/**
 * Where move_note rewrites, and what it may rewrite there: the parser's own reading of each line, so that
 * the rewrite sees a link exactly where list_backlinks does (it blanked code spans line by line, and missed
 * a link between two spans that run over lines, or rewrote one inside a span over lines).
 */
export function linkLinesOf(path: string, content: string): LinkLine[] {
  const { note, masked, bodyLineOffset, frontmatterLines } = parse(path, content);
  const maskedLines = masked.split("\n");
  const seen = (line: number) => (line < bodyLineOffset ? frontmatterLines[line] : maskedLines[line - bodyLineOffset]) ?? "";
  return [...new Set(note.links.map((l) => l.line - 1))].map((line) => ({ line, masked: seen(line), ...(line < bodyLineOffset ? { property: true } : {}) }));
}

export function parseNote(path: string, content: string): ParsedNote {
  return parse(path, content).note;
}

function parse(path: string, content: string): { note: ParsedNote; masked: string; bodyLineOffset: number; frontmatterLines: string[] } {
  const text = plainText(content);
  const fm = splitFrontmatter(text);
  let frontmatter: Record<string, unknown> = {};
  let frontmatterError: string | null = null;
  if (fm.yaml !== null && fm.yaml.trim() !== "") {
    try {
      const parsed = parseFrontmatterYaml(fm.yaml);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) frontmatter = parsed as Record<string, unknown>;
    } catch (e) {
      frontmatterError = (e as Error).message.split("\n")[0] ?? "invalid YAML";
    }
  }
  const body = fm.body;
  const bodyLineOffset = fm.raw ? lineStarts(fm.raw).length - 1 : 0;

  // Split once: the block scan, the masks and the heading texts all work by line.
  const { bodyLines, bl, masked } = maskBody(body);

  const headings = headingsOf(bodyLines, bl, bodyLineOffset);

  const tagSet = new TagSet();
  for (const t of asStringList(frontmatter.tags ?? frontmatter.tag, true)) tagSet.add(t, false);
  for (const m of masked.matchAll(TAG)) tagSet.add(m[1]!, true);

  const links = collectLinks(masked, lineCursor(masked), bodyLineOffset);
  // Links in properties (`related: "[[Note]]"`) are the note's links in Obsidian too (Properties.md):
  // listed first, as their lines come first. lib/semantic/anchors.ts counts on that order.
  if (fm.raw.includes("[[") && !frontmatterError) links.unshift(...collectLinks(fm.raw, lineCursor(fm.raw), 0, false, false));

  const fmTitle = frontmatter.title;
  const h1 = headings.find((h) => h.level === 1);
  const title = capName(
    (typeof fmTitle === "string" || typeof fmTitle === "number") && String(fmTitle).trim()
      ? String(fmTitle).trim()
      : h1?.title || noteName(path),
  );

  const aliases = asStringList(frontmatter.aliases ?? frontmatter.alias, false).filter((a) => a.length <= MAX_NAME_CHARS);

  const directives = extractDirectives(body, masked, bodyLineOffset);
  const mentions = extractMentions(body, masked, bodyLineOffset);
  const note = { title, frontmatter, frontmatterError, tags: tagSet.list(), aliases, links, headings, directives, mentions, body };
  return { note, masked, bodyLineOffset, frontmatterLines: fm.raw.includes("[[") ? fm.raw.split("\n") : [] };
}

/** An image embed's size in place of its text (`![[pic.png|300]]`, `|300x200`), as Obsidian reads it. */
export const IMAGE_SIZE = /^(\d{1,5})(?:x(\d{1,5}))?$/;

/**
 * The links in masked body text, by line (stable: a line's wikilinks before its Markdown links). With
 * `offsets`, each also gets `index`, its offset in the body (bodyLinks); parseNote's links go without.
 * Without `markdown`, wikilinks only (a property holds no Markdown link).
 */
function collectLinks(masked: string, lineOf: (offset: number) => number, bodyLineOffset: number, offsets = false, markdown = true): (ParsedLink & { index?: number })[] {
  const links: (ParsedLink & { index?: number })[] = [];
  for (const m of masked.matchAll(WIKILINK)) {
    const { target, heading, block, display } = parseWikilinkInner(m[2]!);
    const link: ParsedLink & { index?: number } = {
      target,
      targetKey: targetKeyOf(target),
      // ![[pic.png|300]]: a size, not the text a reader sees.
      display: m[1] === "!" && display !== null && IMAGE_SIZE.test(display) ? null : display,
      kind: "wikilink",
      heading,
      block,
      embed: m[1] === "!",
      line: lineOf(m.index!) + bodyLineOffset,
    };
    if (offsets) link.index = m.index!;
    links.push(link);
  }
  for (const m of markdown ? mdLinks(masked) : []) {
    let url = m.dest;
    if (url.startsWith("<")) url = url.slice(1, -1);
    if (isExternal(url) || url.startsWith("#")) continue;
    let heading: string | null = null;
    const hash = url.indexOf("#");
    if (hash !== -1) {
      heading = url.slice(hash + 1) || null;
      url = url.slice(0, hash);
    }
    // The fragment is percent-encoded as the path is: [t](Note.md#My%20Heading) names the heading [[Note#My Heading]] does.
    heading = heading && decodedOr(heading);
    const target = decodedOr(url);
    const link: ParsedLink & { index?: number } = {
      target,
      targetKey: targetKeyOf(target),
      display: (m.bang === "!" ? m.text.replace(/\|([^|]*)$/, (all, size: string) => (IMAGE_SIZE.test(size) ? "" : all)) : m.text) || null,
      kind: "markdown",
      heading,
      block: null,
      embed: m.bang === "!",
      line: lineOf(m.index) + bodyLineOffset,
    };
    if (offsets) link.index = m.index;
    links.push(link);
  }
  links.sort((a, b) => a.line - b.line);
  return links;
}

/**
 * The links of a note's body (the text after its frontmatter, as the full-text
 * index holds it) in the order parseNote lists them, with each one's 1-based
 * line in the body and offset in it: the anchor text of lib/semantic/anchors.ts
 * reads the line around each link from the body alone.
 */
export function bodyLinks(body: string): { line: number; index: number; lineStart: number; lineEnd: number }[] {
  const starts = lineStarts(body);
  // Each link's line bounds come from the line table: looked up from the link, they cost a scan of the line
  // per link (a 2 MB line of links: 9 s on the request thread in the anchor pass).
  return collectLinks(maskBody(body).masked, (o) => lineAt(starts, o), 0, true).map((l) => ({
    line: l.line,
    index: l.index!,
    lineStart: starts[l.line - 1]!,
    lineEnd: l.line < starts.length ? starts[l.line]! - 1 : body.length,
  }));
}

/**
 * A note's body (no frontmatter) and the same text with code, comments and math blanked out,
 * offsets and lines unchanged: for scanners outside the indexer (suggest_links).
 */
export function proseOf(content: string): { body: string; masked: string; bodyLineOffset: number } {
  const text = plainText(content);
  const fm = splitFrontmatter(text);
  const body = fm.body;
  return { body, masked: maskBody(body).masked, bodyLineOffset: fm.raw ? lineStarts(fm.raw).length - 1 : 0 };
}
