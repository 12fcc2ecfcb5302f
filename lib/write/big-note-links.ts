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
 * The lines of a note that hold links; "unsupported" when its bytes are not UTF-8 (the note is not
 * rewritten); "changed" when the note on disk is not the one planned on.
 */
export function noteLinkLines(path: string, from: NoteSource): WrittenLinkLine[] | "unsupported" | "changed" {
  const bytes = bytesOf(from);
  if (!bytes) return "changed";
  let t;
  try {
    t = decodeText(path, bytes);
  } catch {
    return "unsupported";
  }
  const links = linkLinesOf(path, t.text);
  if (!links.length) return [];
  const lines = splitLines(t.text);
  return links.filter((l) => lines[l.line] !== undefined).map((l) => ({ ...l, text: lines[l.line]! }));
}

/** The note with the lines `changed` names replaced, in its own style (./note-text.ts); "changed" as above. */
export function spliceNoteLines(path: string, from: NoteSource, changed: [line: number, text: string][]): Uint8Array | "changed" {
  const bytes = bytesOf(from);
  if (!bytes) return "changed";
  const t = decodeText(path, bytes);
  const lines = splitLines(t.text);
  for (const [i, text] of changed) lines[i] = text;
  const out = encodeText(t, lines.join(""));
  // Whole buffers cross to the event loop without a copy (../offload/json-text.ts transferables).
  return out.byteOffset === 0 && out.byteLength === out.buffer.byteLength ? out : new Uint8Array(out);
}
