// move_note's rewrite of a big note's links, split so that the whole-text work
// runs in a read worker: decoding, splitting into lines and parsing the note
// (noteLinkLines), and putting the rewritten lines back and encoding
// (spliceNoteLines). The event loop only decides each link's new text, which
// needs the resolver it holds. Done there, a 30 MB note's decode, line split,
// join and encode held every other caller ~180 ms, beside the parse.
import { contentHash } from "../index/parse-job";
import { linkLinesOf, type LinkLine } from "../vault/parse";
import { readVaultFile } from "../vault/read-file";
import { decodeText, encodeText } from "./note-text";
import { splitLines } from "./text";

/** A link line with its text as written (line break kept), as rewriteLinkLine takes it. */
export interface WrittenLinkLine extends LinkLine {
  text: string;
}

/**
 * The note the plan read: its bytes, or where it is and their hash. The worker then reads it from disk rather
 * than take a copy: 30 MB cloned into a worker's message held the event loop 15-45 ms each way.
 */
export type NoteSource = Uint8Array | { root: string; path: string; hash: string };

/** The bytes the plan read, or null when the note on disk is no longer those (the caller sends them). */
function bytesOf(from: NoteSource): Uint8Array | null {
  if (from instanceof Uint8Array) return from;
  try {
    const { bytes } = readVaultFile(from.root, from.path);
    return contentHash(bytes) === from.hash ? bytes : null;
  } catch {
    return null;
  }
}

/**
 * Strings packed for the trip between threads: one string and where each ends. 400,000 link lines of a
 * 30 MB note crossed as objects held the event loop ~90 ms to receive, and their rewrites ~260 ms to send.
 */
export interface PackedStrings {
  joined: string;
  ends: Int32Array;
}

function packStrings(list: string[]): PackedStrings {
  const ends = new Int32Array(list.length);
  let at = 0;
  for (let i = 0; i < list.length; i++) ends[i] = at += list[i]!.length;
  return { joined: list.join(""), ends };
}

function stringAt(p: PackedStrings, i: number): string {
  return p.joined.slice(i === 0 ? 0 : p.ends[i - 1]!, p.ends[i]!);
}

/** A note's link lines, packed (LinkLine's fields and the line as written). */
export interface PackedLinkLines {
  line: Int32Array;
  /** Bit 1: the line is a frontmatter property's; bit 2: the parser read it as written (`masked` holds ""). */
  flags: Uint8Array;
  masked: PackedStrings;
  text: PackedStrings;
}
const PROPERTY = 1;
const AS_WRITTEN = 2;

/** A line without its line break, as the parser reads it. */
const withoutEol = (line: string) => line.slice(0, line.length - (line.endsWith("\r\n") ? 2 : /[\r\n]$/.test(line) ? 1 : 0));

/** The `i`th of `p`'s lines. */
export function linkLineAt(p: PackedLinkLines, i: number): WrittenLinkLine {
  const text = stringAt(p.text, i);
  const l: WrittenLinkLine = { line: p.line[i]!, masked: p.flags[i]! & AS_WRITTEN ? withoutEol(text) : stringAt(p.masked, i), text };
  if (p.flags[i]! & PROPERTY) l.property = true;
  return l;
}

/** Lines by index with their new texts as UTF-8, for a worker (handed over, not copied: ChangedLines). */
export interface PackedChanges {
  line: Int32Array;
  bytes: Uint8Array;
  /** Where each line's text ends in `bytes`. */
  ends: Int32Array;
}

const encoder = new TextEncoder();

/**
 * The lines a move rewrote, their texts encoded as they come (between the event loop's turns). Sent to the
 * worker as one string, 400,000 rewritten lines (30 MB) held the event loop ~60 ms in postMessage alone.
 */
export class ChangedLines {
  private buf = new Uint8Array(64 * 1024);
  private used = 0;
  private readonly lines: number[] = [];
  private readonly ends: number[] = [];

  add(line: number, text: string): void {
    const need = this.used + text.length * 3;
    if (need > this.buf.length) {
      const grown = new Uint8Array(Math.max(need, this.buf.length * 2));
      grown.set(this.buf.subarray(0, this.used));
      this.buf = grown;
    }
    this.used += encoder.encodeInto(text, this.buf.subarray(this.used)).written;
    this.lines.push(line);
    this.ends.push(this.used);
  }

  packed(): PackedChanges {
    return { line: new Int32Array(this.lines), bytes: this.buf, ends: new Int32Array(this.ends) };
  }
}

/**
 * The lines of a note that hold links; "unsupported" when its bytes are not UTF-8 (the note is not
 * rewritten); "changed" when the note on disk is not the one planned on.
 */
export function noteLinkLines(path: string, from: NoteSource): PackedLinkLines | "unsupported" | "changed" {
  const bytes = bytesOf(from);
  if (!bytes) return "changed";
  let t;
  try {
    t = decodeText(path, bytes);
  } catch {
    return "unsupported";
  }
  const lines = splitLines(t.text);
  const found = linkLinesOf(path, t.text).filter((l) => lines[l.line] !== undefined);
  const flags = new Uint8Array(found.length);
  const masked: string[] = [];
  const texts: string[] = [];
  for (const [i, l] of found.entries()) {
    const text = lines[l.line]!;
    const asWritten = l.masked === withoutEol(text);
    flags[i] = (l.property ? PROPERTY : 0) | (asWritten ? AS_WRITTEN : 0);
    masked.push(asWritten ? "" : l.masked);
    texts.push(text);
  }
  return { line: new Int32Array(found.map((l) => l.line)), flags, masked: packStrings(masked), text: packStrings(texts) };
}

/** The note with the lines `changed` names replaced, in its own style (./note-text.ts); "changed" as above. */
export function spliceNoteLines(path: string, from: NoteSource, changed: PackedChanges): Uint8Array | "changed" {
  const bytes = bytesOf(from);
  if (!bytes) return "changed";
  const t = decodeText(path, bytes);
  const lines = splitLines(t.text);
  // ignoreBOM: a rewritten line may start with U+FEFF (notes joined from files that had one), which the
  // default decoder drops from the start of each piece (the review of 2026-12-07).
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  for (let i = 0; i < changed.line.length; i++) lines[changed.line[i]!] = decoder.decode(changed.bytes.subarray(i === 0 ? 0 : changed.ends[i - 1]!, changed.ends[i]!));
  const out = encodeText(t, lines.join(""));
  // Whole buffers cross to the event loop without a copy (../offload/json-text.ts transferables).
  return out.byteOffset === 0 && out.byteLength === out.buffer.byteLength ? out : new Uint8Array(out);
}
