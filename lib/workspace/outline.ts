// A page's outline: its headings, each with the first line of its section,
// and the first line before the first heading. get_page's outline mode and a
// context pack's collapsed bodies both use it. Headings come from the index
// (so a `#` inside a code block is no heading); their lines are the file's.
import type { Heading } from "../retrieval/notes";

const FIRST_LINE_CHARS = 160;

export interface Outline {
  /** First line of text before the first heading ("" if none). */
  lead: string;
  sections: { level: number; title: string; firstLine: string }[];
}

function usable(line: string): boolean {
  const t = line.trim();
  // Blank lines, fence markers, setext underlines, rules and comment markers say nothing.
  return t !== "" && !/^(```|~~~)/.test(t) && !/^[=\-*_]{3,}$/.test(t) && !/^<!--|^-->$/.test(t);
}

function firstLine(lines: string[], from: number, to: number): string {
  for (let i = from; i < to && i < lines.length; i++) {
    if (usable(lines[i]!)) {
      const t = lines[i]!.trim();
      return t.length > FIRST_LINE_CHARS ? t.slice(0, FIRST_LINE_CHARS - 1) + "…" : t;
    }
  }
  return "";
}

/**
 * The outline of a note from its whole file text, the index's headings (with
 * 1-based file lines) and the line where the body starts (after frontmatter).
 */
export function outlineOf(fileText: string, headings: Heading[], bodyStartLine: number): Outline {
  const lines = fileText.split(/\r?\n/);
  const hs = headings.filter((h) => h.line >= 1 && h.line <= lines.length);
  const lead = firstLine(lines, bodyStartLine, hs.length ? hs[0]!.line - 1 : lines.length);
  const sections = hs.map((h, i) => ({
    level: h.level,
    title: h.title,
    firstLine: firstLine(lines, h.line, i + 1 < hs.length ? hs[i + 1]!.line - 1 : lines.length),
  }));
  return { lead, sections };
}

/** Markdown text of an outline: "## Heading" lines, each followed by its section's first line. */
export function renderOutline(o: Outline, maxSections = Infinity): string {
  const out: string[] = [];
  if (o.lead) out.push(o.lead);
  for (const s of o.sections.slice(0, maxSections)) {
    out.push(`${"#".repeat(Math.min(6, Math.max(1, s.level)))} ${s.title}`);
    if (s.firstLine) out.push(s.firstLine);
  }
  if (o.sections.length > maxSections) out.push(`… ${o.sections.length - maxSections} more headings`);
  return out.join("\n");
}

/** How many lines the frontmatter block takes (the body starts after them). */
export function frontmatterLineCount(raw: string): number {
  if (!raw) return 0;
  return raw.split(/\r?\n/).length - (raw.endsWith("\n") ? 1 : 0);
}
