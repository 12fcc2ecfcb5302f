// A note as the person sees it: Markdown rendered with `marked` plus the
// Obsidian syntax a vault uses ([[wikilinks]], ![[embeds]], callouts, #tags,
// ==highlights==, %%comments%%), links resolved the way the index resolves
// them, then sanitised (sanitize.ts). A vault's Markdown is untrusted:
// everything this file emits is escaped here and cleaned again after. It runs
// in a read worker with a time budget (marked is slow on some text under Bun:
// ~30 µs a character of a long paragraph), so links resolve from the index's
// own rows (link-table.ts).
import { headingSlug, HeadingIds } from "../vault/heading-ids";
import { Lexer, Marked, type MarkedExtension, type MarkedOptions, type Tokens } from "marked";
import markedFootnote from "marked-footnote";
import { decodedOr, headingPlainText, IMAGE_SIZE, isExternal, noteBody, parseWikilinkInner } from "../vault/parse";
import { lexerGuards, withFastRules } from "../vault/lexer-guards";
import { sanitizeNoteHtml } from "./sanitize";

import type { LinkKind, ResolveLink } from "./link-table";
import { readVaultText } from "../vault/read-file";
import { sliceWhole } from "../text-cut";
import { blankComments } from "../vault/comments";
import { isColour, TAG_AT_START, TAG_START } from "../vault/tags";
import { withoutTrailing } from "../text-ends";

/** Largest note text rendered inside another by an embed. */
const MAX_EMBED_CHARS = 50_000;
const IMAGE = /\.(png|jpe?g|gif|webp|avif|bmp|svg|ico)$/i;

export const noteHref = (path: string, heading?: string | null, block?: string | null) =>
  "/notes/" + path.split("/").map(encodeURIComponent).join("/") + (block ? `#b-${blockSlug(block)}` : heading ? `#h-${slugOf(heading)}` : "");
export const fileHref = (path: string) => "/api/file?path=" + encodeURIComponent(path);

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** A heading's anchor; of nested headings (`[[Note#Section#Sub]]`, Obsidian's form) the last one's. */
function slugOf(heading: string): string {
  const last = heading.split("#").filter((h) => h.trim()).pop() ?? heading;
  return headingSlug(headingPlainText(last));
}

const blockSlug = (id: string) => id.replace(/[^A-Za-z0-9-]/g, "");
// A block id at the end of a line (`text ^abc-1`), or alone on the line after a list, table or quote.
const BLOCK_ID = /(?:^|[ \t])\^([A-Za-z0-9-]+)[ \t]*$/;

/**
 * The block a `^id` marks, its id taken off: the list item or paragraph the line ends, or, for an id on a line
 * of its own, the block above it. Obsidian embeds that block alone (`![[Note#^id]]`); the whole note was shown.
 */
function blockOf(body: string, id: string): string | null {
  const lines = body.split("\n");
  const i = lines.findIndex((l) => BLOCK_ID.exec(l)?.[1] === id);
  if (i === -1) return null;
  const blank = (l: string | undefined) => l === undefined || l.trim() === "";
  const own = lines[i]!.replace(BLOCK_ID, "");
  if (!own.trim()) {
    let start = i - 1;
    while (start > 0 && !blank(lines[start - 1])) start--;
    return start >= 0 && start < i ? lines.slice(start, i).join("\n") : null;
  }
  if (/^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]/.test(own)) return own.replace(/^[ \t]+/, "");
  let start = i;
  while (start > 0 && !blank(lines[start - 1]) && !/^#{1,6}[ \t]/.test(lines[start - 1]!)) start--;
  return [...lines.slice(start, i), own].join("\n");
}

interface RenderContext {
  root: string;
  resolve: ResolveLink;
  path: string;
  depth: number;
  slugger: HeadingIds;
}

// marked runs synchronously: the note being rendered is kept here for the extensions.
const stack: RenderContext[] = [];
const ctx = () => stack[stack.length - 1]!;

function resolve(target: string, kind: LinkKind): string | null {
  const c = ctx();
  return c.resolve({ target, kind }, c.path);
}

/** The body under a heading: from the heading line to the next heading of the same or a higher level. */
function sectionOf(body: string, heading: string): string | null {
  const want = slugOf(heading);
  const lines = body.split("\n");
  let start = -1;
  let level = 0;
  for (let i = 0; i < lines.length; i++) {
    const m = /^(#{1,6})\s+(.*)$/.exec(lines[i]!);
    if (!m) continue;
    if (start === -1) {
      if (slugOf(m[2]!) === want) {
        start = i;
        level = m[1]!.length;
      }
    } else if (m[1]!.length <= level) return lines.slice(start, i).join("\n");
  }
  return start === -1 ? null : lines.slice(start).join("\n");
}

function embedNote(path: string, heading: string | null, block: string | null, label: string): string {
  const c = ctx();
  const link = `<a class="wikilink" href="${escapeHtml(noteHref(path, heading, block))}">${escapeHtml(label)}</a>`;
  // One level of embedding: an embed inside an embed is a link, which also ends cycles.
  if (c.depth >= 1) return link;
  let body: string;
  try {
    body = noteBody(readVaultText(c.root, path));
  } catch {
    return `<span class="unresolved">${escapeHtml(label)}</span>`;
  }
  if (block) body = blockOf(body, block) ?? `*No block ^${block} in ${path}.*`;
  else if (heading) body = sectionOf(body, heading) ?? `*No heading “${heading}” in ${path}.*`;
  if (body.length > MAX_EMBED_CHARS) body = sliceWhole(body, MAX_EMBED_CHARS) + "\n\n*… cut; open the note for the rest.*";
  const inner = renderWith({ root: c.root, resolve: c.resolve, path, depth: c.depth + 1, slugger: new HeadingIds() }, body);
  return `<div class="embed"><div class="embed-title">${link}</div><div class="embed-body">${inner}</div></div>`;
}

function renderWikilink(inner: string, embed: boolean): string {
  const { target, heading, block, display } = parseWikilinkInner(inner);
  const resolved = resolve(target, "wikilink");
  // [[Note#Section]] reads "Note › Section", as Obsidian shows it.
  const label = display ?? (target && heading ? `${target} › ${heading.split("#").filter(Boolean).join(" › ")}` : target || heading || block || inner);
  if (embed && resolved) {
    if (IMAGE.test(resolved)) {
      // ![[pic.png|300]] or |300x200 sets the size, as in Obsidian.
      const size = IMAGE_SIZE.exec(display ?? "");
      const dims = size ? ` width="${size[1]}"${size[2] ? ` height="${size[2]}"` : ""}` : "";
      const alt = size ? target : label;
      return `<img src="${escapeHtml(fileHref(resolved))}" alt="${escapeHtml(alt)}"${dims}>`;
    }
    if (/\.md$/i.test(resolved)) return embedNote(resolved, heading, block, label);
    return `<a class="attachment" href="${escapeHtml(fileHref(resolved))}">${escapeHtml(label)}</a>`;
  }
  // A missing attachment (![[gone.png]]) is no note to create: shown, not linked.
  if (embed && !resolved && /\.[A-Za-z0-9]{1,8}$/.test(target) && !/\.md$/i.test(target)) return `<span class="unresolved">${escapeHtml(label)}</span>`;
  if (!resolved) return `<a class="wikilink unresolved" href="${escapeHtml(noteHref(target.endsWith(".md") ? target : target + ".md"))}">${escapeHtml(label)}</a>`;
  if (!/\.md$/i.test(resolved)) return `<a class="attachment" href="${escapeHtml(fileHref(resolved))}">${escapeHtml(label)}</a>`;
  return `<a class="wikilink" href="${escapeHtml(noteHref(resolved, heading, block))}">${escapeHtml(label)}</a>`;
}

function splitHref(href: string): { target: string; fragment: string | null } {
  const hash = href.indexOf("#");
  const raw = hash === -1 ? href : href.slice(0, hash);
  // `#Section%20Two` names the heading Section Two, as the path part is decoded.
  return { target: decodedOr(raw), fragment: hash === -1 ? null : decodedOr(href.slice(hash + 1)) };
}

const BLOCK_ID_TAIL = /^\^[A-Za-z0-9-]+[ \t]*$/;
const MATH_AHEAD = /\$(?!\s)(?:\\.|[^$\\\n])+?(?<!\s)\$(?!\d)/;

const CALLOUT = /^\[!([\w-]+)\]([+-]?)[ \t]*([^\n]*)(?:\n([\s\S]*))?$/;

const obsidian: MarkedExtension = {
  gfm: true,
  breaks: true, // Obsidian's default ("strict line breaks" off)
  tokenizer: lexerGuards as never, // lib/vault/lexer-guards.ts: marked's setext, paragraph and blockquote rules are slow under Bun
  hooks: {
    // %%comments%% are for the editor only; a %% inside code is text (printf("%%d") lost its line).
    preprocess: (md) => blankComments(md, true),
    // Block lexing with the fast paragraph and blockquote rules (the same matches).
    provideLexer(this: { block?: boolean }) {
      return (this.block === false ? Lexer.lexInline : (src: string, options?: MarkedOptions) => withFastRules(new Lexer(options)).lex(src)) as typeof Lexer.lex;
    },
  },
  extensions: [
    {
      name: "wikilink",
      level: "inline",
      start: (src) => src.match(/!?\[\[/)?.index,
      tokenizer(src) {
        const m = /^(!?)\[\[([^\[\]\n]+?)\]\]/.exec(src);
        if (m) return { type: "wikilink", raw: m[0], embed: m[1] === "!", inner: m[2] };
        return undefined;
      },
      renderer: (t) => renderWikilink(t.inner as string, t.embed as boolean),
    },
    {
      name: "highlight",
      level: "inline",
      start: (src) => src.indexOf("=="),
      tokenizer(src) {
        const m = /^==(?=\S)([^\n]*?\S)==/.exec(src);
        if (m) return { type: "highlight", raw: m[0], tokens: this.lexer.inlineTokens(m[1]!) };
        return undefined;
      },
      renderer(t) {
        return `<mark>${this.parser.parseInline(t.tokens ?? [])}</mark>`;
      },
    },
    {
      // $$ … $$ math: shown as written (no TeX engine here), never read as Markdown (`\\` stayed a line break).
      name: "mathBlock",
      level: "block",
      start: (src) => src.match(/^\$\$/m)?.index,
      tokenizer(src) {
        const m = /^\$\$([\s\S]*?)\$\$[ \t]*(?:\n|$)/.exec(src);
        return m ? { type: "mathBlock", raw: m[0], text: m[1]!.replace(/^\n|\n$/g, "") } : undefined;
      },
      renderer: (t) => `<div class="math">${escapeHtml(t.text as string)}</div>\n`,
    },
    {
      // $x^2$ (no space inside the dollars, as Obsidian reads it; "$5 and $10" is prose).
      name: "mathInline",
      level: "inline",
      // Where a math span really is, on this line only (a "$" alone, "$5", cuts nothing: see blockId's start).
      start: (src) => {
        const i = src.indexOf("$");
        if (i === -1) return undefined;
        const nl = src.indexOf("\n", i);
        const m = MATH_AHEAD.exec(nl === -1 ? src.slice(i) : src.slice(i, nl));
        return m ? i + m.index : undefined;
      },
      tokenizer(src) {
        const m = /^\$(?!\s)((?:\\.|[^$\\\n])+?)(?<!\s)\$(?!\d)/.exec(src);
        return m ? { type: "mathInline", raw: m[0], text: m[1] } : undefined;
      },
      renderer: (t) => `<span class="math">${escapeHtml(t.text as string)}</span>`,
    },
    {
      // ` ^abc-1` at a line's end marks a block for [[Note#^abc-1]]: Obsidian hides it; here it is the anchor.
      name: "blockId",
      level: "inline",
      // Where an id really is, on this line only (text tokens end at line breaks: breaks is on): each place
      // returned cuts the text, and marked then asks every extension's start again on the rest, so "^a " ×
      // 85,000 took 6 s; a regex over the whole rest at every line break was quadratic too.
      start: (src) => {
        const nl = src.indexOf("\n");
        const end = nl === -1 ? src.length : nl;
        const i = src.lastIndexOf("^", end);
        if (i === -1 || (i > 0 && src[i - 1] !== " " && src[i - 1] !== "\t") || !BLOCK_ID_TAIL.test(src.slice(i, end))) return undefined;
        return i > 0 ? i - 1 : 0;
      },
      tokenizer(src, tokens) {
        const m = /^(?:[ \t]+|(?=\^))\^([A-Za-z0-9-]+)[ \t]*(?=\n|$)/.exec(src);
        if (!m || (!/^[ \t]/.test(m[0]) && tokens.length > 0)) return undefined;
        return { type: "blockId", raw: m[0], id: m[1] };
      },
      renderer: (t) => (ctx().depth > 0 ? "" : `<span class="block-id" id="b-${escapeHtml(blockSlug(t.id as string))}"></span>`),
    },
    {
      name: "tag",
      level: "inline",
      // Only after whitespace or at the start: `C#` and `page#part` are not tags.
      // The index's own rule (lib/vault/tags.ts): emoji allowed, #cafe a tag, #ff0000 a colour.
      start: (src) => {
        const m = TAG_START.exec(src);
        return m ? m.index + m[1]!.length : undefined;
      },
      tokenizer(src, tokens) {
        const prev = tokens[tokens.length - 1]?.raw ?? "";
        if (prev && !/\s$/.test(prev)) return undefined;
        const m = TAG_AT_START.exec(src);
        if (m && !isColour(m[1]!)) return { type: "tag", raw: m[0], tag: withoutTrailing(m[1]!, "/") };
        return undefined;
      },
      renderer: (t) => `<a class="tag" href="/tags/${escapeHtml(encodeURIComponent(t.tag as string))}">#${escapeHtml(t.tag as string)}</a>`,
    },
  ],
  renderer: {
    heading({ tokens, depth, text }) {
      // An embedded note's headings take no ids: they would repeat the page's own, and the outline and
      // [[#Section]] would jump into the embed.
      if (ctx().depth > 0) return `<h${depth}>${this.parser.parseInline(tokens)}</h${depth}>\n`;
      const id = ctx().slugger.next(headingPlainText(text));
      return `<h${depth} id="h-${escapeHtml(id)}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
    },
    blockquote(token: Tokens.Blockquote) {
      const m = CALLOUT.exec(token.text);
      if (!m) return `<blockquote>\n${this.parser.parse(token.tokens)}</blockquote>\n`;
      const type = m[1]!.toLowerCase();
      const fold = m[2];
      const title = m[3]!.trim() || type.charAt(0).toUpperCase() + type.slice(1);
      const c = ctx();
      const body = m[4] ? renderWith({ ...c }, m[4], false) : "";
      const titleHtml = instance.parseInline(title) as string;
      const cls = `callout callout-${escapeHtml(type.replace(/[^a-z0-9-]/g, ""))}`;
      if (fold) {
        return `<details class="${cls}"${fold === "+" ? " open" : ""}><summary class="callout-title">${titleHtml}</summary><div class="callout-body">${body}</div></details>\n`;
      }
      return `<div class="${cls}"><div class="callout-title">${titleHtml}</div><div class="callout-body">${body}</div></div>\n`;
    },
    link({ href, title, tokens }) {
      const text = this.parser.parseInline(tokens);
      const t = title ? ` title="${escapeHtml(title)}"` : "";
      if (isExternal(href)) return `<a class="external" href="${escapeHtml(href)}"${t} rel="noopener noreferrer" target="_blank">${text}</a>`;
      if (href.startsWith("#")) return `<a href="#h-${escapeHtml(splitHref(href).fragment ?? "")}"${t}>${text}</a>`;
      const { target, fragment } = splitHref(href);
      const resolved = resolve(target, "markdown");
      if (!resolved) return `<a class="unresolved" href="${escapeHtml(noteHref(target))}"${t}>${text}</a>`;
      if (!/\.md$/i.test(resolved)) return `<a class="attachment" href="${escapeHtml(fileHref(resolved))}"${t}>${text}</a>`;
      return `<a class="wikilink" href="${escapeHtml(noteHref(resolved, fragment))}"${t}>${text}</a>`;
    },
    image({ href, title, text }) {
      const t = title ? ` title="${escapeHtml(title)}"` : "";
      // Remote images would tell a third party that the note was opened: shown as links (the CSP blocks them anyway).
      if (/^https?:/i.test(href) || href.startsWith("//")) return `<a class="external-image" href="${escapeHtml(href)}" rel="noopener noreferrer" target="_blank">🖼 ${escapeHtml(text || href)}</a>`;
      if (/^data:image\//i.test(href)) return `<img src="${escapeHtml(href)}" alt="${escapeHtml(text)}"${t}>`;
      if (isExternal(href)) return escapeHtml(text);
      const resolved = resolve(splitHref(href).target, "markdown");
      if (!resolved) return `<span class="unresolved">${escapeHtml(text || href)}</span>`;
      return `<img src="${escapeHtml(fileHref(resolved))}" alt="${escapeHtml(text)}"${t}>`;
    },
  },
};

const instance = new Marked(obsidian);
// Footnotes ([^1] and [^1]: …) as Obsidian shows them, ids under fn- (sanitize.ts keeps only those), for the
// page's own text: a parse nested in it (a callout's body, an embed) with the extension too reset its list,
// and the page's footnotes vanished (review of the change). Inside those, a footnote stays as written.
const pageInstance = new Marked(obsidian, markedFootnote({ prefixId: "fn-", refMarkers: false }));

function renderWith(c: RenderContext, markdown: string, clean = true): string {
  const top = stack.length === 0;
  stack.push(c);
  try {
    const html = (top ? pageInstance : instance).parse(markdown, { async: false }) as string;
    return clean ? sanitizeNoteHtml(html) : html;
  } finally {
    stack.pop();
  }
}

/** A note's body (frontmatter removed) as sanitised HTML. */
export function renderNote(root: string, resolve: ResolveLink, path: string, content: string): string {
  const body = noteBody(content);
  return renderWith({ root, resolve, path, depth: 0, slugger: new HeadingIds() }, body);
}

/** Shown instead when the render ran out of its time: the text itself, escaped. */
export function plainNoteHtml(content: string, why: string): string {
  const body = noteBody(content);
  return `<p class="muted">${escapeHtml(why)}</p><pre class="plain-note">${escapeHtml(body)}</pre>`;
}
