// Reverting a timeline entry: put back the before-state of every file change
// the call made (a move moves back, a delete comes back from .trash/, a
// create goes to .trash/), refusing when a note changed since, unless forced.
// The revert is itself recorded, so it can be reverted too.
import { turnEvery } from "../platform/turns";
import { ToolError } from "../errors";
import type { VaultContext } from "../vault-context";
import { absOf, hashBytes, readBytes } from "./atomic";
import { commitChanges, StaleError, type FileChange } from "./commit";
import { editGroup, standingRevertOf, type EditRow } from "./edits";
import { nameTwinsOnDisk } from "./notes";
import { trashPathFor } from "./ops-move";
import { writeService } from "./service";

export interface RevertResult {
  editId: number;
  reverted: number[];
  touched: string[];
}

/** Builds the inverse changes against a simulated disk, since one call may touch a path twice. */
class Overlay {
  private state = new Map<string, Buffer | null>();
  constructor(private root: string) {}
  get(path: string): Buffer | null {
    const k = path.toLowerCase();
    if (!this.state.has(k)) this.state.set(k, readBytes(absOf(this.root, path)));
    return this.state.get(k)!;
  }
  set(path: string, b: Buffer | null): void {
    this.state.set(path.toLowerCase(), b);
  }
}

function hashOf(b: Buffer | null): string | null {
  return b === null ? null : hashBytes(b);
}

function inverse(row: EditRow, disk: Overlay, root: string, force: boolean): FileChange[] {
  const refuse = (path: string, why: string): never => {
    throw new ToolError("conflict", `Cannot revert edit ${row.id}: ${path} ${why}`, { path, edit: row.id });
  };
  // On a disk that keeps both Note.md and note.md, a note put back beside a twin that differs only in letter
  // case would be a second note of that name (write_note and move_note refuse to make one). `self`: the file
  // being moved back, the twin a case-only move leaves.
  const refuseTwin = (path: string, self: string | null) => {
    const twin = nameTwinsOnDisk(root, path).find((t) => t !== path && t !== self);
    if (twin !== undefined) refuse(twin, "now holds that name in another letter case; move or delete it first");
  };
  if (row.action === "write") {
    const cur = disk.get(row.path);
    if (hashOf(cur) !== row.afterHash && !force) refuse(row.path, "changed since (pass --force to revert anyway; the current text is kept in the timeline)");
    // A text the timeline names but cannot give back: never taken for "the edit created the note" (that
    // revert sends the note to the trash).
    if (row.before === null && row.beforeHash !== null) refuse(row.path, "cannot be put back: the timeline no longer holds its text from before the edit");
    if (row.before === null) {
      if (cur === null) return [];
      const trash = trashPathFor(root, row.path);
      disk.set(row.path, null);
      return [{ action: "delete", path: row.path, trash, before: cur, after: null }];
    }
    const before = Buffer.from(row.before);
    disk.set(row.path, before);
    return [{ action: "write", path: row.path, before: cur, after: before }];
  }
  if (row.action === "move") {
    const cur = disk.get(row.path);
    if (cur === null) refuse(row.path, "is gone");
    if (hashOf(cur) !== row.afterHash && !force) refuse(row.path, "changed since (pass --force to move it back anyway)");
    if (row.fromPath!.toLowerCase() !== row.path.toLowerCase() && disk.get(row.fromPath!) !== null) refuse(row.fromPath!, "exists again; move or delete it first");
    refuseTwin(row.fromPath!, row.path);
    disk.set(row.path, null);
    disk.set(row.fromPath!, cur);
    return [{ action: "move", from: row.path, path: row.fromPath!, before: cur, after: cur }];
  }
  // A delete: bring the note back from .trash/, or from the timeline's copy when the trash was emptied.
  if (disk.get(row.path) !== null) refuse(row.path, "exists again; move or delete it first");
  refuseTwin(row.path, null);
  const trashed = row.trashPath ? disk.get(row.trashPath) : null;
  // The file at the trash name is this delete's only when it holds the deleted text: after the
  // trash was emptied a later delete of the same path lands on the same name (and a person may
  // have edited it there). Anything else stays in the trash; the timeline's copy comes back.
  const ours = trashed !== null && hashOf(trashed) === row.beforeHash;
  if (trashed !== null && row.trashPath && (ours || (force && row.before === null))) {
    disk.set(row.trashPath, null);
    disk.set(row.path, trashed);
    return [{ action: "move", from: row.trashPath, path: row.path, before: trashed, after: trashed }];
  }
  if (row.before === null) refuse(row.trashPath ?? row.path, "is not the text that was deleted, and the timeline has no copy of it (pass --force to restore it anyway)");
  const before = Buffer.from(row.before ?? new Uint8Array());
  disk.set(row.path, before);
  return [{ action: "write", path: row.path, before: null, after: before }];
}

/** Revert the call that timeline entry `id` belongs to (all of its file changes, newest first). */
export async function revertEdit(vault: VaultContext, id: number, opts: { force?: boolean; reindex?: boolean; agent?: string; token?: string } = {}): Promise<RevertResult> {
  const service = writeService(vault, { reindex: opts.reindex });
  const rows = await editGroup(vault.stateDb, id);
  if (!rows.length) throw new ToolError("edit-not-found", `No edit ${id} in the timeline (lettuce edits lists them)`);
  // Said first: the notes' hashes would otherwise make it "changed since", and --force then "already undone".
  const undoneBy = standingRevertOf(vault.stateDb, rows[0]!.id);
  if (undoneBy !== null) throw new ToolError("no-change", `Edit ${id} was already undone by edit ${undoneBy} (revert ${undoneBy} to bring it back)`, { revertedBy: undoneBy });
  const paths = rows.flatMap((r) => [r.path, r.fromPath, r.trashPath].filter((p): p is string => !!p));
  const release = await service.locks.acquire(paths);
  let res;
  let changes: FileChange[];
  try {
    const disk = new Overlay(vault.root);
    // A note read and hashed a row: a revert of a move that rewrote 20,000 notes gives other callers turns.
    const turn = turnEvery(10);
    changes = [];
    for (const r of [...rows].reverse()) {
      await turn();
      changes.push(...inverse(r, disk, vault.root, !!opts.force));
    }
    if (!changes.length) throw new ToolError("no-change", `Edit ${id} is already undone; nothing to revert`);
    res = await commitChanges({ root: vault.root, timelineDb: service.db }, changes, { tool: "revert", agent: opts.agent ?? "person", token: opts.token ?? "cli", reverts: rows[0]!.id });
  } catch (e) {
    if (e instanceof StaleError) throw new ToolError("conflict", `${e.path} changed while reverting; run the revert again`, { path: e.path });
    throw e;
  } finally {
    release();
  }
  if (opts.reindex) await vault.indexer.update(res.touched);
  return { editId: res.editId, reverted: rows.map((r) => r.id), touched: res.touched };
}
