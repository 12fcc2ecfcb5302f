// Split a note's body into passages for embedding: along headings first, then
// (for long sections) into overlapping windows on paragraph and sentence
// boundaries. Each passage knows its heading and ordinal. The text is cleaned
// of Markdown syntax (link targets, URLs, emphasis marks), which carries no
// meaning for a sentence encoder and would waste its input window.
import { contentHash } from "../index/parse-job";

export interface Passage {
  ord: number;
  /** The nearest heading above the passage ("" before the first heading). */
  heading: string;
  /** Cleaned text: what is shown as a snippet. */
  text: string;
  /** What is embedded: the text, with the heading in front of a section's later windows. */
  input: string;
  /** Hash of `input` (and the chunker version): the embedding cache key. */
  hash: string;
}

/** Passage size for a provider: its own, unless LETTUCE_PASSAGE_CHARS (200-8000) says otherwise. */
export function passageCharsFor(provider: { passageChars: number }): number {
  const n = Number(process.env.LETTUCE_PASSAGE_CHARS);
  return Number.isInteger(n) && n >= 200 && n <= 8000 ? n : provider.passageChars;
}

// Part of every passage hash. Changes to splitting or cleaning change the hashed text by themselves;
// bump this only if the same text must be embedded afresh.
const HASH_SALT = "1";
// Bump when splitting or cleaning changes: indexes made by another version are re-split (unchanged
// passages keep their cached vectors).
const CHUNKER_VERSION = "2";

/** What decides how notes are split; stored with the vectors so that a change re-splits every note. */
export function chunkLayout(passageChars: number): string {
  return `${CHUNKER_VERSION}:${passageChars}`;
}

interface Section {
  heading: string;
  paras: string[];
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const ATX = /^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$/;

/** Markdown to plain prose, one line at a time (paragraph structure is kept by the caller). */
export function cleanLine(line: string): string {
  return line
    .replace(/%%.*?%%/g, " ")
    .replace(/<!--.*?-->/g, " ")
    .replace(/!\[\[[^\]]*\]\]/g, " ")
    .replace(/\[\[([^\]|#]*)(?:#[^\]|]*)?\|([^\]]*)\]\]/g, "$2")
    .replace(/\[\[([^\]|]*)\]\]/g, (_, t: string) => t.replace(/#\^?/g, " ").replace(/^.*\//, ""))
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<https?:[^>]*>/g, " ")
    .replace(/https?:\/\/\S+/g, " ")
    .replace(/<\/?[a-zA-Z][^>]*>/g, " ")
    .replace(/^\s*>\s?(\[![^\]]*\][+-]?)?/, "")
    .replace(/^\s*(?:[-*+]|\d+[.)])\s+(\[[ xX]\]\s+)?/, "")
    .replace(/^\s*\|?(\s*:?-{3,}:?\s*\|)+\s*$/, " ")
    .replace(/\|/g, " ")
    .replace(/(\*\*|__|~~|==)/g, "")
    .replace(/(^|[\s(])[*_]([^*_\s][^*_]*?)[*_](?=[\s).,;:!?]|$)/g, "$1$2")
    .replace(/`+/g, "")
    .replace(/\s+\^[\w-]+$/, "")
    .replace(/[ \t]+/g, " ")
    .trim();
}

function sections(body: string): Section[] {
  const out: Section[] = [{ heading: "", paras: [] }];
  let para: string[] = [];
  let fence: string | null = null;
  const flush = () => {
    const text = para.join(" ").trim();
    if (text) out[out.length - 1]!.paras.push(text);
    para = [];
  };
  for (const raw of body.split(/\r?\n/)) {
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
    const h = ATX.exec(raw);
    if (h) {
      flush();
      const title = cleanLine(h[2]!);
      out.push({ heading: title, paras: title ? [title] : [] });
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

function hashOf(input: string): string {
  return contentHash(`${HASH_SALT}\0${input}`).slice(0, 32);
}

/**
 * Passages of a note body (frontmatter already removed). `maxChars` bounds each
 * passage; neighbouring windows of a long section share about 15% of text;
 * short sections are merged with the next one while they fit together.
 */
export function splitPassages(body: string, maxChars: number): Passage[] {
  const overlap = Math.floor(maxChars * 0.15);
  const secs = sections(body);
  // Merge runs of small sections (a heading with a line or two) so that each passage says something.
  const merged: Section[] = [];
  for (const s of secs) {
    const prev = merged[merged.length - 1];
    const size = (x: Section) => x.paras.reduce((n, p) => n + p.length + 1, 0);
    if (prev && size(prev) < maxChars / 3 && size(prev) + size(s) <= maxChars) {
      prev.paras.push(...s.paras);
      if (!prev.heading) prev.heading = s.heading;
    } else merged.push({ heading: s.heading, paras: [...s.paras] });
  }
  const out: Passage[] = [];
  for (const s of merged) {
    const parts = s.paras.flatMap((p) => units(p, maxChars));
    windows(parts, maxChars, overlap).forEach((text, i) => {
      const input = i > 0 && s.heading ? `${s.heading}\n${text}` : text;
      out.push({ ord: out.length, heading: s.heading, text, input, hash: hashOf(input) });
    });
  }
  return out;
}
