import type { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
// Imported as a file so that `bun build --compile` embeds the extension in the binary.
import embeddedVec from "../../node_modules/sqlite-vec-linux-x64/vec0.so" with { type: "file" };

let loadablePath: string | null = null;
let loadError: string | null = null;

/**
 * Find a loadable copy of sqlite-vec. Inside a compiled binary the embedded
 * file lives under /$bunfs and cannot be dlopen'ed, so it is copied to a
 * temp file first (once per version; later starts reuse it).
 */
function prepare(): string | null {
  if (loadablePath || loadError) return loadablePath;
  try {
    const src = embeddedVec as unknown as string;
    if (!src.startsWith("/$bunfs") && !src.startsWith("B:/~BUN") && existsSync(src)) {
      loadablePath = src;
      return src;
    }
    const size = statSync(src).size;
    const dir = join(tmpdir(), `lettuce-vec-${size}`);
    const dest = join(dir, "vec0.so");
    if (!existsSync(dest) || statSync(dest).size !== size) {
      mkdirSync(dir, { recursive: true });
      const tmp = `${dest}.${process.pid}.tmp`;
      // Not copyFileSync: Bun cannot copy out of /$bunfs (ENOENT), but it can read from it.
      writeFileSync(tmp, readFileSync(src));
      renameSync(tmp, dest);
    }
    loadablePath = dest;
  } catch (e) {
    loadError = `sqlite-vec unavailable: ${(e as Error).message}`;
  }
  return loadablePath;
}

/** Load sqlite-vec into a connection; returns its version, or null (with the reason in vecError()). */
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

export const loadSqliteVec = { prepare, load, error: () => loadError };
