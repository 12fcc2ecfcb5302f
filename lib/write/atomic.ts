// The small primitives every write stands on: content hashes, temp names, a
// per-path lock, and the sweep of temp files a crash left. How a file is put
// in place (folders held by descriptor, verified exchange) is vault-dir.ts.
import { closeSync, fstatSync, lstatSync, openSync, readdirSync, readFileSync, unlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { ToolError } from "../errors";
import { ownStamp, pidAlive, processStamp, startOfStamp } from "../platform/pid";
import { nextTurn } from "../platform/turns";
import { contentHash } from "../index/parse-job";
import { foldName } from "../vault/paths";
import { READ_NOFOLLOW } from "../vault/read-file";
import { MAX_NOTE_FILE_BYTES } from "../vault/scan";

/**
 * Whether two paths name one file: a case-insensitive disk's spellings of one name
 * (`Note.md`, `note.md`). On a case-sensitive disk they are two notes (twins), and a
 * "case-only" rename between them would overwrite one with the other.
 */
export function sameInode(a: string, b: string): boolean {
  try {
    const x = lstatSync(a, { bigint: true });
    const y = lstatSync(b, { bigint: true });
    return x.ino === y.ino && x.dev === y.dev;
  } catch {
    return false;
  }
}

/** Content hash of a note: the index's own hash (read_note reports it), so an expectedHash always compares like with like. */
export const hashBytes = contentHash;

/** Bytes hashed between two turns of other callers (~3 ms). */
export const HASH_SLICE_BYTES = 4 * 1024 * 1024;

/**
 * hashBytes for bytes that may be big (a note on disk can be 64 MiB): in slices, with turns for other callers
 * between. Hashing a 30 MB note at once held every other caller ~25 ms.
 */
export async function hashInTurns(bytes: Uint8Array): Promise<string> {
  if (bytes.length <= HASH_SLICE_BYTES) return hashBytes(bytes);
  const hasher = new Bun.CryptoHasher("sha256");
  for (let at = 0; at < bytes.length; at += HASH_SLICE_BYTES) {
    if (at > 0) await nextTurn();
    hasher.update(bytes.subarray(at, at + HASH_SLICE_BYTES));
  }
  return hasher.digest("hex");
}

/** Absolute path of a vault-relative one. No safety checks: for paths the write path already validated or recorded. */
/** The vault-relative folder of a path ("" at the root) and its last name. */
export function splitRel(rel: string): { dir: string; name: string } {
  const i = rel.lastIndexOf("/");
  return i === -1 ? { dir: "", name: rel } : { dir: rel.slice(0, i), name: rel.slice(i + 1) };
}

export function absOf(root: string, rel: string): string {
  return join(root, ...rel.split("/"));
}

/**
 * A file too big to be a note (lib/vault/scan.ts) is not read into memory to be
 * edited, replaced or compared: the one refusal of every read on the write path.
 */
export function refuseIfNotNoteSized(name: string, size: number): void {
  if (size <= MAX_NOTE_FILE_BYTES) return;
  throw new ToolError("too-large", `${name} is ${size} bytes: files over ${MAX_NOTE_FILE_BYTES} bytes are not notes and are not rewritten`, {
    size,
    maxBytes: MAX_NOTE_FILE_BYTES,
  });
}


/** The file's bytes, or null when there is no regular file there (a link, a folder, a pipe); too-large past the size of a note. */
export function readBytes(abs: string): Buffer | null {
  let fd: number;
  try {
    fd = openSync(abs, READ_NOFOLLOW);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR" || code === "ELOOP") return null;
    throw e;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return null;
    refuseIfNotNoteSized(abs.split(/[\\/]/).pop()!, st.size);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Hash of what is on disk now, or null when the file is absent. A file too big to be a note has no hash any write made. */
export function diskHash(abs: string): string | null {
  try {
    const b = readBytes(abs);
    return b === null ? null : hashBytes(b);
  } catch (e) {
    if (e instanceof ToolError && e.kind === "too-large") return "(too large to be a note)";
    throw e;
  }
}

let tmpCounter = 0;

/** A hidden temp file name (hidden names are never indexed); it goes in the note's own folder, so that the rename is atomic. */
export function tempNameFor(): string {
  const start = startOfStamp(ownStamp());
  return `.lettuce-tmp-${process.pid}-${start === null ? "" : `t${start}-`}${Date.now().toString(36)}-${(tmpCounter++).toString(36)}`;
}

/**
 * Whether the process that named a temp file (`pid`, and its start when the name holds it) still runs: after a
 * reboot its pid soon belongs to another program, and a pid alone kept the file for as long as that ran.
 */
function namerAlive(pid: number, start: string | undefined): boolean {
  if (!pidAlive(pid)) return false;
  const now = start === undefined ? null : startOfStamp(processStamp(pid));
  return now === null || now === start;
}

/** A temp path beside `abs`. */
export function tempPathFor(abs: string): string {
  return join(dirname(abs), tempNameFor());
}

/**
 * Remove temp files a dead process left in the vault that no pending timeline
 * row explains (`isPending` says which are named by one; recoverTimeline
 * settles those). Run at start, so that nothing waits for the next write.
 */
export function sweepOrphanTemps(root: string, folders: string[], isPending: (rel: string) => boolean): number {
  let removed = 0;
  for (const folder of ["", ...folders]) {
    let names: string[];
    try {
      names = readdirSync(folder ? absOf(root, folder) : root);
    } catch {
      continue;
    }
    for (const name of names) {
      const m = /^\.lettuce-tmp-(\d+)-(?:t(\d+)-)?/.exec(name);
      if (!m) continue;
      const rel = folder ? `${folder}/${name}` : name;
      // This process's own (a temp file being written), unless a process before it had its pid (a reboot).
      const own = Number(m[1]) === process.pid && (m[2] === undefined || m[2] === startOfStamp(ownStamp()));
      if (own || (Number(m[1]) !== process.pid && namerAlive(Number(m[1]), m[2])) || isPending(rel)) continue;
      removeQuietly(absOf(root, rel));
      removed++;
    }
  }
  return removed;
}


export function removeQuietly(abs: string): void {
  try {
    unlinkSync(abs);
  } catch {
    /* already gone */
  }
}

/**
 * Serialise work per key (a note path) while different keys run in parallel.
 * A call that needs several keys takes them in sorted order, so two calls can
 * never wait on each other in a cycle.
 */
export class KeyedLock {
  private tails = new Map<string, Promise<void>>();

  async acquire(keys: Iterable<string>): Promise<() => void> {
    // One key for every spelling twin detection treats as one note (foldName: case and Unicode normalisation).
    const sorted = [...new Set([...keys].map(foldName))].sort();
    const releases: (() => void)[] = [];
    for (const k of sorted) releases.push(await this.acquireOne(k));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const r of releases.reverse()) r();
    };
  }

  private async acquireOne(key: string): Promise<() => void> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = prev.then(() => mine);
    this.tails.set(key, tail);
    await prev;
    return () => {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
  }

  /** Keys currently held or awaited (tests use it to check nothing leaks). */
  get size(): number {
    return this.tails.size;
  }
}
