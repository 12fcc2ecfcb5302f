// The file an agent's write displaced. A replacement is an atomic exchange:
// the note's old inode ends up under the temp name and is removed. An editor
// that saves in place may still hold that inode open, and its writes would go
// to a file no name leads to: the person's save, lost without a trace. So the
// displaced inode is kept open (unnamed) and watched for a few seconds. If it
// changes, the person saved after the agent: once it has been still for a
// moment, their text goes back in place of the agent's (as if they had saved
// a moment later, which they did), or beside it as a copy if the note has
// changed again meanwhile. The watch goes on while the file keeps changing (a
// save in chunks), and the server log says what happened.

import { closeSync, fchmodSync, fstatSync, fsyncSync, openSync, readSync, renameSync, writeSync } from "node:fs";
import { fitBytes } from "../text-cut";
import { MAX_NAME_BYTES } from "../vault/paths";
import { MAX_NOTE_FILE_BYTES } from "../vault/scan";
import { identityOfFd, sameFile, VaultDir, type FileIdentity } from "./vault-dir";

// How long an unchanged displaced file is watched; each change extends it, up to MAX_WATCH_MS in all.
const WATCH_MS = 5000;
const MAX_WATCH_MS = 60_000;
// How long a changed displaced file must stay still before it is put back (an editor writing in chunks pauses).
const STILL_MS = 1500;
const TICK_MS = 250;
// Watches at once (two descriptors each: the file and its folder); past it a watch with nothing to keep ends
// (evictable). A move that rewrites a thousand notes displaces a thousand files: 256 watches held 512
// descriptors, half of the common limit of 1,024, and the same call's later swaps could not open their files
// (tests/write-many-backlinks).
const MAX_WATCHED = 64;
// Past MAX_WATCHED only while every watch holds a save not yet put back; past this, the oldest ends anyway.
const HARD_MAX_WATCHED = 128;

interface Watch {
  fd: number;
  dir: VaultDir;
  name: string;
  /** The identity the file had when it was displaced. */
  expect: FileIdentity;
  /** ... and as last seen. */
  seen: FileIdentity;
  changedAt: number | null;
  /** What the note's name held when this watch last knew it: the agent's file, or the last copy put back. */
  note: FileIdentity;
  /** The displaced file's identity when it was last put back. */
  putBack: FileIdentity | null;
  started: number;
  until: number;
}

const watches = new Set<Watch>();
let timer: ReturnType<typeof setInterval> | null = null;

function end(w: Watch): void {
  watches.delete(w);
  try {
    closeSync(w.fd);
  } catch {
    /* closed */
  }
  w.dir.close();
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

/**
 * Put what the person wrote back. The bytes go first to a visible copy beside the note (written with the
 * note's permissions, fsynced: never a temp file a sweep could take), which then replaces the note if the
 * note still holds what this watch last knew; otherwise the copy stays.
 */
function restore(w: Watch, now: FileIdentity): void {
  const where = w.dir.rel ? `${w.dir.rel}/${w.name}` : w.name;
  w.putBack = now; // once per change, whatever happens below (a failure is said once, not every tick)
  if (Number(now.size) > MAX_NOTE_FILE_BYTES) {
    console.error(`lettuce: ${where}: a save made while an agent's edit replaced it is too large to put back`);
    return;
  }
  const bytes = readAll(w.fd, Number(now.size));
  const mode = fstatSync(w.fd).mode & 0o7777;
  const stem = w.name.replace(/\.md$/i, "");
  let copy: string | null = null;
  try {
    for (let i = 1; i < 100 && copy === null; i++) {
      // The stem is cut so that the copy's name still fits: past ~220 bytes it failed ENAMETOOLONG, and the
      // person's save was only logged (the Unicode audit of 2026-12-05).
      const suffix = ` (saved during an agent edit${i > 1 ? ` ${i}` : ""}).md`;
      const name = `${fitBytes(stem, MAX_NAME_BYTES - Buffer.byteLength(suffix))}${suffix}`;
      let fd: number;
      try {
        fd = openSync(w.dir.entry(name), "wx", mode);
      } catch (e) {
        if ((e as { code?: string }).code === "EEXIST") continue; // taken: the next number
        throw e;
      }
      try {
        fchmodSync(fd, mode);
        writeSync(fd, bytes, 0, bytes.length, 0);
        fsyncSync(fd);
      } catch (e) {
        w.dir.remove(name); // never a half-written copy in the vault
        throw e;
      } finally {
        closeSync(fd);
      }
      copy = name;
    }
  } catch (e) {
    console.error(`lettuce: ${where}: a save made while an agent's edit replaced it could not be put back: ${(e as Error).message}`);
    return;
  }
  if (copy === null) return;
  if (sameFile(w.dir.identity(w.name), w.note)) {
    renameSync(w.dir.entry(copy), w.dir.entry(w.name));
    w.dir.sync();
    w.note = w.dir.identity(w.name) ?? w.note;
    console.error(`lettuce: ${where}: a save made while an agent's edit replaced it was put back (the agent's edit is on the timeline)`);
  } else {
    w.dir.sync();
    console.error(`lettuce: ${where}: a save made while an agent's edit replaced it is kept as ${copy} (the note changed again meanwhile)`);
  }
}

function tick(): void {
  const now = performance.now();
  for (const w of [...watches]) {
    try {
      const id = identityOfFd(w.fd);
      if (!sameFile(id, w.seen)) {
        w.seen = id;
        w.changedAt = now;
        w.until = Math.min(w.started + MAX_WATCH_MS, Math.max(w.until, now + WATCH_MS));
        continue;
      }
      const pending = w.changedAt !== null && !sameFile(id, w.putBack);
      if (pending && (now - w.changedAt! >= STILL_MS || now >= w.until)) restore(w, id);
      if (now >= w.until) end(w);
    } catch (e) {
      console.error(`lettuce: watching a replaced note: ${(e as Error).message}`);
      end(w);
    }
  }
}

/**
 * The watch that can end for a new one: the oldest whose file nobody has written since it was displaced, else
 * the oldest whose save was put back and has been still since; null when each holds a save not yet put back.
 * The oldest used to end whatever it held: a person's slow save through an open file, half written when a
 * move displaced 70 other notes, was put back half, and its second half went to a file no name led to.
 * Looked at from the oldest, which a big move's displaced notes (nobody's open files) mostly are: one look each.
 */
function evictable(now: number): Watch | null {
  let settled: Watch | null = null;
  for (const w of watches) {
    let id: FileIdentity;
    try {
      id = identityOfFd(w.fd);
    } catch {
      return w; // unreadable: nothing to keep
    }
    if (sameFile(id, w.expect)) return w;
    if (!settled && sameFile(id, w.putBack) && w.changedAt !== null && now - w.changedAt >= STILL_MS) settled = w;
  }
  return settled;
}

/**
 * Watch the inode an exchange displaced in `dir`, open as `fd` and unnamed. `expect` is the identity the
 * write planned from, `ours` the identity of the agent's file now at `name`.
 */
export function watchDisplaced(fd: number, dir: VaultDir, name: string, expect: FileIdentity, ours: FileIdentity): void {
  if (watches.size >= MAX_WATCHED) {
    const quiet = evictable(performance.now());
    if (quiet) end(quiet);
    else if (watches.size >= HARD_MAX_WATCHED) {
      // Every watch holds a save in progress: the oldest ends early, its save put back as it is now.
      const oldest = watches.values().next().value!;
      try {
        const id = identityOfFd(oldest.fd);
        if (!sameFile(id, oldest.expect) && !sameFile(id, oldest.putBack)) restore(oldest, id);
      } catch {
        /* gone: nothing to put back */
      }
      end(oldest);
    }
  }
  let own: VaultDir;
  try {
    own = dir.reopen(); // the folder itself, wherever it is renamed to during the watch
  } catch {
    closeSync(fd);
    return;
  }
  // Monotonic: on the wall clock a step forward of a few seconds ended every watch at the next tick, and
  // a person's save made then was lost (the clock audit of 2026-12-05).
  const started = performance.now();
  watches.add({ fd, dir: own, name, expect, seen: expect, changedAt: null, note: ours, putBack: null, started, until: started + WATCH_MS });
  if (!timer) {
    timer = setInterval(tick, TICK_MS);
    timer.unref?.();
  }
}
