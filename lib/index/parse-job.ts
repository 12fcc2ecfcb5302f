import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseNote, type ParsedNote } from "../vault/parse";
import type { FileEntry } from "../vault/scan";
import type { LinkResolver } from "./resolver";

export interface ParseRequest {
  entry: FileEntry;
  knownHash: string | null; // skip parsing when the content hash is unchanged
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
}

export function contentHash(content: string | Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(content).digest("hex");
}

/** Read, hash and parse one note. Runs in parse workers and, for small batches, inline. */
export function readAndParse(root: string, req: ParseRequest, resolver?: LinkResolver): ParseResult {
  let buf: Buffer;
  try {
    buf = readFileSync(join(root, req.entry.path));
  } catch {
    return { entry: req.entry, hash: "", parsed: null, missing: true };
  }
  const hash = contentHash(buf);
  const entry = { ...req.entry, size: buf.length };
  if (hash === req.knownHash) return { entry, hash, parsed: null };
  const parsed = parseNote(req.entry.path, buf.toString("utf8"));
  const resolved = resolver ? parsed.links.map((l) => resolver.resolve(l, req.entry.path)) : undefined;
  return { entry, hash, parsed, resolved };
}

/**
 * Structured clone copies an object graph field by field; for a note's many
 * small link objects that cost more (on both threads) than the parse. One JSON
 * string per note crosses the thread boundary several times cheaper.
 */
export function packResult(r: ParseResult): ParseResult {
  if (!r.parsed) return r;
  const { body, ...rest } = r.parsed;
  return { entry: r.entry, hash: r.hash, parsed: { body } as ParsedNote, packed: JSON.stringify([rest, r.resolved ?? null]) };
}

export function unpackResult(r: ParseResult): ParseResult {
  if (r.packed === undefined || !r.parsed) return r;
  const [rest, resolved] = JSON.parse(r.packed) as [Omit<ParsedNote, "body">, (string | null)[] | null];
  return { entry: r.entry, hash: r.hash, parsed: { ...rest, body: r.parsed.body }, resolved: resolved ?? undefined };
}
