// The single place where notes change on disk. Tools, approved proposals and
// reverts all come through commitChanges(): it checks every change against
// the disk as it is now, renames temp files into place, and records each
// change in the agent-edits timeline.
import type { Database } from "bun:sqlite";
import { machineFault, ToolError } from "../errors";
import { osPathError } from "../vault/paths";
import { nextTurn, turnEvery } from "../platform/turns";
import { hashInTurns, splitRel as split, tempNameFor } from "./atomic";
import { watchDisplaced } from "./displaced";
import { renameNoReplace, sameFile, swapInChecked, VaultDir, type FileIdentity } from "./vault-dir";
import { dropPending, inFlight, insertPending, markApplied, type NewEdit } from "./edits";
import { stageText, unstage, type StagedTexts } from "./edit-texts";
import { readHashed, type DiskState } from "./read-hashed";

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
  /** The timeline's connection to state.db (VaultContext.stateDbNoSync). */
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
 * nothing the recovery cannot explain. Then every folder involved is opened by
 * descriptor (never through a symlink; a folder swapped for one afterwards
 * cannot redirect anything), and the temp files are written and fsynced in
 * them (the slow, asynchronous part). Then every change is checked against
 * the disk (a person's editor may have saved meanwhile: StaleError, nothing
 * written; every byte is read and hashed again, a big note in turns:
 * ./read-hashed.ts), and the files go into place: a replacement by atomic
 * exchange, whose displaced file is verified and swapped back when it is a
 * save made after the check (swapInChecked), a creation or move only if
 * nothing took its name (renameNoReplace). Callers hold the per-note locks of every path
 * involved, so no other call of this process touches these files meanwhile;
 * the check and the renames give other callers a turn every SLICE_MS (a move
 * that rewrote 20,000 notes held them ~3 s in one stretch): a save made in
 * such a turn is one that could land between the check and a rename anyway,
 * and the swap's own check is what catches it.
 */
export async function commitChanges(target: WriteTarget, changes: FileChange[], meta: CommitMeta): Promise<CommitResult> {
  const { root, timelineDb: stateDb } = target;
  const tmpNames = changes.map((c) => (c.action === "write" ? tempNameFor() : null));
  // A note on disk may be 64 MiB (the one a write_note replaces): hashed in turns (./atomic.ts).
  const hashOf = (b: Uint8Array | null) => (b === null ? null : hashInTurns(b));
  const rows: NewEdit[] = [];
  for (const [i, c] of changes.entries()) {
    const beforeHash = await hashOf(c.before);
    rows.push({
      tool: meta.tool,
      action: c.action,
      path: c.path,
      fromPath: c.from ?? null,
      trashPath: c.trash ?? null,
      before: c.before,
      after: c.action === "delete" ? null : c.after,
      beforeHash,
      // A move's bytes are the same object before and after.
      afterHash: c.action === "delete" ? null : c.after === c.before ? beforeHash : await hashOf(c.after),
      agent: meta.agent,
      token: meta.token,
      proposalId: meta.proposalId ?? null,
      reverts: meta.reverts ?? null,
      tmp: tmpNames[i] ? joinRel(split(c.path).dir, tmpNames[i]!) : null,
    });
  }
  // In transactions of a few hundred rows, with turns for other callers between: 20,000 rows (a move's link
  // rewrites, each with its texts) held them ~1.2 s. A crash between two leaves pending rows and no temp file
  // yet, which the recovery drops. A big text a row keeps (the 30 MB note a write replaces) is staged first,
  // in parts of its own transactions (./edit-texts.ts): in the rows' transaction it held them ~70 ms (and a
  // move's new text of it, compressed there, ~300 ms).
  const ids: number[] = [];
  const staged: StagedTexts = new Map();
  try {
    for (const r of rows) {
      if (r.before && r.beforeHash) await stageText(stateDb, r.before, r.beforeHash, staged);
      if (r.after && r.afterHash && r.after !== r.before) {
        await stageText(stateDb, r.after, r.afterHash, staged, r.before && r.beforeHash ? { bytes: r.before, hash: r.beforeHash } : undefined);
      }
    }
    for (let i = 0; i < rows.length; i += PENDING_ROWS_AT_ONCE) {
      if (i > 0) await nextTurn();
      ids.push(...insertPending(stateDb, rows.slice(i, i + PENDING_ROWS_AT_ONCE), ids[0] ?? null, staged));
    }
  } catch (e) {
    if (ids.length) bookkeep(stateDb, ids[0]!, [], ids);
    throw e;
  } finally {
    unstage(stateDb, staged);
  }
  // Rows before temp files: after a crash every temp file is named by a pending row (recoverTimeline).
  const dirs = new Map<string, VaultDir>();
  const dirOf = (rel: string, create: boolean): VaultDir => {
    const { dir } = split(rel);
    let d = dirs.get(dir);
    if (!d) {
      d = VaultDir.open(root, dir, { create });
      dirs.set(dir, d);
    }
    return d;
  };
  const closeAll = () => {
    for (const d of dirs.values()) d.close();
  };
  const ours: (FileIdentity | null)[] = changes.map(() => null);
  const removeTemps = (from = 0) => {
    changes.forEach((c, i) => {
      if (i >= from && tmpNames[i]) dirs.get(split(c.path).dir)?.remove(tmpNames[i]!);
    });
  };
  const abandon = () => {
    removeTemps();
    bookkeep(stateDb, ids[0]!, [], ids);
    closeAll();
  };
  try {
    for (const c of changes) {
      const { src, dst } = endpoints(c);
      dirOf(dst, true);
      if (src) dirOf(src, false);
    }
    // A note moved and rewritten in one call (move_note rewriting its own links) is written at its new path,
    // where nothing is yet: what it keeps comes from where it was (a 600 note came back 644; the review).
    const movedFrom = new Map(changes.filter((c) => c.action === "move").map((c) => [c.path, c.from!]));
    const keptOf = (path: string) => dirOf(path, false).keptOf(split(path).name);
    await eachLimited(changes, TEMP_WRITES_AT_ONCE, async (c, i) => {
      if (!tmpNames[i]) return;
      const d = dirOf(c.path, true);
      const from = movedFrom.get(c.path);
      ours[i] = await d.writeNew(tmpNames[i]!, c.after!, d.keptOf(split(c.path).name) ?? (from ? keptOf(from) : null));
    });
  } catch (e) {
    abandon();
    throw osPathError(e, changes[0]?.path ?? "") ?? e;
  }

  // file -> hash and identity of what is there after the changes so far. A file is keyed by its device, inode
  // and lower-cased name when it exists, so that two spellings of one file (a disk that ignores case) share an
  // entry and two files whose names differ only in case (a disk that keeps both) do not: keyed by the lower-cased path, the
  // second twin was checked against the first's hash, and every move_note whose links both twins held failed
  // as a conflict. A path with nothing there is keyed by its exact spelling.
  type Known = DiskState;
  const known = new Map<string, Known>();
  const keys = new Map<string, string>();
  const keyFor = async (rel: string): Promise<string> => {
    let k = keys.get(rel);
    if (k === undefined) {
      const state = await readHashed(dirOf(rel, false), split(rel).name);
      // The inode joins two spellings of one name (a disk that ignores case), never two names: hard-linked
      // notes are two files to this batch (a write replaces one name's inode, the other keeps the old text).
      k = state.id ? `${state.id.dev}:${state.id.ino}:${rel.toLowerCase()}` : `path:${rel}`;
      keys.set(rel, k);
      if (!known.has(k)) known.set(k, state);
    }
    return k;
  };
  const current = async (rel: string) => known.get(await keyFor(rel))!;
  const settle = async (rel: string, state: Known) => known.set(await keyFor(rel), state);
  // Per write change: the identity the note must still have when it is replaced (null: it must not exist).
  const expect: (FileIdentity | null)[] = changes.map(() => null);
  // Per move or delete: the identity the note had when its bytes were checked (null: not known).
  const leaving: (FileIdentity | null)[] = changes.map(() => null);
  const turn = turnEvery(SLICE_MS);
  try {
    for (const [i, c] of changes.entries()) {
      await turn();
      const { beforeHash, afterHash } = rows[i]!;
      const { src, dst } = endpoints(c);
      if (src === null) {
        const now = await current(dst);
        if (now.hash !== beforeHash) throw new StaleError(dst);
        expect[i] = now.id;
        await settle(dst, { hash: afterHash, id: ours[i] ?? null });
      } else {
        const from = await current(src);
        if (from.hash !== beforeHash) throw new StaleError(src);
        leaving[i] = from.id;
        // A rename onto an existing file would silently replace it; a case-only rename is the one exception.
        if ((await keyFor(dst)) !== (await keyFor(src)) && (await current(dst)).hash !== null) throw new StaleError(dst);
        await settle(src, { hash: null, id: null });
        await settle(dst, { hash: beforeHash, id: from.id });
      }
    }
  } catch (e) {
    abandon();
    throw e;
  }

  const done: number[] = [];
  const touched: string[] = [];
  let stale: string | null = null;
  try {
    for (let i = 0; i < changes.length && stale === null; i++) {
      await turn();
      const c = changes[i]!;
      const { src, dst } = endpoints(c);
      const d = dirOf(dst, true);
      const name = split(dst).name;
      let r: "ok" | "stale";
      if (c.action === "write") {
        const planned = expect[i] ?? null;
        const written = ours[i]!;
        r =
          planned === null
            ? renameNoReplace(d, tmpNames[i]!, d, name)
            : swapInChecked(d, tmpNames[i]!, name, planned, written, (fd) => watchDisplaced(fd, d, name, planned, written));
      } else {
        // A person's save since the check (other callers had turns meanwhile; a big note's hashing takes tens of
        // ms) would be carried into .trash or to the new name while the timeline kept the earlier text.
        const from = dirOf(src!, false);
        const known = leaving[i];
        r = known && !sameFile(from.identity(split(src!).name), known) ? "stale" : renameNoReplace(from, split(src!).name, d, name);
      }
      if (r === "stale") {
        stale = c.action === "write" ? dst : src!;
        break;
      }
      done.push(ids[i]!);
      if (src) touched.push(src);
      touched.push(dst);
    }
  } catch (e) {
    // A rename failed (permissions, a folder in the way, a full disk): keep the record of what did happen.
    removeTemps(done.length);
    bookkeep(stateDb, ids[0]!, done, ids.slice(done.length));
    closeAll();
    const err = osPathError(e, changes[done.length]?.path ?? "") ?? e;
    if (done.length === 0) throw err;
    // Part of the call landed: "nothing was changed" (what a full disk or a permission says) would be false.
    const fault = err instanceof ToolError ? err : machineFault(err);
    throw new ToolError(fault?.kind ?? "internal", `${[...new Set(touched)].join(", ")} ${done.length === 1 ? "was" : "were"} already changed (timeline entry ${ids[0]}) when the rest failed: ${(err as Error).message}`, {
      applied: [...new Set(touched)],
      editId: ids[0],
    });
  }
  if (stale !== null) {
    removeTemps(done.length);
    bookkeep(stateDb, ids[0]!, done, ids.slice(done.length));
    closeAll();
    if (done.length === 0) throw new StaleError(stale);
    // Part of a several-note change landed before a person's save got in the way of the rest: no
    // retry can redo it as planned, so say exactly what happened (the timeline has the applied part).
    throw new ToolError("conflict", `${stale} changed on disk at the moment it was to be written; ${touched.join(", ")} ${done.length === 1 ? "was" : "were"} already changed (timeline entry ${ids[0]}); the rest was not`, {
      path: stale,
      applied: [...new Set(touched)],
      editId: ids[0],
    });
  }
  bookkeep(stateDb, ids[0]!, ids, []);
  // The renames must survive a power cut before the call answers; the callers still hold the notes' locks.
  await Promise.all([...dirs.values()].map((d) => d.syncAsync()));
  closeAll();
  return { editId: ids[0]!, ids, afterHashes: rows.map((r) => r.afterHash), touched: [...new Set(touched)] };
}

/**
 * The timeline's bookkeeping once renames have happened: rows to mark applied, rows to drop. The files are
 * what they are by now, so a state.db that cannot take the update (a full disk) must not turn a landed write
 * into a reported failure ("nothing was changed" would be false). The rows stay pending meanwhile (out of the
 * timeline) and the update is tried again every few seconds until it goes in; a crash first leaves them to
 * recoverTimeline at the next start, which settles them by the files' hashes.
 */
function bookkeep(db: Database, group: number, applied: number[], dropped: number[], attempt = 0): void {
  try {
    db.transaction(() => {
      markApplied(db, applied);
      dropPending(db, dropped);
    }).immediate();
    inFlight.delete(group);
  } catch (e) {
    const message = (e as Error).message;
    if (attempt === 0) console.error(`lettuce: the agent-edits timeline could not be updated after a write (${message}); retrying`);
    // Past the last attempt, or once state.db is closed (the vault closed), recoverTimeline settles the rows at the next start.
    if (attempt >= BOOKKEEP_ATTEMPTS || /closed database/i.test(message)) {
      inFlight.delete(group);
      return;
    }
    setTimeout(() => bookkeep(db, group, applied, dropped, attempt + 1), BOOKKEEP_RETRY_MS).unref?.();
  }
}

/**
 * Temp files written at once. All of a call's at once opened one descriptor each: a move_note that rewrote
 * the links of 20,000 notes ran out of descriptors (EMFILE) and failed, and with the common limit of 1,024 a
 * note with about a thousand backlinks could not be moved.
 */
const TEMP_WRITES_AT_ONCE = 32;
/** Timeline rows inserted in one transaction. */
const PENDING_ROWS_AT_ONCE = 250;
/** Checks and renames between two turns of other callers. */
const SLICE_MS = 10;

/**
 * `fn` over `items`, at most `limit` at a time. After a failure no new item starts, and the first error is
 * thrown once the running ones have settled, so that nothing writes a temp file after the caller removed them.
 */
async function eachLimited<T>(items: T[], limit: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failed: { error: unknown } | null = null;
  const lane = async () => {
    while (failed === null && next < items.length) {
      const i = next++;
      try {
        await fn(items[i]!, i);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failed !== null) throw (failed as { error: unknown }).error;
}

const BOOKKEEP_RETRY_MS = 2000;
const BOOKKEEP_ATTEMPTS = 900; // half an hour

function joinRel(dir: string, name: string): string {
  return dir ? `${dir}/${name}` : name;
}
