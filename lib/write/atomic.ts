// The two primitives every write stands on: a per-path lock, and a file
// replaced atomically (temp file in the same folder, fsync, rename), so that
// a reader, an editor or a crash only ever sees the old bytes or the new ones.
import { mkdirSync, readFileSync, statSync, unlinkSync } from "node:fs";
import { open } from "node:fs/promises";
import { dirname, join } from "node:path";
import { contentHash } from "../index/parse-job";

/** Content hash of a note: the index's own hash (read_note reports it), so an expectedHash always compares like with like. */
export const hashBytes = contentHash;

/** Absolute path of a vault-relative one. No safety checks: for paths the write path already validated or recorded. */
export function absOf(root: string, rel: string): string {
  return join(root, ...rel.split("/"));
}

/** The file's bytes, or null when there is no regular file there. */
export function readBytes(abs: string): Buffer | null {
  try {
    return readFileSync(abs);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR") return null;
    throw e;
  }
}

/** Hash of what is on disk now, or null when the file is absent. */
export function diskHash(abs: string): string | null {
  const b = readBytes(abs);
  return b === null ? null : hashBytes(b);
}

let tmpCounter = 0;

/** A hidden temp name beside `abs`: hidden names are never indexed, and the same folder makes rename atomic. */
export function tempPathFor(abs: string): string {
  return join(dirname(abs), `.lettuce-tmp-${process.pid}-${Date.now().toString(36)}-${(tmpCounter++).toString(36)}`);
}

/**
 * Write `data` to a new temp file beside `abs` and fsync it. The caller renames
 * it into place (after its last check) or removes it. Keeps the mode of the
 * file it will replace, so an executable or read-only bit is not lost.
 */
export async function writeTemp(abs: string, data: Uint8Array, tmp: string = tempPathFor(abs)): Promise<string> {
  mkdirSync(dirname(abs), { recursive: true });
  let mode = 0o644;
  try {
    mode = statSync(abs).mode & 0o7777;
  } catch {
    /* a new file */
  }
  const fh = await open(tmp, "wx", mode);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } catch (e) {
    await fh.close().catch(() => {});
    removeQuietly(tmp);
    throw e;
  }
  await fh.close();
  return tmp;
}

/** fsync a folder so that a rename in it survives a power cut, not just a process crash. */
export async function fsyncDir(dir: string): Promise<void> {
  let fh;
  try {
    fh = await open(dir, "r");
    await fh.sync();
  } catch {
    /* some filesystems refuse fsync on a directory; the rename is still atomic */
  } finally {
    await fh?.close().catch(() => {});
  }
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
    const sorted = [...new Set([...keys].map((k) => k.toLowerCase()))].sort();
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
