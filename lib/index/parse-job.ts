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
