// What the commit's check compares with the plan: the hash and identity of a
// file as it is now. A small file is read as it always was (VaultDir.read); a
// big one (a person's 30 MB note that write_note replaces, or a delete or move
// of it) is read off the event loop and hashed in turns: read and hashed at
// once, it held every other caller of the server ~50 ms, inside the commit.
// The check is as strong either way: every byte is read and hashed again, and
// a file written to while it was read counts as changed.
import { fstatSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { READ_NOFOLLOW } from "../vault/read-file";
import { HASH_SLICE_BYTES, hashBytes, hashInTurns, refuseIfNotNoteSized } from "./atomic";
import { identityOfFd, sameFile, type FileIdentity, type VaultDir } from "./vault-dir";

/** A file's state for the check: null hash when absent, "(symlink)" for a link (never followed). */
export interface DiskState {
  hash: string | null;
  id: FileIdentity | null;
}

/** The state of `name` in `d` now. */
export async function readHashed(d: VaultDir, name: string): Promise<DiskState> {
  const probe = d.identity(name);
  if (probe && probe.size > BigInt(HASH_SLICE_BYTES)) {
    const big = await readBigFile(d.entry(name), name);
    if (big) return { hash: big.hash, id: big.id };
  }
  // Small, absent, a link, a folder, a pipe: VaultDir.read's answer, as before.
  const r = d.read(name);
  return r === null ? { hash: null, id: null } : "symlink" in r ? { hash: "(symlink)", id: null } : { hash: hashBytes(r.bytes), id: r.id };
}

/**
 * A big regular file (`path` opened as every vault file is, never through a link) read off the event loop
 * and hashed in turns, with its identity: one written to while it was read (an in-place save) has a changed
 * identity, so it never passes for what was half-read. null when no regular file is there once opened (the
 * caller's synchronous read then says what is); too-large past the size of a note.
 */
export async function readBigFile(path: string, name: string): Promise<{ bytes: Buffer; hash: string; id: FileIdentity } | null> {
  let fh;
  try {
    fh = await open(path, READ_NOFOLLOW);
  } catch {
    return null;
  }
  let bytes: Buffer;
  let id: FileIdentity;
  try {
    if (!fstatSync(fh.fd).isFile()) return null;
    const before = identityOfFd(fh.fd);
    refuseIfNotNoteSized(name, Number(before.size));
    bytes = await readInSlices(fh, Number(before.size));
    const after = identityOfFd(fh.fd);
    id = sameFile(before, after) ? after : { ...after, mtimeNs: -1n };
  } finally {
    await fh.close();
  }
  return { bytes, hash: await hashInTurns(bytes), id };
}

/**
 * The first `size` bytes of an open file, read a slice at a time: Bun's FileHandle.readFile reads a 30 MB
 * file in one piece on the event loop (5-30 ms measured), where each slice's read is a few ms at most.
 */
async function readInSlices(fh: FileHandle, size: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(size);
  let off = 0;
  while (off < size) {
    const { bytesRead } = await fh.read(buf, off, Math.min(HASH_SLICE_BYTES, size - off), off);
    if (bytesRead === 0) break;
    off += bytesRead;
  }
  return buf.subarray(0, off);
}
