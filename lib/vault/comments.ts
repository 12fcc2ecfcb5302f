// What a reader of a note never sees as Markdown: Obsidian comments (%% … %%), HTML comments
// (<!-- … -->) and $$ … $$ math. Obsidian finds no links, tags or headings inside them, so the
// parser must not either (an audit found [[T]] in a comment listed as a backlink, and move_note
// rewriting it). One scanner for the parser, move_note's rewrite and search snippets, so that
// they cannot disagree about where a comment ends.
import { blocks, maskCode, type Block } from "./blocks";

type Opener = "%%" | "<!--" | "$$";
const CLOSER: Record<Opener, string> = { "%%": "%%", "<!--": "-->", $$: "$$" };

// Spaces for text[from, to), its line breaks kept. By line, not a regex replace per character: comments
// are in most notes of a real vault (templates leave %% … %% in each), and the replace was most of the cost.
// The search for line breaks stays inside the stretch: past it, a long line of short comments was rescanned to its end for each.
function blank(text: string, from: number, to: number): string {
  const s = text.slice(from, to);
  let out = "";
  for (let i = 0; ; ) {
    const nl = s.indexOf("\n", i);
    if (nl === -1) return out + " ".repeat(s.length - i);
    out += " ".repeat(nl - i) + "\n";
    i = nl + 1;
  }
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
  const openers: Opener[] = [];
  if (text.includes("%%")) openers.push("%%");
  if (text.includes("<!--")) openers.push("<!--");
  if (math && text.includes("$$")) openers.push("$$");
  // The common note has none: the text as it is, with no copy.
  if (!openers.length) return text;
  const next = new Map<Opener, number>(openers.map((o) => [o, -2]));
  let out = "";
  let from = 0;
  for (;;) {
    let at = -1;
    let opener: Opener | null = null;
    for (const [o, pos] of next) {
      let p = pos;
      if (p !== -1 && p < from) next.set(o, (p = text.indexOf(o, from)));
      if (p !== -1 && (at === -1 || p < at)) [at, opener] = [p, o];
    }
    if (!opener) break;
    const end = text.indexOf(CLOSER[opener], at + opener.length);
    if (end === -1) {
      // No `$$` after this one anywhere: no more math to look for.
      if (opener === "$$") {
        next.set("$$", -1);
        continue;
      }
      out += text.slice(from, at) + blank(text, at, text.length);
      from = text.length;
      break;
    }
    const stop = end + CLOSER[opener].length;
    out += text.slice(from, at) + blank(text, at, stop);
    from = stop;
  }
  return from === 0 ? text : out + text.slice(from);
}

/**
 * The blocks less the headings a comment or math block holds. `codeMasked` is the body with code
 * blanked, `masked` the same with comments and math blanked too: a heading is hidden when the
 * first character of its first line that code left visible is blanked in `masked`.
 */
export function visibleBlocks(bl: Block[], codeMasked: string, masked: string): Block[] {
  if (masked === codeMasked || !bl.some((b) => b.type === "heading")) return bl;
  const starts = [0];
  for (let i = codeMasked.indexOf("\n"); i !== -1; i = codeMasked.indexOf("\n", i + 1)) starts.push(i + 1);
  return bl.filter((b) => {
    if (b.type !== "heading") return true;
    const from = starts[b.startLine];
    if (from === undefined) return true;
    const to = b.startLine + 1 < starts.length ? starts[b.startLine + 1]! - 1 : codeMasked.length;
    for (let i = from; i < to; i++) {
      const c = codeMasked.charCodeAt(i);
      if (c !== 32 && c !== 9) return masked.charCodeAt(i) !== 32;
    }
    return true;
  });
}

/**
 * A note's body split by line, its blocks (less the headings hidden in comments and math) and its
 * text as the parser reads it: code, comments and math blanked, offsets and lines kept. Every
 * reader of links, tags and headings starts here, so all of them see the same text.
 */
export function maskBody(body: string): { bodyLines: string[]; bl: Block[]; masked: string } {
  const bodyLines = body.split("\n");
  const all = blocks(bodyLines);
  const codeMasked = maskCode(bodyLines, all, body);
  const masked = blankHidden(codeMasked);
  return { bodyLines, bl: visibleBlocks(all, codeMasked, masked), masked };
}
