// Rewriting the links that point at a note being moved, in the other notes
// and in the moved note itself, keeping each link's style: a bare [[Name]]
// stays bare when the new name is unambiguous, a path stays a path, a
// Markdown link stays relative or vault-absolute, and #heading, ^block and
// |alias parts are kept as written.
import { posix } from "node:path";
import type { LinkRef } from "../index/resolver";
import { mdLinks } from "../vault/md-links";
import { foldName } from "../vault/paths";
import { isExternal, linkLinesOf, noteName, type LinkLine } from "../vault/parse";
import { hasEol, splitLines } from "./text";
import { leadingSpace, trailingSpace } from "../text-ends";


// Markdown links are found as the parser finds them (lib/vault/md-links.ts, linear on hostile lines: this
// file's own pattern, with a text running over '[' and a backtracking destination, took a 250 KB line of '['
// 36 s on the request thread).
const WIKILINK = /(!?)\[\[([^\[\]\n]+?)\]\]/g;

export interface MoveRewrite {
  /** The note holding the links, where it is now and where it will be (they differ only for the moved note itself). */
  oldSource: string;
  newSource: string;
  from: string;
  to: string;
  /** Resolution as the index does it, before the move. */
  resolve(link: LinkRef, source: string): string | null;
  /**
   * Resolution once the move is done (`source` as it will be). A link to another note that would then
   * resolve elsewhere (the moved note takes its name or alias, or the moved note's own link is read from
   * another folder) is pinned to the note it names now.
   */
  resolveAfter?(link: LinkRef, source: string): string | null;
  /** Aliases of the moved note: links through an alias keep working and are left alone. */
  aliases: string[];
  /** True when no other note shares the destination's name, so [[Name]] stays unambiguous. */
  nameUnique: boolean;
}

export const stripMd = (p: string) => p.replace(/\.md$/i, "");
const dirOf = (p: string) => {
  const d = posix.dirname(p);
  return d === "." ? "" : d;
};

function encodeUrlPath(p: string): string {
  return p.replace(/[\s%()<>\[\]]/g, (c) => (c === "(" ? "%28" : c === ")" ? "%29" : encodeURIComponent(c)));
}

function newWikiTarget(target: string, r: MoveRewrite): string | null {
  const key = foldName(target);
  if (r.aliases.some((a) => foldName(a) === key) && stripMd(key) !== foldName(noteName(r.from))) return null;
  const md = /\.md$/i.test(target) ? ".md" : "";
  const next = target.includes("/") || !r.nameUnique ? stripMd(r.to) + md : noteName(r.to) + md;
  return next === target ? null : next;
}

function rewriteWikilink(inner: string, r: MoveRewrite, inTable: boolean): string | null {
  const pipe = inner.search(/\\?\|/);
  const hash = inner.indexOf("#");
  const cut = [pipe, hash].filter((i) => i !== -1).reduce((a, b) => Math.min(a, b), inner.length);
  const target = inner.slice(0, cut).trim();
  if (!target) return null; // [[#Heading]] points into its own note
  // The spaces around the target as the person wrote them ("[[ Target Note ]]").
  const [lead, trail] = [leadingSpace(inner), trailingSpace(inner.slice(0, cut))];
  const now = r.resolve({ target, kind: "wikilink" }, r.oldSource);
  if (now === r.from) {
    const next = newWikiTarget(target, r);
    return next === null ? null : lead + next + trail + inner.slice(cut);
  }
  if (now === null || !r.resolveAfter || r.resolveAfter({ target, kind: "wikilink" }, r.newSource) === now) return null;
  // Pinned by its vault path, which wins over any name; a link through an alias keeps showing the alias.
  const rest = inner.slice(cut);
  const pinned = (/\.md$/i.test(target) ? now : stripMd(now)) + rest;
  const viaAlias = foldName(stripMd(target.slice(target.lastIndexOf("/") + 1))) !== foldName(noteName(now));
  if (!viaAlias || /\\?\|/.test(rest)) return pinned;
  return `${pinned}${inTable ? "\\|" : "|"}${inner}`;
}

function rewriteUrl(url: string, r: MoveRewrite): string | null {
  const angle = url.startsWith("<");
  const raw = angle ? url.slice(1, -1) : url;
  if (isExternal(raw) || raw.startsWith("#")) return null;
  const h = raw.indexOf("#");
  const pathPart = h === -1 ? raw : raw.slice(0, h);
  const frag = h === -1 ? "" : raw.slice(h);
  let decoded = pathPart;
  try {
    decoded = decodeURIComponent(pathPart);
  } catch {
    /* as written */
  }
  const resolved = r.resolve({ target: decoded, kind: "markdown" }, r.oldSource);
  if (resolved === null) return null;
  const moved = resolved === r.from;
  const sourceMoved = r.oldSource !== r.newSource;
  // A link found by name ([f](Foo.md) for deep/Foo.md) that the move would send elsewhere: written as a path.
  const shifts = !moved && r.resolveAfter !== undefined && r.resolveAfter({ target: decoded, kind: "markdown" }, r.newSource) !== resolved;
  if (!moved && !sourceMoved && !shifts) return null;
  const dest = moved ? r.to : resolved;
  const rel = foldName(posix.normalize(posix.join(dirOf(r.oldSource), decoded)));
  const relative = !decoded.startsWith("/") && (shifts || rel === foldName(resolved) || rel + ".md" === foldName(resolved));
  if (!relative && !moved && !shifts) return null; // a vault-absolute link to an unmoved note still works
  let next = relative ? posix.relative("/" + dirOf(r.newSource), "/" + dest) : (decoded.startsWith("/") ? "/" : "") + dest;
  if (!/\.md$/i.test(decoded)) next = stripMd(next);
  const out = angle ? `<${next}${frag}>` : encodeUrlPath(next) + frag;
  return out === url ? null : out;
}

/**
 * Rewrite the links in `text` that point at r.from (and, for the moved note, its relative links). A big
 * note's lines are rewritten one by one (rewriteLinkLine), the rest of the work in a read worker.
 */
export function rewriteLinksForMove(text: string, r: MoveRewrite): { text: string; count: number; unwritable: number } {
  const linkLines = linkLinesOf(r.oldSource, text);
  if (!linkLines.length) return { text, count: 0, unwritable: 0 };
  const lines = splitLines(text);
  let count = 0;
  let unwritable = 0;
  for (const ll of linkLines) {
    const line = lines[ll.line];
    if (line === undefined) continue;
    const res = rewriteLinkLine(line, ll, r);
    unwritable += res.unwritable;
    if (!res.count) continue;
    lines[ll.line] = res.text;
    count += res.count;
  }
  return { text: lines.join(""), count, unwritable };
}

/**
 * One line of a note as written (its line break kept), rewritten at the links the parser found on it (`ll`).
 * A big note's lines come from a read worker (./big-note-links.ts), which splices the rewritten ones back.
 */
export function rewriteLinkLine(line: string, ll: LinkLine, r: MoveRewrite): { text: string; count: number; unwritable: number } {
  const { masked: seen, property } = ll;
  // Matches are found in the line as the parser read it (code, comments and math blanked), spliced into the
  // line as written. The parser reads the text without a byte-order mark: the first line may be one longer.
  const lead = line.length - (/\r\n$/.test(line) ? 2 : hasEol(line) ? 1 : 0) - seen.length;
  if (lead < 0) return { text: line, count: 0, unwritable: 0 };
  const masked = " ".repeat(lead) + seen;
  const inTable = /^\s*\|/.test(line);
  const edits: { start: number; end: number; text: string }[] = [];
  let unwritable = 0;
  for (const m of masked.matchAll(WIKILINK)) {
    const start = m.index! + m[1]!.length + 2;
    const inner = line.slice(start, start + m[2]!.length);
    let next = rewriteWikilink(inner, r, inTable);
    if (next !== null && property) {
      next = inYamlScalar(line, start, next);
      if (next === null) unwritable++;
    }
    if (next !== null) edits.push({ start, end: start + inner.length, text: next });
  }
  // Only wikilinks are links in properties (the parser's rule).
  for (const m of property ? [] : mdLinks(masked)) {
    const urlStart = m.index + m.raw.indexOf(m.dest, m.raw.indexOf("](") + 2);
    const url = line.slice(urlStart, urlStart + m.dest.length);
    const next = rewriteUrl(url, r);
    if (next !== null) edits.push({ start: urlStart, end: urlStart + url.length, text: next });
  }
  if (!edits.length) return { text: line, count: 0, unwritable };
  // Spliced in one pass: a splice per edit copied the rest of the line each time (50,000 links on a
  // 250 KB line: 1–2 s on the request thread).
  const parts: string[] = [];
  let at = 0;
  let count = 0;
  for (const e of edits.sort((a, b) => a.start - b.start)) {
    if (e.start < at) continue; // overlapping another ("[[T]](T.md)" holds a wikilink and a Markdown link): the first one stands
    parts.push(line.slice(at, e.start), e.text);
    at = e.end;
    count++;
  }
  parts.push(line.slice(at));
  return { text: parts.join(""), count, unwritable };
}

/**
 * A link's new text as it must be written at `at` in a frontmatter line: escaped for the YAML scalar it is
 * in (`'[[Bob''s Notes]]'`, `"[[Say \"hi\"]]"`), or null when a plain scalar cannot hold it (a move to
 * `Bob's Notes.md` made `related: '[[Bob's Notes]]'`, which is no YAML: the property read "[[Bob").
 */
function inYamlScalar(line: string, at: number, text: string): string | null {
  let quote: "'" | '"' | null = null;
  for (let k = 0; k < at; k++) {
    const c = line[k];
    if (quote === null) {
      if (c === "'" || c === '"') quote = c;
    } else if (quote === '"' && c === "\\") k++;
    else if (c === quote) {
      if (quote === "'" && line[k + 1] === "'") k++;
      else quote = null;
    }
  }
  if (quote === "'") return text.replace(/'/g, "''");
  if (quote === '"') return text.replace(/[\\"]/g, (c) => "\\" + c);
  // A plain scalar (an unquoted `[[Old]]` is a YAML flow list): a name with YAML's flow or quote characters would change what it parses to.
  return /[,'"{}:&*!>%@`[\]]/.test(text.split(/\\?[|#]/)[0]!) ? null : text;
}
