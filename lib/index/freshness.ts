import type { Database } from "bun:sqlite";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { getMeta, lettuceDir } from "../store/index-db";
import { fmix } from "../platform/change-stamp";
import { startFingerprintWalk } from "../platform/fingerprint-walk";
import { NEVER_INDEXED_NAMES } from "../vault/paths";
import { visitVaultFiles } from "../vault/scan";

// Is the index exactly the disk? The question a CLI search asks before it reads
// the index without a `serve` keeping it current. The answer is exact: it makes
// the comparison Indexer.fullScan makes to decide what to re-read — every
// note's and attachment's path, size, mtime and st_ctime (lstat, symlinks not
// followed; the status change time catches an edit that kept size and mtime),
// and nothing indexed gone — and a "no" costs nothing extra: the caller then
// runs the full scan, which indexes.
//
// Every file is lstat'ed. A folder's mtime changes when entries are added,
// removed or renamed in it, but not when a file in it is saved in place (what
// Obsidian does), so folder mtimes alone cannot tell that a note changed.
// Measured (10k notes, 2 cores, loaded): an lstat by full path costs ~5 µs in C
// as in Bun, and ~10k of them were the floor of an exact check; a statx relative
// to the open folder costs about half (visitVaultFiles uses it on Linux).
//
// What is compared is a fingerprint of the (path, size, mtime, ctime) set on each
// side: a count and two sums of 32-bit hashes, one term per file (sums, so
// the walk's order does not matter). The index's side is read from SQLite
// once per index generation (the `gen` every index transaction writes) and
// kept in .lettuce/fresh.json: reading 10k rows cost ~35 ms at each start,
// more than the comparison itself. Two independent 32-bit sums make a false
// "unchanged" after a change a ~2^-64 chance. A file's term is its path's
// xxHash32 with the size's and both times' bits mixed in by murmur3's
// finaliser (no string is built per file). lib/platform/fingerprint-walk.c
// computes the same terms natively (Linux): change both or neither.

const CACHE_FILE = "fresh.json";

export interface Fingerprint {
  count: number;
  a: number;
  b: number;
}

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);

class Summer implements Fingerprint {
  count = 0;
  a = 0;
  b = 0;
  add(path: string, size: number, mtime: number, change: number | null): void {
    // The path through one native hash; size and the two times' 64 bits mixed in with arithmetic (no string built).
    const p = Bun.hash.xxHash32(path, 0);
    f64[0] = change ?? 0; // an index row from before the column: never a file's st_ctime, so it differs
    const c = fmix(u32[0]! ^ fmix(u32[1]! ^ 0x27d4eb2f));
    f64[0] = mtime;
    const lo = u32[0]!;
    const hi = u32[1]!;
    const sz = size >>> 0;
    const szHi = Math.floor(size / 4294967296) >>> 0;
    this.count++;
    this.a = (this.a + fmix(p ^ fmix(lo ^ fmix(hi ^ fmix(sz ^ fmix(szHi ^ c ^ 0x2545f491)))))) >>> 0;
    this.b = (this.b + fmix(fmix(p ^ 0x9e3779b9) ^ fmix(sz ^ fmix(hi ^ fmix(lo ^ fmix(szHi ^ fmix(c ^ 0x61c88647))))))) >>> 0;
  }
}

/** The fingerprint of what the index holds; null when it cannot be read in one consistent pass. */
function indexFingerprint(db: Database): { gen: string | null; fp: Fingerprint } {
  const s = new Summer();
  let gen: string | null = null;
  // One read transaction: the generation and the rows it names, with no commit from another process between.
  db.transaction(() => {
    gen = getMeta(db, "gen");
    for (const table of ["notes", "files"]) {
      for (const [path, size, mtime, chg] of db.query(`SELECT path, size, mtime, chg FROM ${table}`).values() as [string, number, number, number | null][]) s.add(path, size, mtime, chg);
    }
  })();
  return { gen, fp: s };
}

// Bumped when the fingerprint's computation changes: a cache of another version is not used.
const CACHE_VERSION = 3; // 2: st_ctime joined the terms; 3: the inode joined st_ctime (change-stamp.ts)

function sameFingerprint(x: Fingerprint, y: Fingerprint): boolean {
  return x.count === y.count && x.a === y.a && x.b === y.b;
}

function readCache(file: string, gen: string | null): Fingerprint | null {
  try {
    const c = JSON.parse(readFileSync(file, "utf8")) as { v?: unknown; gen?: unknown; count?: unknown; a?: unknown; b?: unknown };
    if (gen !== null && c.v === CACHE_VERSION && c.gen === gen && typeof c.count === "number" && typeof c.a === "number" && typeof c.b === "number") return c as Fingerprint;
  } catch {
    /* none yet, or unreadable */
  }
  return null;
}

function writeCache(file: string, gen: string, fp: Fingerprint): void {
  try {
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ v: CACHE_VERSION, gen, count: fp.count, a: fp.a, b: fp.b }));
    renameSync(tmp, file);
  } catch {
    /* a read-only .lettuce: computed again next time */
  }
}

/** The fingerprint of the vault's files as fullScan lists them (the scan's own walk and rules). */
export function diskFingerprint(root: string): Fingerprint {
  return startDiskFingerprint(root).get();
}

export interface PendingFingerprint {
  /** The fingerprint: waits for the native walk, or walks in JavaScript where there is none (once). */
  get(): Fingerprint;
  /** Waits for the native walk's threads, walking nothing more: for a caller that no longer needs the answer. */
  settle(): void;
}

/** The same, started now: on Linux the walk runs on native threads meanwhile (the CLI searches while it runs). */
export function startDiskFingerprint(root: string): PendingFingerprint {
  // Dot-names it skips on its own.
  const native = startFingerprintWalk(root, NEVER_INDEXED_NAMES);
  let fp: Fingerprint | undefined;
  return {
    get: () => (fp ??= native?.() ?? diskFingerprintJs(root)),
    settle: () => void native?.(),
  };
}

/** The same by scan.ts's walk itself (where the native walk is not available). */
export function diskFingerprintJs(root: string): Fingerprint {
  const s = new Summer();
  visitVaultFiles(root, (rel, size, mtimeMs, changeMs) => s.add(rel, size, mtimeMs, changeMs));
  return s;
}

/** True when every note and attachment on disk matches the index and every indexed file is still there. */
export function indexMatchesDisk(root: string, db: Database, disk: Fingerprint = diskFingerprint(root)): boolean {
  const file = join(lettuceDir(root), CACHE_FILE);
  const cached = readCache(file, getMeta(db, "gen"));
  if (cached && sameFingerprint(cached, disk)) return true;
  // No cache of this generation, or a difference: the index itself decides (a cache is only a
  // shortcut, so a wrong one costs one read of the rows, never a wrong answer or a stale "no").
  const fresh = indexFingerprint(db);
  if (fresh.gen !== null) writeCache(file, fresh.gen, fresh.fp);
  return sameFingerprint(fresh.fp, disk);
}
