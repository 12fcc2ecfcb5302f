// Heading ids as github-slugger spells them (the anchors Obsidian's and GitHub's renderers use), without
// its pattern for the common case: the pattern is a class of thousands of Unicode ranges, and running it
// over every heading was ~8% of a cold index's parse time on obsidian-hub (21,000 headings).
import { slug as githubSlug } from "github-slugger";

// For ASCII text the slug is the slug of each character in turn (lower-cased, dropped, or '-' for a
// space), so a table of the 128 answers, taken from github-slugger itself, spells it.
const ASCII_SLUG: string[] = Array.from({ length: 128 }, (_, c) => githubSlug(String.fromCharCode(c)));

// Letters, digits, _ - and spaces: the usual heading. The table's answer for these is the text lower-cased
// with each space a '-', made at once rather than a character at a time.
const PLAIN = /^[\w -]*$/;

export function headingSlug(title: string): string {
  if (PLAIN.test(title)) return title.toLowerCase().replaceAll(" ", "-");
  let out = "";
  for (let i = 0; i < title.length; i++) {
    const c = title.charCodeAt(i);
    if (c >= 128) return githubSlug(title);
    out += ASCII_SLUG[c];
  }
  return out;
}

/** A note's heading ids: a repeated slug gets -1, -2, … as github-slugger's Slugger numbers them. */
export class HeadingIds {
  private readonly seen = new Map<string, number>();

  next(title: string): string {
    const base = headingSlug(title);
    let id = base;
    while (this.seen.has(id)) {
      const n = this.seen.get(base)! + 1;
      this.seen.set(base, n);
      id = `${base}-${n}`;
    }
    this.seen.set(id, 0);
    return id;
  }
}
