// A note's bytes as text to edit, and back: its style (UTF-8 or not, a BOM, CRLF throughout or mixed
// endings) is found on the bytes and kept, so that an edit leaves untouched lines as they were.
import { isUtf8 } from "node:buffer";
import { ToolError } from "../errors";

/** How a note's bytes are laid out, which an edit keeps. */
export interface NoteStyle {
  crlf: boolean;
  bom: boolean;
  /** A CR that is not in a CRLF-throughout file: mixed endings, edited as they are. */
  mixed: boolean;
}

export interface NoteText extends NoteStyle {
  /** The text with CRLF turned into LF when the whole file uses CRLF, and without a BOM. */
  text: string;
}

/**
 * The style of a note's bytes, or null when they are not UTF-8. Found on the bytes: write_note kept a 30 MB
 * note's style by decoding it whole (~130 ms on the server's one thread) to replace it with a line.
 */
export function styleOf(bytes: Uint8Array): NoteStyle | null {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  if (!isUtf8(buf)) return null;
  const bom = buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf;
  // CRLF throughout: some LF, each after a CR (the byte before the first LF is the BOM's in "\uFEFF\n").
  let at = buf.indexOf(10);
  let crlf = at !== -1;
  for (; at !== -1; at = buf.indexOf(10, at + 1)) {
    if (at === 0 || buf[at - 1] !== 13) {
      crlf = false;
      break;
    }
  }
  return { crlf, bom, mixed: !crlf && buf.indexOf(13) !== -1 };
}

/**
 * Decode a note for editing. Edits work on LF text; a file that uses CRLF
 * throughout gets CRLF back (encodeText), so its untouched lines keep their
 * bytes. A file with mixed endings is edited as it is.
 */
export function decodeText(path: string, bytes: Uint8Array): NoteText {
  const style = styleOf(bytes);
  if (!style) {
    throw new ToolError("unsupported-encoding", `${path} is not valid UTF-8; Lettuce will not rewrite it in part (replace it whole with write_note)`);
  }
  let text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("utf8");
  if (style.bom) text = text.slice(1);
  if (style.crlf) text = text.replace(/\r\n/g, "\n");
  return { ...style, text };
}

export function encodeText(t: NoteStyle, text: string): Buffer {
  let out = t.crlf ? text.replace(/\r?\n/g, "\r\n") : text;
  if (t.bom) out = "\uFEFF" + out;
  return Buffer.from(out, "utf8");
}

/**
 * Agent text meant for a note: CRLF folded to LF when the note is edited as LF, that is when it uses CRLF
 * throughout (encodeText restores it) or has no CR at all. A CRLF patch into an LF note wrote mixed endings
 * (the write-content audit); a note already mixed is edited as it is.
 */
export function agentText(t: NoteStyle, s: string): string {
  return t.crlf || !t.mixed ? s.replace(/\r\n/g, "\n") : s;
}
