// doctor's checks of what .lettuce/ holds: the index, state.db and the embeddings cache, and whether a
// store that cannot be opened is damaged or only out of this user's reach (lib/cli/doctor.ts runs them).
import { Database } from "bun:sqlite";
import { accessSync, constants as fsConstants, existsSync } from "node:fs";
import { join } from "node:path";
import { CACHE_SCHEMA_VERSION } from "../semantic/cache";
import { indexDbPath, lettuceDir } from "../store/index-db";
import { inspectIndex } from "../store/inspect";
import { schemaVersion } from "../store/migrate";
import { STATE_MIGRATIONS, stateDbPath } from "../store/state-db";
import type { Check } from "./doctor";

export function indexChecks(root: string, notesOnDisk: number, storageNow: string, out: Check[]): { model: string | null; dim: number | null } {
  const ix = inspectIndex(root);
  if (!ix.exists) {
    out.push({ check: "index", status: "warn", detail: "not built yet", fix: `run \`lettuce index ${root}\`, or just \`lettuce serve ${root}\`, which builds it` });
    return { model: null, dim: null };
  }
  if (ix.error) {
    const access = accessProblem(root, ix.error);
    out.push(
      access
        ? { check: "index", status: "fail", detail: `index.db cannot be opened here: ${access}`, fix: ACCESS_FIX }
        : { check: "index", status: "fail", detail: `index.db cannot be read: ${ix.error}`, fix: `stop Lettuce and delete ${indexDbPath(root)}; it is rebuilt from the notes (embeddings are kept in embeddings.db)` },
    );
    return { model: null, dim: null };
  }
  const behind = ix.notes !== notesOnDisk;
  out.push({
    check: "index",
    status: behind ? "warn" : "ok",
    detail: `${ix.notes} notes indexed (${notesOnDisk} on disk), format ${ix.format ?? "?"}${ix.format && ix.format !== ix.currentFormat ? ` (this Lettuce uses ${ix.currentFormat}: it will rebuild it)` : ""}`,
    ...(behind ? { fix: `run \`lettuce index ${root}\` (a running \`lettuce serve\` catches up by itself)` } : {}),
  });
  if (ix.vectorStorage && ix.vectorStorage !== storageNow) {
    out.push({ check: "index", status: "info", detail: `vectors were stored with ${ix.vectorStorage}; this machine gets ${storageNow}: the next start moves them (from the embeddings cache, nothing is embedded again)` });
  }
  if (ix.embedModel) out.push({ check: "index", status: "info", detail: `${ix.embeddedNotes} notes embedded with ${ix.embedModel}${ix.embedDim ? ` (${ix.embedDim}-d)` : ""}` });
  return { model: ix.embedModel, dim: ix.embedDim };
}

// A store that cannot be opened because of where it is (a read-only file system, another user's folder) is
// not damaged: doctor told such a person to delete index.db and move state.db aside, and following that
// after remounting threw away their tokens, timeline, proposals and audit log (the lifecycle audit).
const ACCESS_FIX = "nothing is damaged: run Lettuce as the user who owns the vault's .lettuce folder, on a file system it may write (a read-only vault needs a writable .lettuce, e.g. a bind mount)";

/** Why the stores in .lettuce cannot be opened by this user here, when that is the reason; null otherwise. */
function accessProblem(root: string, message: string): string | null {
  try {
    accessSync(lettuceDir(root), fsConstants.R_OK | fsConstants.W_OK | fsConstants.X_OK);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "EROFS") return "the file system is read-only";
    if (code === "EACCES" || code === "EPERM") return `this user may not write ${lettuceDir(root)}`;
  }
  return /readonly database|read-only file system|permission denied/i.test(message) ? message : null;
}

/**
 * state.db holds what cannot be rebuilt from the notes: tokens, the agent-edits timeline,
 * proposals, the audit log. A damaged one stopped `serve` with only "database disk image is
 * malformed", while doctor said nothing was wrong.
 */
export function stateChecks(root: string, out: Check[]): void {
  const path = stateDbPath(root);
  if (!existsSync(path)) return;
  try {
    const db = new Database(path, { readonly: true });
    try {
      db.exec("PRAGMA busy_timeout = 2000");
      const rows = db.query("PRAGMA quick_check").all() as { quick_check: string }[];
      if (rows.length !== 1 || rows[0]!.quick_check !== "ok") throw new Error(rows.map((r) => r.quick_check).slice(0, 3).join("; "));
      // Whole, but written by a newer Lettuce (the person went back a version): every command refuses it.
      const version = schemaVersion(db);
      if (version > STATE_MIGRATIONS.length) {
        out.push({
          check: "state",
          status: "fail",
          detail: `state.db is of schema version ${version}, written by a newer Lettuce than this one (${STATE_MIGRATIONS.length}): every command refuses it`,
          fix: "run the newer Lettuce again; this one cannot read its tokens, timeline or proposals",
        });
        return;
      }
    } finally {
      db.close();
    }
    out.push({ check: "state", status: "ok", detail: "state.db (tokens, the agent-edits timeline, proposals, the audit log) reads back whole" });
  } catch (e) {
    const access = accessProblem(root, (e as Error).message);
    if (access) {
      out.push({ check: "state", status: "fail", detail: `state.db cannot be opened here: ${access}`, fix: ACCESS_FIX });
      return;
    }
    out.push({
      check: "state",
      status: "fail",
      detail: `state.db cannot be read: ${(e as Error).message}`,
      fix: `stop Lettuce and move ${path} aside (with its -wal and -shm files): the next start makes a new one. The notes are untouched; tokens must be created again, and the old timeline, proposals and audit log stay in the file moved aside (\`sqlite3 state.db .recover\` may save them)`,
    });
  }
}

/** embeddings.db from a newer Lettuce: semantic calls still work, without a cache (lib/semantic/cache.ts). */
export function cacheCheck(root: string, out: Check[]): void {
  const path = join(lettuceDir(root), "embeddings.db");
  if (!existsSync(path)) return;
  try {
    const db = new Database(path, { readonly: true });
    try {
      const version = schemaVersion(db);
      if (version > CACHE_SCHEMA_VERSION) {
        out.push({
          check: "embeddings",
          status: "warn",
          detail: `embeddings.db is of schema version ${version}, written by a newer Lettuce (this one knows ${CACHE_SCHEMA_VERSION}): left as it is, and this version embeds without a cache (every start embeds again)`,
          fix: "run the newer Lettuce again, or move embeddings.db aside to let this one keep a cache of its own",
        });
      }
    } finally {
      db.close();
    }
  } catch {
    /* unreadable: the semantic layer says so when it is used */
  }
}
