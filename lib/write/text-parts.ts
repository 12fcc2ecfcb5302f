// A big timeline text's compressed bytes past its first PART_BYTES: written
// before the timeline row that keeps the text, each part in a transaction of
// its own with turns for other callers between. Inserted in the row's own
// transaction, the 19 MB of zstd of a 30 MB note that write_note replaced held
// every other caller of the server ~70 ms; a part holds them a few ms.
//
// Crash consistency: a group of parts has a row in edit_text_part_groups until
// the transaction that inserts its text (and the timeline row naming the text)
// deletes that row, so a text and its parts are committed together or the
// parts are an unclaimed group. A crash in between leaves such a group, and the
// next recovery removes it when the process that wrote it is gone.
import type { Database } from "bun:sqlite";
import { ownStamp, recordedProcessAlive } from "../platform/pid";
import { nextTurn } from "../platform/turns";

/** Bytes of a part (~4 ms to insert); the first part of a text is edit_texts.data itself. */
export const PART_BYTES = 1024 * 1024;

/** Groups this process has written and not yet claimed or dropped: the recovery leaves them alone. */
const staging = new Set<number>();

/**
 * Write `data` past its first PART_BYTES as a new group of parts. Returns the first part (for edit_texts.data)
 * and the group (null when `data` fits in one part), which claimParts() takes in the row's transaction and
 * dropUnclaimed() removes if none did.
 */
export async function writeParts(db: Database, data: Uint8Array): Promise<{ head: Uint8Array; group: number | null }> {
  if (data.length <= PART_BYTES) return { head: data, group: null };
  const group = Number(db.query("INSERT INTO edit_text_part_groups(owner_pid, owner_stamp) VALUES (?, ?)").run(process.pid, ownStamp()).lastInsertRowid);
  staging.add(group);
  try {
    const ins = db.query("INSERT INTO edit_text_parts(grp, seq, data) VALUES (?, ?, ?)");
    for (let at = PART_BYTES, seq = 1; at < data.length; at += PART_BYTES, seq++) {
      await nextTurn();
      ins.run(group, seq, data.subarray(at, at + PART_BYTES));
    }
  } catch (e) {
    dropUnclaimed(db, group);
    throw e;
  }
  return { head: data.subarray(0, PART_BYTES), group };
}

/** Inside the transaction that inserts the text naming `group`: from now on the parts are that text's. */
export function claimParts(db: Database, group: number): void {
  if (db.query("DELETE FROM edit_text_part_groups WHERE id = ?").run(group).changes !== 1) {
    // Never expected (the recovery spares a live process's groups): a text with parts missing must not go in.
    throw new Error(`the timeline's staged text parts ${group} are gone`);
  }
}

/** Remove `group` unless a text claimed it (a write that failed, or found its text stored already). */
export function dropUnclaimed(db: Database, group: number): void {
  staging.delete(group);
  try {
    db.transaction(() => {
      if (db.query("DELETE FROM edit_text_part_groups WHERE id = ?").run(group).changes) deleteParts(db, group);
    }).immediate();
  } catch {
    /* state.db cannot take it now (a full disk): the recovery at the next start removes the group */
  }
}

/** The parts of a text's group, in order. */
export function partsOf(db: Database, group: number): Uint8Array[] {
  const rows = db.query("SELECT data FROM edit_text_parts WHERE grp = ? ORDER BY seq").all(group) as { data: Uint8Array }[];
  return rows.map((r) => (r.data instanceof Uint8Array ? r.data : new Uint8Array(r.data as ArrayBuffer)));
}

/** With the text that named them (releaseTexts). */
export function deleteParts(db: Database, group: number): void {
  db.query("DELETE FROM edit_text_parts WHERE grp = ?").run(group);
}

/**
 * Groups no text claimed, left by a process that is gone (a crash between its parts and its row); and parts
 * of no group and no text (an older Lettuce released the text, knowing nothing of its parts).
 */
export function sweepUnclaimedParts(db: Database): number {
  const groups = db.query("SELECT id, owner_pid, owner_stamp FROM edit_text_part_groups").all() as { id: number; owner_pid: number; owner_stamp: string | null }[];
  let removed = 0;
  for (const g of groups) {
    if (staging.has(g.id)) continue;
    if (g.owner_pid !== process.pid && recordedProcessAlive(g.owner_pid, g.owner_stamp)) continue;
    dropUnclaimed(db, g.id);
    removed++;
  }
  try {
    db.query(
      `DELETE FROM edit_text_parts WHERE grp NOT IN (SELECT id FROM edit_text_part_groups)
         AND grp NOT IN (SELECT parts FROM edit_texts WHERE parts IS NOT NULL)`,
    ).run();
  } catch {
    /* state.db cannot take it now (a full disk): the next start tries again */
  }
  return removed;
}
