// Settling what a process that died mid-write left pending on the timeline.
//
// A call's changes (a move and its backlink rewrites, a revert of such a
// group) are one group of rows, renamed into place in row order, and only
// after every temp file of the call was written and fsynced. So after a crash
// a group is in one of two states: no rename happened (drop every row and its
// temp), or the renames stopped partway. Then every row up to the last one
// that landed landed too, and the rest are rolled forward from their temp
// files, each only if the disk still holds what the call planned from: a call
// is never left half-done (a half-moved note with some links rewritten and
// others not, a half-reverted group that "revert" then calls already undone).
//
// Whether a row landed is judged from the end of its group backwards: the rows
// after it did not land, so nothing later in the call has touched its files
// (judged alone, a write to a note the same call then moved looked as if it
// never happened).

import type { Database } from "bun:sqlite";
import { existsSync, renameSync } from "node:fs";
import { absOf, diskHash, removeQuietly, splitRel as split } from "./atomic";
import { dropPending, inFlight, markApplied, processAlive, type EditAction } from "./edits";
import { watchDisplaced } from "./displaced";
import { sweepUnclaimedParts } from "./text-parts";
import { ownStamp } from "../platform/pid";
import { renameNoReplace, swapInChecked, VaultDir } from "./vault-dir";

interface PendingRow {
  id: number;
  grp: number;
  action: EditAction;
  path: string;
  from_path: string | null;
  trash_path: string | null;
  tmp: string | null;
  owner_pid: number | null;
  owner_stamp: string | null;
  before_hash: string | null;
  after_hash: string | null;
}

export interface Recovery {
  /** Rows that had landed, now on the timeline. */
  applied: number;
  /** Rows rolled forward from their temp files (so their groups are whole). */
  completed: number;
  /** Rows of calls that never reached a rename, dropped with their temp files. */
  dropped: number;
  /** Groups that could not be completed because a file changed since (rows that landed are kept). */
  incomplete: { group: number; path: string; error?: string }[];
  /** Notes this recovery changed on disk (to re-index). */
  touched: string[];
}


/** Put a temp file back in its note's place, through the folder's descriptor (no symlink followed), as commit.ts renames. */
function swapBack(root: string, tmp: string, path: string): void {
  const { dir, name } = split(path);
  const d = VaultDir.open(root, dir);
  try {
    renameSync(d.entry(split(tmp).name), d.entry(name));
  } finally {
    d.close();
  }
}

/**
 * Whether a row landed, the later rows of its call having not. A write is applied when the note holds
 * its new bytes and its temp file is gone or holds the bytes the write replaced: a replacement is an
 * atomic exchange, so between the exchange and the temp's removal the temp name holds the old note. A
 * temp that holds anything else there is a person's save the exchange displaced in that instant: it goes
 * back in place and the row did not land. A move or delete landed when its source is gone and its
 * destination exists.
 */
function landed(root: string, r: PendingRow, touched: string[]): boolean {
  const abs = (rel: string) => absOf(root, rel);
  if (r.action === "write") {
    const note = diskHash(abs(r.path));
    const tmp = r.tmp && existsSync(abs(r.tmp)) ? diskHash(abs(r.tmp)) : null;
    let yes = note === r.after_hash && (tmp === null || tmp !== r.after_hash);
    if (yes && tmp !== null && r.before_hash !== r.after_hash && tmp !== r.before_hash) {
      swapBack(root, r.tmp!, r.path);
      touched.push(r.path);
      yes = false;
    }
    return yes;
  }
  const { src, dst } = ends(r);
  return !existsSync(abs(src)) && existsSync(abs(dst));
}

function ends(r: PendingRow): { src: string; dst: string } {
  return r.action === "move" ? { src: r.from_path!, dst: r.path } : { src: r.path, dst: r.trash_path! };
}

/** Do a row's rename now, if the disk still holds what the call planned from; false (nothing done) otherwise. */
function complete(root: string, r: PendingRow): boolean {
  const abs = (rel: string) => absOf(root, rel);
  if (r.action === "write") {
    if (!r.tmp || diskHash(abs(r.tmp)) !== r.after_hash) return false; // the temp is the whole new text, or nothing is done
    if (diskHash(abs(r.path)) !== r.before_hash) return false;
    const { dir, name } = split(r.path);
    const tmp = split(r.tmp).name;
    const d = VaultDir.open(root, dir);
    try {
      if (r.before_hash === null) return renameNoReplace(d, tmp, d, name) === "ok";
      // As the commit does: an exchange, the displaced file checked (a person's editor may have the note
      // open at start-up) and watched.
      const planned = d.identity(name);
      const written = d.identity(tmp);
      if (!planned || !written) return false;
      const ok = swapInChecked(d, tmp, name, planned, written, (fd) => watchDisplaced(fd, d, name, planned, written)) === "ok";
      if (ok) d.sync();
      return ok;
    } finally {
      d.close();
    }
  }
  const { src, dst } = ends(r);
  if (diskHash(abs(src)) !== r.before_hash || existsSync(abs(dst))) return false;
  const from = VaultDir.open(root, split(src).dir);
  const to = VaultDir.open(root, split(dst).dir, { create: true });
  try {
    const ok = renameNoReplace(from, split(src).name, to, split(dst).name) === "ok";
    if (ok) {
      from.sync();
      to.sync();
    }
    return ok;
  } finally {
    from.close();
    to.close();
  }
}

export function recoverTimeline(root: string, db: Database): Recovery {
  const rows = db
    .query("SELECT id, coalesce(group_id, id) AS grp, action, path, from_path, trash_path, tmp, owner_pid, owner_stamp, before_hash, after_hash FROM agent_edits WHERE state = 'pending' ORDER BY id")
    .all() as PendingRow[];
  const groups = new Map<number, PendingRow[]>();
  for (const r of rows) groups.set(r.grp, [...(groups.get(r.grp) ?? []), r]);
  const out: Recovery = { applied: 0, completed: 0, dropped: 0, incomplete: [], touched: [] };
  const applied: number[] = [];
  const dropped: number[] = [];
  const settled: PendingRow[] = [];
  for (const [group, g] of groups) {
    if (inFlight.has(group) && g.some((r) => r.owner_pid === process.pid)) continue; // this process is still at it
    if (g.some((r) => r.owner_pid !== null && processAlive(r.owner_pid, r.owner_stamp))) continue; // so is another live one
    settled.push(...g);
    try {
      settleGroup(root, group, g, out, applied, dropped);
    } catch (e) {
      // A rename recovery cannot do (a folder that is now a file, a permission, a read-only disk) must not stop
      // the server from starting, every time: what landed stays, the rest of the call is dropped and reported.
      const done = new Set(applied);
      const rest = g.filter((r) => !done.has(r.id));
      for (const r of rest) dropped.push(r.id);
      out.dropped += rest.length;
      out.incomplete.push({ group, path: rest[0]?.path ?? g[0]!.path, error: (e as Error).message });
    }
  }
  // Temp files before rows: if this is cut short, the next recovery finds the rows again and settles them the same way.
  for (const r of settled) if (r.tmp) removeQuietly(absOf(root, r.tmp));
  markApplied(db, applied);
  dropPending(db, dropped);
  // Parts of a big text whose row never went in (./text-parts.ts).
  sweepUnclaimedParts(db);
  return out;
}

function settleGroup(root: string, group: number, g: PendingRow[], out: Recovery, applied: number[], dropped: number[]): void {
  let last = -1;
  for (let i = g.length - 1; i >= 0; i--) {
    if (landed(root, g[i]!, out.touched)) {
      last = i;
      break;
    }
  }
  for (let i = 0; i <= last; i++) applied.push(g[i]!.id);
  out.applied += last + 1;
  if (last === -1) {
    for (const r of g) dropped.push(r.id);
    out.dropped += g.length;
    return;
  }
  for (let i = last + 1; i < g.length; i++) {
    const r = g[i]!;
    if (complete(root, r)) {
      applied.push(r.id);
      out.completed++;
      if (r.action === "write") out.touched.push(r.path);
      else out.touched.push(ends(r).src, ends(r).dst);
      continue;
    }
    out.incomplete.push({ group, path: r.path });
    for (const rest of g.slice(i)) dropped.push(rest.id);
    out.dropped += g.length - i;
    break;
  }
}

/**
 * Proposals a process claimed for approval and died before recording the edit (after the timeline's own
 * recovery has settled that process's rows): approved with their edit when the write landed, pending
 * again when it did not, so that a person can approve them again instead of finding them "approved" with
 * nothing applied.
 */
/** A claim this process made (its pid, and its stamp when one was recorded), not one of a process before it with the same pid. */
const ownClaim = (pid: number, stamp: string | null) => pid === process.pid && (stamp === null || stamp === ownStamp());

export function recoverProposals(db: Database): { approved: number; reopened: number } {
  const out = { approved: 0, reopened: 0 };
  const claimed = db.query("SELECT id, claimed_by, claimed_stamp FROM proposals WHERE status = 'approved' AND claimed_by IS NOT NULL").all() as {
    id: number;
    claimed_by: number;
    claimed_stamp: string | null;
  }[];
  for (const c of claimed) {
    // 0: approved by a Lettuce from before claims named their process (a migration marks them): no process
    // to wait for. A no-op approval of those versions looks the same, and is pending again once.
    if (c.claimed_by !== 0 && (ownClaim(c.claimed_by, c.claimed_stamp) || processAlive(c.claimed_by, c.claimed_stamp))) continue; // still being applied
    const edit = db.query("SELECT max(coalesce(group_id, id)) AS id FROM agent_edits WHERE proposal_id = ? AND state = 'applied'").get(c.id) as { id: number | null };
    if (edit.id !== null) {
      db.query("UPDATE proposals SET edit_id = ?, claimed_by = NULL WHERE id = ?").run(edit.id, c.id);
      out.approved++;
    } else {
      db.query("UPDATE proposals SET status = 'pending', decided_at = NULL, claimed_by = NULL WHERE id = ?").run(c.id);
      out.reopened++;
    }
  }
  return out;
}

/**
 * Everything a process that stopped mid-write left to settle, at the start of anything that writes (and of
 * `lettuce edits`, which lists the timeline): the timeline's groups, then the approvals they belonged to.
 * Says on stderr what it did. Returns the notes it changed on disk, for the caller to re-index.
 */
export function recoverAtStart(root: string, db: Database): string[] {
  const r = recoverTimeline(root, db);
  if (r.applied + r.completed + r.dropped) {
    console.error(`lettuce: settled what a stopped process left half-written: ${r.applied} change(s) had landed, ${r.completed} completed, ${r.dropped} never started`);
  }
  for (const g of r.incomplete) {
    console.error(`lettuce: edit ${g.group} could not be completed (${g.path}: ${g.error ?? "changed since"}); the timeline has the part that landed: \`lettuce edits\``);
  }
  const p = recoverProposals(db);
  if (p.approved + p.reopened) console.error(`lettuce: approvals a stopped process left half-done: ${p.approved} recorded, ${p.reopened} pending again`);
  return r.touched;
}
