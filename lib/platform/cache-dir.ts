// Where a binary puts the files it must unpack before use (the sqlite-vec
// library and the freshness walk, which dlopen and TinyCC cannot read from
// inside the binary): a
// per-user cache folder with the version in its name. Never a shared /tmp path:
// another user could pre-create it and plant a library for us to load, so the
// folder and the file are checked (ours, a real folder/file, not a symlink, not
// writable by others, the exact bytes we embedded) before anything is loaded.
import { closeSync, fsyncSync, lstatSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, rmSync, writeSync, constants as fsc } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, posix, win32 } from "node:path";
import { VERSION } from "../version";
import { embeddedFiles } from "./embedded";

type Env = Record<string, string | undefined>;

/** The per-user cache root for this platform (before the version folder). Pure: tests call it with other platforms. */
export function userCacheRoot(platform: NodeJS.Platform = process.platform, env: Env = process.env, home: string = homedir()): string {
  if (env.LETTUCE_CACHE_DIR) return env.LETTUCE_CACHE_DIR;
  if (platform === "win32") return win32.join(env.LOCALAPPDATA || win32.join(home, "AppData", "Local"), "lettuce", "cache");
  if (platform === "darwin") return posix.join(home, "Library", "Caches", "lettuce");
  const xdg = env.XDG_CACHE_HOME;
  // XDG says a relative XDG_CACHE_HOME is invalid and must be ignored.
  return posix.join(xdg && xdg.startsWith("/") ? xdg : posix.join(home, ".cache"), "lettuce");
}

/** This build's folder in the cache: the version (and target) in its name, so versions never share files. */
export function versionedCacheDir(env: Env = process.env): string {
  return join(userCacheRoot(process.platform, env), `${VERSION}-${process.platform}-${process.arch}`);
}

export class UnsafeCacheError extends Error {}

const POSIX = process.platform !== "win32";
const uid = () => (POSIX && typeof process.getuid === "function" ? process.getuid() : -1);

/**
 * Refuse a folder or file that is a symlink, of the wrong type, owned by
 * another user, or writable by group/others. (On Windows the per-user
 * %LOCALAPPDATA% is protected by its ACL and modes mean little: only the type
 * and symlink checks apply there.)
 */
export function checkOwned(path: string, kind: "dir" | "file"): void {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) throw new UnsafeCacheError(`${path} is a symbolic link`);
  if (kind === "dir" ? !st.isDirectory() : !st.isFile()) throw new UnsafeCacheError(`${path} is not a ${kind === "dir" ? "folder" : "regular file"}`);
  if (!POSIX) return;
  if (st.uid !== uid()) throw new UnsafeCacheError(`${path} belongs to another user (uid ${st.uid})`);
  if (st.mode & 0o022) throw new UnsafeCacheError(`${path} is writable by other users (mode ${(st.mode & 0o777).toString(8)})`);
}

/**
 * Whoever can write a folder's parent can swap the folder for another, so
 * every folder above the cache must belong to us or root and be writable by
 * nobody else, unless it has the sticky bit (like /tmp), where others cannot
 * rename what is ours.
 */
function checkAncestors(real: string): void {
  if (!POSIX) return;
  for (let d = dirname(real); ; d = dirname(d)) {
    const st = lstatSync(d);
    if (st.uid !== uid() && st.uid !== 0) throw new UnsafeCacheError(`${d} (above the cache folder) belongs to another user (uid ${st.uid})`);
    if (st.mode & 0o022 && !(st.mode & 0o1000)) throw new UnsafeCacheError(`${d} (above the cache folder) is writable by other users`);
    if (d === dirname(d)) return;
  }
}

/** Create (mode 0700) and check a cache folder; the checks also run on one that already existed. Returns its real path. */
export function secureDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  checkOwned(dir, "dir");
  const real = realpathSync(dir);
  checkAncestors(real);
  return real;
}

export function sha256(bytes: Uint8Array): string {
  // Bun's hasher, not node:crypto: importing node:crypto costs ~20 ms of start-up in every CLI command that opens the index.
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}

/**
 * Put `bytes` in the versioned cache folder under `name` and return its path,
 * after checking that what is there now is exactly those bytes in a safe file.
 * A wrong or missing copy is replaced through a fresh temp file and a rename.
 */
export function unpackToCache(name: string, bytes: Uint8Array, dir: string = versionedCacheDir()): string {
  const dest = join(secureDir(dir), name);
  const want = sha256(bytes);
  try {
    checkOwned(dest, "file");
    if (sha256(readFileSync(dest)) === want) return dest;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT" && !(e instanceof UnsafeCacheError)) throw e;
  }
  const tmp = join(dirname(dest), `.${name}.${process.pid}.${Date.now()}.tmp`);
  // O_EXCL: never write through a file (or symlink) someone else put there.
  const fd = openSync(tmp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL, 0o600);
  try {
    writeSync(fd, bytes);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, dest);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  checkOwned(dest, "file");
  if (sha256(readFileSync(dest)) !== want) throw new UnsafeCacheError(`${dest} changed while it was being written`);
  return dest;
}

/**
 * A file embedded in this binary (its path inside, or the first whose name matches), unpacked into
 * the versioned cache as `name` by unpackToCache; null when the binary carries no such file.
 */
export function unpackEmbedded(file: string | RegExp, name: string): string | null {
  const path = typeof file === "string" ? file : embeddedFiles(file)[0]?.path;
  return path ? unpackToCache(name, readFileSync(path)) : null;
}
