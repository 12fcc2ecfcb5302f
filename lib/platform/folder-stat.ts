// Size and modification time of every entry of a folder, by statx(2) relative
// to the folder's descriptor, through bun:ffi (Linux, glibc). An exact check
// of a vault's freshness stats every file, and on these machines the stat is
// the cost: a 10k-note vault took ~75 ms of lstatSync (a full path walked
// from the root for each, and a Stats object built) against ~37 ms this way
// (one path component per call, two numbers read from a reused buffer),
// measured side by side under the same load. Elsewhere (macOS, Windows, musl,
// a kernel or sandbox that refuses statx) the folder's entries are lstat'ed by
// path: the same answers, more slowly.
//
// scan.ts's walk uses it for every listing (the server's start-up scan, `lettuce
// index`, the CLI's freshness check), so one walk decides what a listing holds.
import { dlopen, FFIType, ptr } from "bun:ffi";
import { closeSync, constants, lstatSync, openSync } from "node:fs";
import { sep } from "node:path";
import { changeStamp } from "./change-stamp";

export const ENTRY_FILE = 1;
export const ENTRY_DIR = 2;
export const ENTRY_OTHER = 0;

/** One entry's stat, in a record reused by the next call: read it before stat'ing again. */
export interface EntryStat {
  kind: number;
  size: number;
  mtimeMs: number;
  /** The birth time where the file system keeps one, else the ctime: what scan.ts keeps from lstatSync. */
  ctimeMs: number;
  /** The status change time (st_ctime): moves on every write and cannot be set back, unlike the mtime. */
  changeMs: number;
}

/** A folder opened for statting its entries by name (not following symlinks). */
export interface StatFolder {
  /** null when the name vanished or cannot be stat'ed. */
  stat(name: string): EntryStat | null;
  close(): void;
}

const AT_FDCWD = -100;
const AT_SYMLINK_NOFOLLOW = 0x100;
const AT_NO_AUTOMOUNT = 0x800;
const STATX_TYPE = 0x1;
const STATX_MTIME = 0x40;
const STATX_CTIME = 0x80;
const STATX_INO = 0x100;
const STATX_SIZE = 0x200;
const STATX_BTIME = 0x800;
const WANTED = STATX_TYPE | STATX_MTIME | STATX_CTIME | STATX_INO | STATX_SIZE;
const S_IFMT = 0o170000;

type StatAt = (dirfd: number, name: string) => EntryStat | null;
let loaded: StatAt | null | undefined;

/** Whether entries are stat'ed by statx here (else by lstatSync). */
export function statxAvailable(): boolean {
  if (loaded === undefined) loaded = load();
  return loaded !== null;
}

/**
 * A file's change stamp (change-stamp.ts) by path, the way the scan's statx and the C walk compute it. Bun's
 * Stats cap an inode at 2^63 - 1 (some network file systems' ids are larger): stamped from lstatSync, such
 * files never matched the scan's stamp and were read again on every pass (review of 2026-12-05).
 */
export function changeStampOf(abs: string, ctimeMs: number, ino: number): number {
  if (statxAvailable()) {
    const st = loaded!(AT_FDCWD, abs);
    if (st) return st.changeMs;
  }
  return changeStamp(ctimeMs, ino);
}

const GONE = new Set(["ENOENT", "ENOTDIR", "ELOOP", "EACCES", "EPERM", "ENAMETOOLONG"]);

/**
 * Whether an error listing or opening a folder means the folder is not there for us (vanished, now a file or
 * a symlink, not readable by this user, a path too long to open): its files are not in the vault as we see it.
 * Anything else (no file descriptors left, no memory, an I/O error) is a fault of the moment, and a scan that
 * went on past it took every note under the folder for deleted: one `touch` of the vault at the descriptor
 * limit emptied an index of 6,572 notes (the limits audit of 2026-12-05).
 */
export function folderIsGone(e: unknown): boolean {
  return GONE.has((e as { code?: string } | null)?.code ?? "");
}

/** Open a folder to stat its entries by name; null when the folder is gone (folderIsGone); throws on a fault of the moment. */
export function openStatFolder(dirAbs: string): StatFolder | null {
  if (!statxAvailable()) return lstatFolder(dirAbs);
  let fd: number;
  try {
    // O_NOFOLLOW: a folder swapped for a symlink since it was listed is not entered.
    fd = openSync(dirAbs, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (e) {
    if (folderIsGone(e)) return null;
    throw e;
  }
  const statAt = loaded!;
  return { stat: (name) => statAt(fd, name), close: () => closeSync(fd) };
}

/** The portable way: lstat each entry by its full path. */
function lstatFolder(dirAbs: string): StatFolder {
  const out: EntryStat = { kind: ENTRY_OTHER, size: 0, mtimeMs: 0, ctimeMs: 0, changeMs: 0 };
  return {
    stat(name) {
      let st;
      try {
        st = lstatSync(dirAbs + sep + name, { throwIfNoEntry: false });
      } catch {
        return null;
      }
      if (!st) return null;
      out.kind = st.isFile() ? ENTRY_FILE : st.isDirectory() ? ENTRY_DIR : ENTRY_OTHER;
      out.size = st.size;
      out.mtimeMs = st.mtimeMs;
      out.ctimeMs = st.birthtimeMs || st.ctimeMs;
      out.changeMs = changeStamp(st.ctimeMs, st.ino);
      return out;
    },
    close() {},
  };
}

function load(): StatAt | null {
  if (process.platform !== "linux" || process.env.LETTUCE_NO_STATX === "1") return null;
  let statx: (dirfd: number, path: unknown, flags: number, mask: number, buf: unknown) => number;
  try {
    const lib = dlopen("libc.so.6", { statx: { args: [FFIType.i32, FFIType.ptr, FFIType.i32, FFIType.u32, FFIType.ptr], returns: FFIType.i32 } });
    statx = lib.symbols.statx as unknown as typeof statx;
  } catch {
    return null; // musl, or a glibc older than 2.28
  }
  // struct statx is 256 bytes with the same layout on every Linux architecture.
  const buf = new Uint8Array(256);
  const view = new DataView(buf.buffer);
  const name = new Uint8Array(4096);
  const bufPtr = ptr(buf);
  const namePtr = ptr(name);
  const encoder = new TextEncoder();
  const flags = AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT;
  const out: EntryStat = { kind: ENTRY_OTHER, size: 0, mtimeMs: 0, ctimeMs: 0, changeMs: 0 };
  // As Node and Bun compute Stats' *Ms fields (seconds × 1e3 + nanoseconds / 1e6), so both sides compare equal.
  const ms = (at: number) => (view.getUint32(at, true) + view.getInt32(at + 4, true) * 4294967296) * 1e3 + view.getUint32(at + 8, true) / 1e6;
  const statAt: StatAt = (dirfd, entry) => {
    const { written } = encoder.encodeInto(entry, name);
    if (written === undefined || written >= name.length - 1) return null;
    name[written] = 0;
    if (statx(dirfd, namePtr, flags, WANTED | STATX_BTIME, bufPtr) !== 0) return null;
    const mask = view.getUint32(0, true);
    if ((mask & WANTED) !== WANTED) return null;
    const type = view.getUint16(28, true) & S_IFMT;
    out.kind = type === 0o100000 ? ENTRY_FILE : type === 0o040000 ? ENTRY_DIR : ENTRY_OTHER;
    out.size = view.getUint32(40, true) + view.getUint32(44, true) * 4294967296;
    out.mtimeMs = ms(112);
    const birth = mask & STATX_BTIME ? ms(80) : 0;
    out.ctimeMs = birth || ms(96);
    out.changeMs = changeStamp(ms(96), view.getUint32(32, true) + view.getUint32(36, true) * 4294967296);
    return out;
  };
  // A seccomp filter or an old kernel refuses statx: find out once.
  return statAt(AT_FDCWD, "/") ? statAt : null;
}
