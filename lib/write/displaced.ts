// The file an agent's write displaced. A replacement is an atomic exchange:
// the note's old inode ends up under the temp name and is removed. An editor
// that saves in place may still hold that inode open, and its writes would go
// to a file no name leads to: the person's save, lost without a trace. So the
// displaced inode is kept open (unnamed) for a few seconds and watched. If it
// changes, the person saved after the agent: their text goes back in place of
// the agent's (as if they had saved a moment later, which they did), or, if
// the note changed again meanwhile, beside it as a copy. Either way it is not
// lost, and the server log says what happened.

import { closeSync, fstatSync, readSync, renameSync, writeFileSync } from "node:fs";
import { tempNameFor } from "./atomic";
import { renameNoReplace, sameFile, VaultDir, type FileIdentity } from "./vault-dir";

const WATCH_MS = 5000;
const TICK_MS = 500;
// Descriptors held at once; past it the oldest watch ends (its file then goes as before).
const MAX_WATCHED = 256;

interface Watch {
  fd: number;
  root: string;
  dirRel: string;
  name: string;
  expect: FileIdentity;
  ours: FileIdentity;
  until: number;
  /** The identity seen at the last tick once it changed: restored when it stops changing. */
  changed: FileIdentity | null;
}

const watches = new Set<Watch>();
let timer: ReturnType<typeof setInterval> | null = null;

function identityOf(fd: number): FileIdentity {
  const st = fstatSync(fd, { bigint: true });
  return { dev: st.dev, ino: st.ino, size: st.size, mtimeNs: st.mtimeNs };
}

function end(w: Watch): void {
  watches.delete(w);
  try {
    closeSync(w.fd);
  } catch {
    /* closed */
  }
  if (!watches.size && timer) {
    clearInterval(timer);
    timer = null;
  }
}

function readAll(fd: number, size: number): Buffer {
  const buf = Buffer.alloc(size);
  let off = 0;
  while (off < size) {
    const n = readSync(fd, buf, off, size - off, off);
    if (n <= 0) break;
    off += n;
  }
  return buf.subarray(0, off);
}

/** Put what the person wrote back: in the note's place if it still holds the agent's bytes, else beside it. */
function restore(w: Watch, now: FileIdentity): void {
  const bytes = readAll(w.fd, Number(now.size));
  const dir = VaultDir.open(w.root, w.dirRel);
  try {
    const tmp = tempNameFor();
    writeFileSync(dir.entry(tmp), bytes, { flag: "wx" });
    const where = w.dirRel ? `${w.dirRel}/${w.name}` : w.name;
    if (sameFile(dir.identity(w.name), w.ours)) {
      renameSync(dir.entry(tmp), dir.entry(w.name));
      console.error(`lettuce: ${where}: a save made while an agent's edit replaced it was put back (the agent's edit is on the timeline)`);
      return;
    }
    const stem = w.name.replace(/\.md$/i, "");
    for (let i = 1; i < 100; i++) {
      const copy = `${stem} (saved during an agent edit${i > 1 ? ` ${i}` : ""}).md`;
      if (renameNoReplace(dir, tmp, dir, copy) === "ok") {
        console.error(`lettuce: ${where}: a save made while an agent's edit replaced it is kept as ${copy}`);
        return;
      }
    }
    dir.remove(tmp);
  } finally {
    dir.close();
  }
}

function tick(): void {
  const now = Date.now();
  for (const w of [...watches]) {
    try {
      const id = identityOf(w.fd);
      if (!sameFile(id, w.expect)) {
        // Still being written: wait for a tick with no change, then restore (or at the end of the watch).
        if (w.changed && sameFile(id, w.changed)) {
          restore(w, id);
          end(w);
          continue;
        }
        w.changed = id;
        if (now >= w.until) {
          restore(w, id);
          end(w);
        }
        continue;
      }
      if (now >= w.until) end(w);
    } catch (e) {
      console.error(`lettuce: watching a replaced note: ${(e as Error).message}`);
      end(w);
    }
  }
}

/**
 * Watch the inode an exchange displaced, open as `fd` (already unlinked). `expect` is the identity the
 * write planned from, `ours` the identity of the agent's file now in its place.
 */
export function watchDisplaced(fd: number, root: string, dirRel: string, name: string, expect: FileIdentity, ours: FileIdentity): void {
  // Still reachable by another name (a hard link: another note): writes to it are that note's, not lost.
  let linked = true;
  try {
    linked = fstatSync(fd).nlink > 0;
  } catch {
    /* cannot tell: do not watch */
  }
  if (linked) {
    try {
      closeSync(fd);
    } catch {
      /* closed */
    }
    return;
  }
  if (watches.size >= MAX_WATCHED) end(watches.values().next().value!);
  watches.add({ fd, root, dirRel, name, expect, ours, until: Date.now() + WATCH_MS, changed: null });
  if (!timer) {
    timer = setInterval(tick, TICK_MS);
    timer.unref?.();
  }
}
