// sqlite-vec for this platform. From source it is the npm package
// sqlite-vec-<os>-<arch>; inside a compiled binary compile.sh embeds the
// target's build (found by name in Bun.embeddedFiles), which dlopen cannot
// read from the binary, so it is unpacked once into the per-user, versioned
// cache folder (lib/platform/cache-dir.ts checks that folder and file before
// anything is loaded). When it cannot load, vectors go to plain tables
// (lib/store/vector-storage.ts) and everything still works.
import type { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { unpackEmbedded } from "../platform/cache-dir";
import { isCompiled } from "../platform/embedded";

/** The npm package and file name of sqlite-vec's build for a platform. */
export function vecPackage(platform: string = process.platform, arch: string = process.arch): { pkg: string; file: string } {
  const os = platform === "win32" ? "windows" : platform;
  const ext = platform === "darwin" ? "dylib" : platform === "win32" ? "dll" : "so";
  return { pkg: `sqlite-vec-${os}-${arch}`, file: `vec0.${ext}` };
}

export const EMBEDDED_VEC = /^vec0(-[a-z0-9]+)?\.(so|dylib|dll)$/;

let loadablePath: string | null = null;
let loadError: string | null = null;
let prepared = false;

function locate(): string {
  const { pkg, file } = vecPackage();
  if (isCompiled()) {
    const unpacked = unpackEmbedded(EMBEDDED_VEC, file);
    if (!unpacked) throw new Error(`this binary carries no sqlite-vec build (${pkg})`);
    return unpacked;
  }
  let p: string;
  try {
    p = createRequire(import.meta.url).resolve(`${pkg}/${file}`);
  } catch {
    throw new Error(`the npm package ${pkg} is not installed (sqlite-vec ships no build for ${process.platform}-${process.arch} there)`);
  }
  if (!existsSync(p)) throw new Error(`${p} is missing`);
  return p;
}

/** A loadable copy of sqlite-vec (unpacked once per process), or null with the reason in error(). */
function prepare(): string | null {
  if (prepared) return loadablePath;
  prepared = true;
  try {
    loadablePath = locate();
  } catch (e) {
    loadError = `sqlite-vec unavailable: ${(e as Error).message}`;
  }
  return loadablePath;
}

/** Load sqlite-vec into a connection; returns its version, or null (with the reason in error()). */
function load(db: Database): string | null {
  const p = prepare();
  if (!p) return null;
  try {
    db.loadExtension(p, "sqlite3_vec_init");
    return (db.query("SELECT vec_version() AS v").get() as { v: string }).v;
  } catch (e) {
    loadError = `sqlite-vec failed to load: ${(e as Error).message}`;
    return null;
  }
}

export const loadSqliteVec = { prepare, load, error: () => loadError, path: () => loadablePath };
