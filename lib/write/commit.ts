// The single place where notes change on disk. Tools, approved proposals and
// reverts all come through commitChanges(): it checks every change against
// the disk as it is now, renames temp files into place, and records each
// change in the agent-edits timeline.
import type { Database } from "bun:sqlite";
import { mkdirSync, renameSync } from "node:fs";
import { dirname, relative } from "node:path";
import { absOf, diskHash, fsyncDir, hashBytes, removeQuietly, tempPathFor, writeTemp } from "./atomic";
import { dropPending, insertPending, markApplied, type NewEdit } from "./edits";

export interface FileChange {
  action: "write" | "move" | "delete";
  /** write: the note; move: the destination; delete: the note. Vault-relative. */
  path: string;
  /** move: the source. */
  from?: string;
  /** delete: the destination under .trash/. */
  trash?: string;
  /** The bytes the change was planned against; null: the note must not exist (a create). */
  before: Uint8Array | null;
  /** write: the new bytes; move: the bytes being moved; delete: null. */
  after: Uint8Array | null;
}

export interface CommitMeta {
  tool: string;
  agent: string;
  token: string;
  proposalId?: number | null;
  reverts?: number | null;
}

export interface CommitResult {
  /** The timeline id of the call (its first change). */
  editId: number;
  ids: number[];
  /** Per change, in order: the hash of its `after` bytes (null for a delete). */
  afterHashes: (string | null)[];
  /** Every vault path whose file appeared, changed or vanished. */
  touched: string[];
}

/** The disk no longer holds what a change was planned against (someone else wrote in between). */
export class StaleError extends Error {
  constructor(readonly path: string) {
    super(`${path} changed on disk while the edit was being made`);
  }
}

export interface WriteTarget {
  root: string;
  /** The timeline connection (openTimelineDb). */
  timelineDb: Database;
}

/** Where a change moves bytes from and to, for the checks below. */
function endpoints(c: FileChange): { src: string | null; dst: string } {
  if (c.action === "write") return { src: null, dst: c.path };
  if (c.action === "move") return { src: c.from!, dst: c.path };
  return { src: c.path, dst: c.trash! };
}

/**
 * Apply `changes` in order. First each change's timeline row is inserted as
 * pending, naming its temp file, so that a crash at any later point leaves
 * nothing the recovery cannot explain. Then the temp files are written and
 * fsynced (the slow, asynchronous part). Then, in one synchronous stretch
 * with no await, every change is checked against the disk (a person's editor
 * may have saved meanwhile: StaleError, nothing written), the renames happen
 * and the rows are marked applied. Callers hold the per-note locks of every
 * path involved.
 */
export async function commitChanges(target: WriteTarget, changes: FileChange[], meta: CommitMeta): Promise<CommitResult> {
  const { root, timelineDb: stateDb } = target;
  const temps = changes.map((c) => (c.action === "write" ? tempPathFor(absOf(root, c.path)) : null));
  const rows: NewEdit[] = changes.map((c, i) => ({
    tool: meta.tool,
    action: c.action,
    path: c.path,
    fromPath: c.from ?? null,
    trashPath: c.trash ?? null,
    before: c.before,
    after: c.action === "delete" ? null : c.after,
    beforeHash: c.before === null ? null : hashBytes(c.before),
    afterHash: c.action === "delete" || c.after === null ? null : hashBytes(c.after),
    agent: meta.agent,
    token: meta.token,
    proposalId: meta.proposalId ?? null,
    reverts: meta.reverts ?? null,
    tmp: temps[i] ? relative(root, temps[i]!).split("\\").join("/") : null,
  }));
  const ids = insertPending(stateDb, rows);
  // Rows before temp files: after a crash every temp file is named by a pending row (recoverTimeline).
  const abandon = () => {
    for (const t of temps) if (t) removeQuietly(t);
    dropPending(stateDb, ids);
  };
  try {
    await Promise.all(changes.map((c, i) => (temps[i] ? writeTemp(absOf(root, c.path), c.after!, temps[i]!) : null)));
  } catch (e) {
    abandon();
    throw e;
  }

  // From here to the renames: synchronous, so nothing in this process interleaves.
  const known = new Map<string, string | null>(); // path (lowercased) -> hash after the changes so far
  const current = (rel: string) => {
    const k = rel.toLowerCase();
    if (!known.has(k)) known.set(k, diskHash(absOf(root, rel)));
    return known.get(k)!;
  };
  try {
    changes.forEach((c, i) => {
      const { beforeHash, afterHash } = rows[i]!;
      const { src, dst } = endpoints(c);
      if (src === null) {
        if (current(dst) !== beforeHash) throw new StaleError(dst);
        known.set(dst.toLowerCase(), afterHash);
      } else {
        if (current(src) !== beforeHash) throw new StaleError(src);
        // A rename onto an existing file would silently replace it; a case-only rename is the one exception.
        if (dst.toLowerCase() !== src.toLowerCase() && current(dst) !== null) throw new StaleError(dst);
        known.set(src.toLowerCase(), null);
        known.set(dst.toLowerCase(), beforeHash);
      }
    });
  } catch (e) {
    abandon();
    throw e;
  }

  const done: number[] = [];
  const dirs = new Set<string>();
  const touched: string[] = [];
  try {
    changes.forEach((c, i) => {
      const { src, dst } = endpoints(c);
      const dstAbs = absOf(root, dst);
      if (c.action === "write") renameSync(temps[i]!, dstAbs);
      else {
        mkdirSync(dirname(dstAbs), { recursive: true });
        renameSync(absOf(root, src!), dstAbs);
        dirs.add(dirname(absOf(root, src!)));
      }
      dirs.add(dirname(dstAbs));
      done.push(ids[i]!);
      if (src) touched.push(src);
      touched.push(dst);
    });
  } catch (e) {
    // A rename failed (permissions, a folder in the way): keep the record of what did happen.
    for (const t of temps.slice(done.length)) if (t) removeQuietly(t);
    markApplied(stateDb, done);
    dropPending(stateDb, ids.slice(done.length));
    throw e;
  }
  markApplied(stateDb, ids);
  // Off the event loop, but before the caller hears "done": the renames must survive a power cut.
  await Promise.all([...dirs].map(fsyncDir));
  return { editId: ids[0]!, ids, afterHashes: rows.map((r) => r.afterHash), touched: [...new Set(touched)] };
}
