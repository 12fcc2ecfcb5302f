import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseNote, type ParsedNote } from "../vault/parse";
import type { FileEntry } from "../vault/scan";

export interface ParseRequest {
  entry: FileEntry;
  knownHash: string | null; // skip parsing when the content hash is unchanged
}

export interface ParseResult {
  entry: FileEntry;
  hash: string;
  parsed: ParsedNote | null; // null: unchanged content (only mtime moved) or unreadable
  missing?: boolean;
}

export function contentHash(content: string | Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(content).digest("hex");
}

/** Read, hash and parse one note. Runs in parse workers and, for small batches, inline. */
export function readAndParse(root: string, req: ParseRequest): ParseResult {
  let buf: Buffer;
  try {
    buf = readFileSync(join(root, req.entry.path));
  } catch {
    return { entry: req.entry, hash: "", parsed: null, missing: true };
  }
  const hash = contentHash(buf);
  const entry = { ...req.entry, size: buf.length };
  if (hash === req.knownHash) return { entry, hash, parsed: null };
  return { entry, hash, parsed: parseNote(req.entry.path, buf.toString("utf8")) };
}
