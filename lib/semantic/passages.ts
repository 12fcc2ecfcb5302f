// Split a note's body into passages for embedding: along headings first, then
// (for long sections) into overlapping windows on paragraph and sentence
// boundaries. Each passage knows its heading and ordinal. The text is cleaned
// of Markdown syntax (link targets, URLs, emphasis marks), which carries no
// meaning for a sentence encoder and would waste its input window. What is
// embedded is the text with the note's title and the passage's heading path in
// front (a window deep in "Sync/Version history › Restore a deleted file" says
// "restore" and "file" but not what it restores); what is shown is the text.
import { atxHeading } from "../vault/line-ends";
import { contentHash } from "../index/parse-job";
import { backtickRuns } from "../vault/code-spans";
import { envNumber } from "../env-number";

export interface Passage {
  ord: number;
  /** The nearest heading above the passage ("" before the first heading). */
  heading: string;
  /** Cleaned text: what is shown as a snippet. */
  text: string;
  /** What is embedded: the note's title and the passage's heading path (what the text does not already start with), then the text. */
  input: string;
  /** Hash of `input` (and the chunker version): the embedding cache key. */
  hash: string;
}

/** Passage size for a provider: its own, unless LETTUCE_PASSAGE_CHARS (200-8000) says otherwise. */
export function passageCharsFor(provider: { passageChars: number }): number {
  return envNumber("LETTUCE_PASSAGE_CHARS", provider.passageChars, { min: 200, max: 8000, integer: true });
}

// Part of every passage hash. Changes to splitting or cleaning change the hashed text by themselves;
// bump this only if the same text must be embedded afresh.
const HASH_SALT = "1";
// Bump when splitting or cleaning changes: indexes made by another version are re-split (unchanged
// passages keep their cached vectors). 3: the title and heading path go in front of every passage;
// 4: not the title when the outermost heading already names the note; 5: comments spanning lines
// are left out, and template boilerplate is not embedded (./boilerplate.ts).
const CHUNKER_VERSION = "5";

/** What decides how notes are split; stored with the vectors so that a change re-splits every note. */
export function chunkLayout(passageChars: number): string {
  return `${CHUNKER_VERSION}:${passageChars}`;
}

interface Section {
  heading: string;
  /** The headings above and including this one, outermost first. */
  path: string[];
  paras: string[];
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

const TABLE_SEPARATOR = /^\|?(?:\s*:?-{3,}:?\s*\|)+$/;

/** Markdown to plain prose, one line at a time (paragraph structure is kept by the caller). */
export function cleanLine(line: string): string {
  // Each bracketed part stops at the next bracket or '<' (a destination may hold one level of parentheses): a part
  // that may run past one rescans the rest of the line from every opener, and a 100 KB line of '[' took 38 s to split.
  const inline = line
    .replace(/!\[\[[^[\]]*\]\]/g, " ")
    .replace(/\[\[([^[\]|#]*)(?:#[^[\]|]*)?\|([^[\]]*)\]\]/g, "$2")
    .replace(/\[\[([^[\]|]*)\]\]/g, (_, t: string) => t.replace(/#\^?/g, " ").replace(/^.*\//, ""))
    .replace(/!\[([^[\]]*)\]\([^()]*(?:\([^()]*\)[^()]*)*\)/g, "$1")
    .replace(/\[([^[\]]*)\]\([^()]*(?:\([^()]*\)[^()]*)*\)/g, "$1")
    .replace(/<https?:[^<>]*>/g, " ")
    .replace(/https?:\/\/\S+/g, " ")
    .replace(/<\/?[a-zA-Z][^<>]*>/g, " ")
    .replace(/^\s*>\s?(\[![^\]]*\][+-]?)?/, "")
    .replace(/^\s*(?:[-*+]|\d+[.)])\s+(\[[ xX]\]\s+)?/, "");
  // A table's separator row, tested on the trimmed line: with the blanks around it in the pattern, a line of
  // 250 KB of spaces and a letter was tried at every split (minutes).
  return (TABLE_SEPARATOR.test(inline.trim()) ? " " : inline)
    .replace(/\|/g, " ")
    .replace(/(\*\*|__|~~|==)/g, "")
    .replace(/(^|[\s(])[*_]([^*_\s][^*_]*?)[*_](?=[\s).,;:!?]|$)/g, "$1$2")
    .replace(/`+/g, "")
    .replace(/\s\^[\w-]+$/, "") // one space, not \s+: a long run of spaces before no ^id was rescanned from each
    .replace(/[ \t]+/g, " ")
    .trim();
}

/** The comment a line ends inside: Obsidian's %% … %% or HTML's <!-- … -->, which a reader never sees. */
type Hidden = "%%" | "<!--" | null;
const CLOSER = { "%%": "%%", "<!--": "-->" } as const;

/**
 * A line's text outside comments, given the comment open at its start; and the comment open at its end.
 * Comments span lines (a template's footer, an Excalidraw drawing's JSON, a block kept for later);
 * marks inside `inline code` are text, as Obsidian shows them. An unclosed comment hides the rest of
 * the note, as it does in Obsidian's reading view. Linear in the line's length whatever it holds (a
 * note is untrusted input: finding each code span's end by searching ahead was quadratic on a line
 * of unclosed backtick runs, 100 s for 1 MB).
 */
export function visibleText(line: string, open: Hidden): { text: string; hidden: Hidden } {
  if (!open && !line.includes("%%") && !line.includes("<!--")) return { text: line, hidden: null };
  const runs = line.includes("`") ? backtickRuns(line) : null;
  let r = 0;
  let out = "";
  let i = 0;
  let hidden = open;
  while (i < line.length) {
    if (hidden) {
      const end = line.indexOf(CLOSER[hidden], i);
      if (end < 0) return { text: out, hidden };
      i = end + CLOSER[hidden].length;
      hidden = null;
      out += " ";
      continue;
    }
    const ch = line[i]!;
    if (ch === "`" && runs) {
      while (runs.start[r]! < i) r++; // runs skipped inside a comment
      // A code span runs to the next run of exactly as many backticks (none: the backticks are text).
      const close = runs.close[r]!;
      const end = close >= 0 ? runs.start[close]! + runs.len[close]! : i + runs.len[r]!;
      out += line.slice(i, end);
      i = end;
      r = close >= 0 ? close + 1 : r + 1;
      continue;
    }
    if (line.startsWith("%%", i)) {
      hidden = "%%";
      i += 2;
    } else if (line.startsWith("<!--", i)) {
      // Its closer may share its dashes: `<!-->` and `<!--->` are whole, empty comments (lib/vault/comments.ts).
      hidden = "<!--";
      i += 2;
    } else {
      out += ch;
      i++;
    }
  }
  return { text: out, hidden };
}

const MAX_HEADING_CHARS = 300;

function sections(body: string): Section[] {
  const out: Section[] = [{ heading: "", path: [], paras: [] }];
  // The open headings by level (1-6): a heading closes those at its level and below.
  const open: { level: number; title: string }[] = [];
  let para: string[] = [];
  let fence: string | null = null;
  const flush = () => {
    const text = para.join(" ").trim();
    if (text) out[out.length - 1]!.paras.push(text);
    para = [];
  };
  let hidden: Hidden = null;
  for (const source of body.split(/\r?\n/)) {
    // Comments hide what they hold, headings and fences included; a fence hides comment marks.
    let raw = source;
    if (!fence) {
      const v = visibleText(source, hidden);
      hidden = v.hidden;
      if (v.text !== source && !v.text.trim()) continue; // all of it inside a comment
      raw = v.text;
    }
    const f = FENCE.exec(raw);
    if (fence) {
      if (f && f[1]![0] === fence[0] && f[1]!.length >= fence.length) {
        fence = null;
        flush();
      } else para.push(raw.trim());
      continue;
    }
    if (f) {
      flush();
      fence = f[1]!;
      continue;
    }
    const h = atxHeading(raw);
    if (h) {
      flush();
      const text = cleanLine(h.text);
      // The heading path goes in front of every window of the section, and the heading with each passage: a
      // 250 KB line of '# # # …' put itself in front of each of its own 400 windows (4 s, and 100 MB to embed
      // and store). Past this length a heading is pasted text: it is read in full as the section's first paragraph.
      // (Not between the halves of a surrogate pair.)
      const cut = MAX_HEADING_CHARS - (/[\uD800-\uDBFF]/.test(text[MAX_HEADING_CHARS - 1] ?? "") ? 1 : 0);
      const title = text.length > MAX_HEADING_CHARS ? text.slice(0, cut) : text;
      const level = h.level;
      while (open.length && open[open.length - 1]!.level >= level) open.pop();
      if (title) open.push({ level, title });
      out.push({ heading: title, path: open.map((o) => o.title), paras: text ? [text] : [] });
      continue;
    }
    if (!raw.trim()) {
      flush();
      continue;
    }
    const line = cleanLine(raw);
    if (line) para.push(line);
  }
  flush();
  return out.filter((s) => s.paras.length > 0);
}

/** Cut a too-long unit into sentences, and a too-long sentence into word runs. */
function units(para: string, max: number): string[] {
  if (para.length <= max) return [para];
  const out: string[] = [];
  for (const sentence of para.split(/(?<=[.!?;:])\s+/)) {
    if (sentence.length <= max) {
      out.push(sentence);
      continue;
    }
    let run = "";
    for (const word of sentence.split(/\s+/)) {
      const w = word.length > max ? word.slice(0, max) : word;
      if (run && run.length + 1 + w.length > max) {
        out.push(run);
        run = "";
      }
      run = run ? `${run} ${w}` : w;
    }
    if (run) out.push(run);
  }
  return out;
}

/** Pack units into windows of at most `max` characters, each starting with up to `overlap` characters of the last. */
function windows(parts: string[], max: number, overlap: number): string[] {
  const out: string[] = [];
  let cur: string[] = [];
  let len = 0;
  for (const u of parts) {
    if (cur.length && len + 1 + u.length > max) {
      out.push(cur.join("\n"));
      const carry: string[] = [];
      let carried = 0;
      for (let i = cur.length - 1; i >= 0; i--) {
        const c = cur[i]!;
        if (carried + c.length + 1 > overlap || carried + c.length + 1 + u.length > max) break;
        carry.unshift(c);
        carried += c.length + 1;
      }
      if (!carry.length) {
        // The last sentence is longer than the overlap: carry its closing words instead.
        const words = cur[cur.length - 1]!.split(" ");
        let tail = "";
        for (let i = words.length - 1; i > 0; i--) {
          const next = tail ? `${words[i]} ${tail}` : words[i]!;
          if (next.length + 1 > overlap || next.length + 1 + u.length > max) break;
          tail = next;
        }
        if (tail) {
          carry.push(tail);
          carried = tail.length + 1;
        }
      }
      cur = carry;
      len = carried;
    }
    cur.push(u);
    len += u.length + 1;
  }
  if (cur.length) out.push(cur.join("\n"));
  return out;
}

/** A text's key: 53 bits of a 64-bit hash (a number, so that a set of them stays small). */
export function textKey(text: string): number {
  return Number(Bun.hash.wyhash(text) & 0x1fffffffffffffn);
}

const sectionKey = (sec: Section) => textKey(sec.paras.join("\n"));

function hashOf(input: string): string {
  return contentHash(`${HASH_SALT}\0${input}`).slice(0, 32);
}

const norm = (s: string) => s.replace(/\s+/g, " ").trim().toLowerCase();

/**
 * The lines put in front of a passage's text for embedding: the note's title,
 * then the heading path, each only once and only when the text does not
 * already start with it (a section's first window starts with its heading).
 */
export function contextLines(title: string, path: string[], text: string): string[] {
  const out: string[] = [];
  // When the outermost heading already names the note ("Fireball" in "Fireball (draft).md"), the
  // title adds nothing but what tells a copy from its original, which near-duplicate search must not see.
  const named = path.length > 0 && norm(title).startsWith(norm(path[0]!));
  for (const line of named ? path : [title, ...path]) {
    const l = line.trim();
    if (l && !out.some((o) => norm(o) === norm(l))) out.push(l);
  }
  const first = norm(text.split("\n", 1)[0] ?? "");
  while (out.length && norm(out[out.length - 1]!) === first) out.pop();
  return out;
}

/**
 * Passages of a note body (frontmatter already removed). `maxChars` bounds each
 * passage's text; neighbouring windows of a long section share about 15% of
 * text; short sections are merged with the next one while they fit together.
 * `title` (the note's) goes in front of each passage's embedded input, with the
 * heading path. Sections for which `skip` says yes are left out (unless all are):
 * the ordinals count the passages embedded.
 */
export function splitPassages(body: string, maxChars: number, title = "", opts: { skip?: (sectionKey: number) => boolean } = {}): Passage[] {
  const skip = opts.skip;
  let secs = sections(body);
  if (skip) {
    // Template boilerplate (./boilerplate.ts) goes before short sections merge, unless it is all the note has.
    const kept = secs.filter((sec) => !skip(sectionKey(sec)));
    if (kept.length) secs = kept;
  }
  return passagesOf(secs, maxChars, title);
}

/**
 * splitPassages with nothing skipped, and the keys of the sections (heading and text, cleaned) it
 * came from, which ./boilerplate.ts counts: one parse of the body for both.
 */
export function splitCounting(body: string, maxChars: number, title: string): { passages: Passage[]; sectionKeys: number[] } {
  const secs = sections(body);
  return { sectionKeys: secs.map(sectionKey), passages: passagesOf(secs, maxChars, title) };
}

function passagesOf(secs: Section[], maxChars: number, title: string): Passage[] {
  const overlap = Math.floor(maxChars * 0.15);
  // Merge runs of small sections (a heading with a line or two) so that each passage says something.
  // (Copies: the sections themselves stay as parsed.)
  const merged: Section[] = [];
  for (const s of secs) {
    const prev = merged[merged.length - 1];
    const size = (x: Section) => x.paras.reduce((n, p) => n + p.length + 1, 0);
    if (prev && size(prev) < maxChars / 3 && size(prev) + size(s) <= maxChars) {
      prev.paras.push(...s.paras);
      if (!prev.heading) {
        prev.heading = s.heading;
        prev.path = s.path;
      }
    } else merged.push({ heading: s.heading, path: s.path, paras: [...s.paras] });
  }
  const out: Passage[] = [];
  for (const s of merged) {
    const parts = s.paras.flatMap((p) => units(p, maxChars));
    for (const text of windows(parts, maxChars, overlap)) {
      const input = [...contextLines(title, s.path, text), text].join("\n");
      out.push({ ord: out.length, heading: s.heading, text, input, hash: hashOf(input) });
    }
  }
  return out;
}
