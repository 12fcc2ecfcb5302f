import { closeSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseNote, type ParsedNote } from "../vault/parse";
import type { FileEntry } from "../vault/scan";
import type { LinkResolver } from "./resolver";
import { MAX_INDEXED_ROWS } from "../store/index-db";
import { openRegular } from "../vault/read-file";
import { ngramText } from "../vault/ngram";
import { isMomentaryFault } from "../platform/io-faults";

export interface ParseRequest {
  entry: FileEntry;
  knownHash: string | null; // skip parsing when the content hash is unchanged
  /**
   * A cold bulk load: the note's id, chosen before parsing (the notes table is empty), so that a
   * parse worker can hand the full-text row straight to the full-text writer (see ftsRowOf).
   */
  ftsId?: number;
}

/**
 * A note this big is parsed in a worker (parse-pool.ts): parsing a 2 MiB note takes ~0.2 s, a 50 MB one
 * seconds, and inline that would pause every other caller of the server (the watcher and the write tools
 * index through there, on the request thread). Its full-text row is written by the full-text writer thread,
 * and its body crosses the threads as UTF-8 bytes (HugeBody).
 */
export const BIG_NOTE_BYTES = 256 * 1024;

/**
 * A big note's body for the full-text writer, as a parse worker sends it: UTF-8 in a buffer of its own,
 * handed from thread to thread without a copy, and its n-grams. As a string, a 20 MB body was copied into the
 * main thread and again out of it to the writer, holding every other caller ~50 ms.
 */
export interface HugeBody {
  utf8: Uint8Array;
  ngrams: string | null;
}

export interface ParseResult {
  entry: FileEntry;
  hash: string;
  parsed: ParsedNote | null; // null: unchanged content (only mtime moved) or unreadable
  /** resolvedPath per link, when the parser had a resolver (workers get a snapshot of the vault's names). */
  resolved?: (string | null)[];
  missing?: boolean;
  /** The full-text row went from the parse worker to the full-text writer: the main thread writes none (and gets no body). */
  ftsSent?: boolean;
  /** A big note's body for the full-text writer (the parsed note's body is then ""). */
  hugeBody?: HugeBody;
  /** The file as read and as decoded (parse workers keep them for ftsRowOf; never sent to the main thread). */
  bytes?: Buffer;
  text?: string;
}

/**
 * A full-text row: note id, title field, body (text, or the file's UTF-8 bytes from the body's start), and
 * the title's and body's n-grams (lib/vault/ngram.ts; null without text of scripts written without spaces).
 */
export type FtsRow = [number, string | null, string | Uint8Array | null, string | null, string | null];

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
  // Made here, in parallel across the parse workers, rather than by the one writer thread.
  const title = ftsTitle(p);
  const titleNg = ngramText(title);
  const bodyNg = ngramText(body);
  if (!buf || text === undefined || buf.includes(13 /* \r */) || text.includes("\uFFFD")) return { row: [id, title, body, titleNg, bodyNg], transfer: [] };
  // With no CR the body is the text's tail, after a byte-order mark (one char, three bytes) and the frontmatter.
  const bom = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const start = bom * 3 + Buffer.byteLength(text.slice(bom, text.length - body.length));
  const owns = buf.byteOffset === 0 && buf.byteLength === buf.buffer.byteLength;
  const bytes = owns ? new Uint8Array(buf.buffer as ArrayBuffer, start) : new Uint8Array(buf.subarray(start));
  return { row: [id, title, bytes, titleNg, bodyNg], transfer: [bytes.buffer as ArrayBuffer] };
}

export function contentHash(content: string | Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(content).digest("hex");
}

/** The rows a note makes, each kind cut at MAX_INDEXED_ROWS (lib/store/index-db.ts says why). */
function capIndexedRows(p: ParsedNote): ParsedNote {
  for (const list of [p.links, p.tags, p.headings, p.mentions, p.directives] as unknown[][]) if (list.length > MAX_INDEXED_ROWS) list.length = MAX_INDEXED_ROWS;
  return p;
}

/** Read, hash and parse one note. Runs in parse workers and, for small batches, inline. `keepBytes`: see ParseResult.bytes. */
export function readAndParse(root: string, req: ParseRequest, resolver?: LinkResolver, keepBytes = false): ParseResult {
  let buf: Buffer;
  try {
    // Only the regular file the scan saw: a FIFO swapped in since would block this thread on a plain read.
    const fd = openRegular(join(root, req.entry.path), req.entry.path);
    try {
      buf = readFileSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    if (isMomentaryFault(e)) throw e; // the note is there: the pass fails, and is tried again
    return { entry: req.entry, hash: "", parsed: null, missing: true };
  }
  const hash = contentHash(buf);
  const entry = { ...req.entry, size: buf.length };
  if (hash === req.knownHash) return { entry, hash, parsed: null };
  const text = buf.toString("utf8");
  const parsed = capIndexedRows(parseNote(req.entry.path, text));
  const resolved = resolver ? parsed.links.map((l) => resolver.resolve(l, req.entry.path)) : undefined;
  return keepBytes ? { entry, hash, parsed, resolved, bytes: buf, text } : { entry, hash, parsed, resolved };
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** A batch of parse results as a parse worker posts it to the main thread (see packBatch). */
export interface PackedBatch {
  /** The batch as JSON in UTF-8, in a buffer of its own (transferred, not copied). */
  packed: Uint8Array;
  /** Each note's body, or null where it went to the full-text writer already (or there is none). */
  bodies: (string | HugeBody | null)[];
}

/** The buffers of a batch to hand over rather than copy. */
export function batchTransfer(b: PackedBatch): ArrayBuffer[] {
  const out = [b.packed.buffer as ArrayBuffer];
  for (const body of b.bodies) if (body !== null && typeof body === "object") out.push(body.utf8.buffer as ArrayBuffer);
  return out;
}

/**
 * Structured clone copies an object graph field by field, and even one JSON
 * string per note (the previous form) spelt every link's eight keys out: 33 MB
 * of JSON for a 37 MB vault of 10k notes, ~0.3 s to write and ~0.5 s to clone.
 * A batch is now one JSON string of arrays (links and headings flattened, no
 * keys), about a third the size, and it crosses as UTF-8 bytes in a transferred
 * buffer: cloning the fresh JSON string cost 0.1-0.3 s per cold index, encoding
 * it a tenth of that. Bodies travel beside it as they are.
 */
export function packBatch(results: ParseResult[], idOf?: Map<string, number>): PackedBatch {
  const items: unknown[] = [];
  const bodies: (string | HugeBody | null)[] = [];
  for (const r of results) {
    const e = r.entry;
    const entry = [e.path, e.size, e.mtimeMs, e.ctimeMs, e.changeMs];
    const p = r.parsed;
    if (!p) {
      items.push(r.missing ? [0, entry] : [1, entry, r.hash]);
      bodies.push(null);
      continue;
    }
    const links: unknown[] = [];
    for (const l of p.links) links.push(l.target, l.targetKey, l.display, l.kind === "wikilink" ? 0 : 1, l.heading, l.block, l.embed ? 1 : 0, l.line);
    const headings: unknown[] = [];
    for (const h of p.headings) headings.push(h.level, h.title, h.id, h.line);
    // On a bulk load every note's id is known: a link resolved to a note travels as that id (a
    // third of the batch's bytes were resolved paths, spelt out again for every link).
    const resolved = r.resolved && idOf ? r.resolved.map((t) => (t === null ? null : (idOf.get(t) ?? t))) : r.resolved;
    items.push([2, entry, r.hash, r.ftsSent ? 1 : 0, p.title, p.frontmatter, p.frontmatterError, p.tags, p.aliases, links, headings, p.directives, p.mentions, resolved ?? null]);
    // A body already with the full-text writer is not sent again.
    bodies.push(r.ftsSent ? null : e.size >= BIG_NOTE_BYTES ? { utf8: utf8.encode(p.body), ngrams: ngramText(p.body) } : p.body);
  }
  return { packed: utf8.encode(JSON.stringify(items)), bodies };
}

/** `idPaths[id - 1]`: the path of the note with that id (packBatch's idOf the other way round). */
export function unpackBatch(b: PackedBatch, idPaths?: string[]): ParseResult[] {
  const items = JSON.parse(fromUtf8.decode(b.packed)) as unknown[][];
  return items.map((it, i) => {
    const [path, size, mtimeMs, ctimeMs, changeMs] = it[1] as [string, number, number, number, number];
    const entry: FileEntry = { path, size, mtimeMs, ctimeMs, changeMs };
    if (it[0] === 0) return { entry, hash: "", parsed: null, missing: true };
    if (it[0] === 1) return { entry, hash: it[2] as string, parsed: null };
    const [, , hash, ftsSent, title, frontmatter, frontmatterError, tags, aliases, lf, hf, directives, mentions, resolved] = it as [
      number, unknown, string, number, string, Record<string, unknown>, string | null, string[], string[], unknown[], unknown[],
      ParsedNote["directives"], ParsedNote["mentions"], (string | number | null)[] | null,
    ];
    if (resolved && idPaths) for (let k = 0; k < resolved.length; k++) if (typeof resolved[k] === "number") resolved[k] = idPaths[(resolved[k] as number) - 1]!;
    const links: ParsedNote["links"] = [];
    for (let k = 0; k < lf.length; k += 8) {
      links.push({
        target: lf[k] as string,
        targetKey: lf[k + 1] as string,
        display: lf[k + 2] as string | null,
        kind: lf[k + 3] === 0 ? "wikilink" : "markdown",
        heading: lf[k + 4] as string | null,
        block: lf[k + 5] as string | null,
        embed: lf[k + 6] === 1,
        line: lf[k + 7] as number,
      });
    }
    const headings: ParsedNote["headings"] = [];
    for (let k = 0; k < hf.length; k += 4) headings.push({ level: hf[k] as number, title: hf[k + 1] as string, id: hf[k + 2] as string, line: hf[k + 3] as number });
    const body = b.bodies[i] ?? "";
    const parsed: ParsedNote = { title, frontmatter, frontmatterError, tags, aliases, links, headings, directives, mentions, body: typeof body === "string" ? body : "" };
    const out: ParseResult = { entry, hash, parsed, resolved: (resolved as (string | null)[] | null) ?? undefined, ftsSent: ftsSent === 1 };
    if (typeof body !== "string") out.hugeBody = body;
    return out;
  });
}
