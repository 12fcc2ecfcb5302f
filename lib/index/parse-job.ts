import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseNote, type ParsedNote } from "../vault/parse";
import type { FileEntry } from "../vault/scan";
import type { LinkResolver } from "./resolver";

export interface ParseRequest {
  entry: FileEntry;
  knownHash: string | null; // skip parsing when the content hash is unchanged
  /**
   * A cold bulk load: the note's id, chosen before parsing (the notes table is empty), so that a
   * parse worker can hand the full-text row straight to the full-text writer (see ftsRowOf).
   */
  ftsId?: number;
}

export interface ParseResult {
  entry: FileEntry;
  hash: string;
  parsed: ParsedNote | null; // null: unchanged content (only mtime moved) or unreadable
  /** resolvedPath per link, when the parser had a resolver (workers get a snapshot of the vault's names). */
  resolved?: (string | null)[];
  missing?: boolean;
  /** Worker → main thread form: everything but the body as one JSON string (see packResult). */
  packed?: string;
  /** The full-text row went from the parse worker to the full-text writer: the main thread writes none (and gets no body). */
  ftsSent?: boolean;
  /** The file as read and as decoded (parse workers keep them for ftsRowOf; never sent to the main thread). */
  bytes?: Buffer;
  text?: string;
}

/** A full-text row: note id, title field, body (text, or the file's UTF-8 bytes from the body's start). */
export type FtsRow = [number, string | null, string | Uint8Array | null];

/** What the full-text index holds as a note's title: the title and its aliases. */
export function ftsTitle(p: ParsedNote): string {
  return p.aliases.length ? `${p.title} ${p.aliases.join(" ")}` : p.title;
}

/**
 * The full-text row of a parsed note, for the full-text writer. The body goes as the
 * file's own bytes from where the body starts whenever those bytes are exactly the
 * body in UTF-8 (no CR to normalise, no invalid UTF-8 replaced): its buffer can then
 * be transferred rather than copied, and the writer binds it with no decoding
 * (posting 37 MB of bodies as strings cost ~130 ms of CPU per thread hop at 10k
 * notes, load ~10; transferring the buffers, next to nothing).
 */
export function ftsRowOf(id: number, r: ParseResult): { row: FtsRow; transfer: ArrayBuffer[] } {
  const p = r.parsed!;
  const { bytes: buf, text } = r;
  const body = p.body;
  if (!buf || text === undefined || buf.includes(13 /* \r */) || text.includes("\uFFFD")) return { row: [id, ftsTitle(p), body], transfer: [] };
  // With no CR the body is the text's tail, after a byte-order mark (one char, three bytes) and the frontmatter.
  const bom = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const start = bom * 3 + Buffer.byteLength(text.slice(bom, text.length - body.length));
  const owns = buf.byteOffset === 0 && buf.byteLength === buf.buffer.byteLength;
  const bytes = owns ? new Uint8Array(buf.buffer as ArrayBuffer, start) : new Uint8Array(buf.subarray(start));
  return { row: [id, ftsTitle(p), bytes], transfer: [bytes.buffer as ArrayBuffer] };
}

export function contentHash(content: string | Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(content).digest("hex");
}

/** Read, hash and parse one note. Runs in parse workers and, for small batches, inline. `keepBytes`: see ParseResult.bytes. */
export function readAndParse(root: string, req: ParseRequest, resolver?: LinkResolver, keepBytes = false): ParseResult {
  let buf: Buffer;
  try {
    buf = readFileSync(join(root, req.entry.path));
  } catch {
    return { entry: req.entry, hash: "", parsed: null, missing: true };
  }
  const hash = contentHash(buf);
  const entry = { ...req.entry, size: buf.length };
  if (hash === req.knownHash) return { entry, hash, parsed: null };
  const text = buf.toString("utf8");
  const parsed = parseNote(req.entry.path, text);
  const resolved = resolver ? parsed.links.map((l) => resolver.resolve(l, req.entry.path)) : undefined;
  return keepBytes ? { entry, hash, parsed, resolved, bytes: buf, text } : { entry, hash, parsed, resolved };
}

/**
 * Structured clone copies an object graph field by field; for a note's many
 * small link objects that cost more (on both threads) than the parse. One JSON
 * string per note crosses the thread boundary several times cheaper.
 */
export function packResult(r: ParseResult): ParseResult {
  if (!r.parsed) return r;
  const { body, ...rest } = r.parsed;
  // A body already with the full-text writer is not sent again.
  const packed = JSON.stringify([rest, r.resolved ?? null]);
  return { entry: r.entry, hash: r.hash, parsed: { body: r.ftsSent ? "" : body } as ParsedNote, packed, ftsSent: r.ftsSent };
}

export function unpackResult(r: ParseResult): ParseResult {
  if (r.packed === undefined || !r.parsed) return r;
  const [rest, resolved] = JSON.parse(r.packed) as [Omit<ParsedNote, "body">, (string | null)[] | null];
  return { entry: r.entry, hash: r.hash, parsed: { ...rest, body: r.parsed.body }, resolved: resolved ?? undefined, ftsSent: r.ftsSent };
}
