// A person's editor that saves in place truncates the note and then writes
// it: for a moment (a big note, a busy or synced disk) the file is empty. An
// agent's edit planned in that moment reads the empty note, passes every
// later check (nothing changed since it read) and replaces it. The editor's
// remaining writes then go to the displaced file, which ./displaced.ts
// watches and puts back: the person's text is safe either way, but the
// agent's edit would be undone by it. So an edit waits, briefly, for a note
// that was just emptied by someone other than this server to be written.
// (A note that is merely being written is not waited for: a writer that keeps
// a file busy, a log, would stall every edit of it. The commit's checks and
// the displaced-file watch cover it.)

import { lstatSync } from "node:fs";
import { absOf } from "./atomic";
import { envNumber } from "../env-number";
import { turnEvery } from "../platform/turns";

/** How long an emptied note must have stayed empty before an edit is planned from it (ms). */
export const SAVE_QUIET_MS = 300;
/** The longest a write waits; then it goes ahead (the commit's checks and the displaced-file watch still hold). */
const MAX_WAIT_MS = 2000;
const POLL_MS = 25;
// Paths stat'ed between two turns of other callers.
const SLICE_MS = 10;

function quietMs(): number {
  // 0 turns the wait off; unset or "" is the default.
  return envNumber("LETTUCE_SAVE_QUIET_MS", SAVE_QUIET_MS, { min: 0, max: 10_000 });
}

/** A file's identity, size and when it last changed; null when it is not there (or not a plain file). */
export function fileStamp(root: string, rel: string): { key: string; size: bigint; changedMs: number } | null {
  try {
    const st = lstatSync(absOf(root, rel), { bigint: true });
    if (!st.isFile()) return null;
    return {
      key: `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`,
      size: st.size,
      changedMs: Number(st.mtimeNs > st.ctimeNs ? st.mtimeNs : st.ctimeNs) / 1e6,
    };
  } catch {
    return null;
  }
}

/**
 * Wait until none of `paths` is a note emptied within the quiet time, except by this server's own last
 * write (`ours`: path → the stamp it left). A time in the future (another machine's clock on a network
 * disk) is not waited for.
 */
export async function waitForEmptiedNotes(root: string, paths: string[], ours: Map<string, string>): Promise<void> {
  const quiet = quietMs();
  const deadline = performance.now() + MAX_WAIT_MS;
  for (;;) {
    let wait = 0;
    const turn = turnEvery(SLICE_MS);
    for (const p of paths) {
      // A stat a note: the 20,000 notes of a big move held other callers ~0.3 s in one stretch.
      await turn();
      const s = fileStamp(root, p);
      if (!s || s.size !== 0n || ours.get(p) === s.key) continue;
      const age = Date.now() - s.changedMs;
      if (age >= 0 && age < quiet) wait = Math.max(wait, quiet - age);
    }
    if (wait === 0 || performance.now() >= deadline) return;
    await Bun.sleep(Math.min(Math.max(wait, POLL_MS), deadline - performance.now()));
  }
}
