// The unreliable model's script, and the facts a test checks its answers
// against, computed from the vault's files (not from what the server said).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { splitPassages } from "../../lib/semantic/passages";
import { parseReference, type ChatRequest, type ShownItem } from "./chat-server";

/** Lower case, one space for any run of whitespace, typographic quotes folded. */
export const norm = (s: string) =>
  s
    .normalize("NFKC")
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[\u201c\u201d]/g, '"')
    .toLowerCase()
    .replace(/\s+/g, " ")
    .trim();

export const bodyOf = (raw: string) => raw.replace(/^---\r?\n[\s\S]*?\r?\n---\r?\n?/, "");

/**
 * A run of `words` plain words (letters only) of a passage that the raw file
 * also holds word for word, so that a test can check it against the file;
 * `avoid` texts must not hold it.
 */
export function plainSpan(text: string, raw: string, avoid: string[] = [], words = 5, skip = 0): string | null {
  // The body only: frontmatter (an Obsidian "description:") often repeats a sentence of it.
  const file = norm(bodyOf(raw));
  let found = 0;
  // Within one line of the passage: a heading and the paragraph under it are separate lines.
  for (const line of text.split("\n")) {
    const ws = line.split(/\s+/);
    for (let i = 0; i + words <= ws.length; i++) {
      const win = ws.slice(i, i + words);
      if (!win.every((w) => /^[\p{L}]{2,}$/u.test(w))) continue;
      const span = win.join(" ");
      if (!file.includes(norm(span)) || avoid.some((a) => norm(a).includes(norm(span)))) continue;
      if (found++ < skip) continue;
      return span;
    }
  }
  return null;
}

/** The headings of a file, from its own lines (outside code fences), Markdown emphasis and link syntax removed. */
export function fileHeadings(raw: string): string[] {
  const out: string[] = [];
  let inFence = false;
  for (const line of bodyOf(raw).split(/\r?\n/)) {
    if (/^ {0,3}(```|~~~)/.test(line)) inFence = !inFence;
    const h = !inFence && /^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$/.exec(line);
    if (h) out.push(h[1]!.replace(/[*_`]/g, "").replace(/\[\[([^\]|]*\|)?([^\]]*)\]\]/g, "$2").trim());
  }
  return out;
}

/**
 * Check a quote against its file: the file holds it, the passage the ordinal
 * names (the file split as retrieval splits it) holds it, the heading is that
 * passage's, and it is "" or one of the file's headings.
 */
export function quoteBackedByFile(raw: string, q: { quote: string; heading: string; ordinal: number }, chars: number): string | null {
  if (!norm(raw).includes(norm(q.quote))) return "the file does not hold the quote";
  const p = passageAt(raw, chars, q.ordinal);
  if (!p) return `the file has no passage ${q.ordinal}`;
  if (!norm(p.text).includes(norm(q.quote))) return `passage ${q.ordinal} does not hold the quote`;
  if (p.heading !== q.heading) return `passage ${q.ordinal} is under "${p.heading}", not "${q.heading}"`;
  if (q.heading !== "" && !fileHeadings(raw).includes(q.heading)) return `"${q.heading}" is not a heading of the file`;
  return null;
}

/** The passage of the file (split as retrieval splits it) at `ordinal`. */
export function passageAt(raw: string, chars: number, ordinal: number) {
  return splitPassages(bodyOf(raw), chars)[ordinal] ?? null;
}

export interface Script {
  /** The quote the model got right (before it mangled case and spacing). */
  real: string | null;
  /** Page A: the first shown; page B: another shown page. */
  a: string | null;
  b: string | null;
}

/** Items grouped by page, in the order shown. */
export function pagesShown(items: ShownItem[]): Map<string, ShownItem[]> {
  const m = new Map<string, ShownItem[]>();
  for (const it of items) {
    const p = it.attrs.path!;
    m.set(p, [...(m.get(p) ?? []), it]);
  }
  return m;
}

/**
 * The unreliable answer: cites page A, a page it was never shown and page B
 * (in the wrong case, without .md); quotes A correctly (but in capitals with
 * doubled spaces), invents a quote for A, and gives B a real quote of A.
 */
export function unreliableAnswer(root: string, req: ChatRequest, script: Script): string {
  const ref = parseReference(req.user);
  if (!ref || !ref.items.length) return JSON.stringify({ answer: "The notes do not cover it.", citations: [], quotes: [] });
  const pages = pagesShown(ref.items);
  const [a, b] = [...pages.keys()];
  const raw = (p: string) => readFileSync(join(root, p), "utf8");
  const aText = pages.get(a!)!.map((i) => i.text).join("\n");
  const bText = b ? pages.get(b)!.map((i) => i.text).join("\n") : "";
  const real = plainSpan(aText, raw(a!), [bText]);
  const mis = plainSpan(aText, raw(a!), [bText], 5, 1) ?? real;
  Object.assign(script, { real, a, b: b ?? null });
  return JSON.stringify({
    answer: `According to the notes, ${real ?? "something"}.`,
    citations: [a, "Never/Shown.md", ...(b ? [b.replace(/\.md$/, "").toUpperCase()] : [])],
    quotes: [
      ...(real ? [{ path: a!.toLowerCase(), quote: `  ${real.toUpperCase().replace(/ /g, "  \n ")} ` }] : []),
      { path: a, quote: "the moon is made of green cheese and nobody wrote it down" },
      ...(b && mis ? [{ path: b, quote: mis }] : []),
    ],
  });
}
