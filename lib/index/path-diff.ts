import type { Database } from "bun:sqlite";
import { join } from "node:path";
import { isIgnoredPath, lstatInVault } from "../vault/paths";
import { isMomentaryFault } from "../platform/io-faults";
import { isNoteEntry, isNotePath, scanVault, statEntry, type FileEntry } from "../vault/scan";
import { changedSince, filesUnder, hasFileRow, knownUnder, notesUnder, type KnownNote, type ListingDiff } from "./known-rows";
import { nextTurn } from "../platform/turns";

/**
 * How some vault-relative paths (files or folders, existing or gone) differ
 * from the index: update()'s counterpart to diffListing, which compares a
 * whole listing. `known` holds the rows under those paths (knownUnder).
 *
 * A note named in `paths` itself is always read again: the watcher names it because something
 * happened to it, and an edit can keep both size and mtime (a checkbox ticked within the
 * timestamp's granularity, a sync client putting the time back). Its hash then decides whether
 * it is parsed. Notes found by listing a named folder keep the cheaper size + mtime test.
 */
export function diffPaths(root: string, db: Database, paths: string[], known: Map<string, KnownNote>, foreign = false): ListingDiff {
  const todo: FileEntry[] = [];
  const deleted: string[] = [];
  const attachments: FileEntry[] = [];
  const goneFiles: string[] = [];
  const seen = new Set<string>();
  const consider = (rel: string, named: boolean) => {
    if (seen.has(rel) || isIgnoredPath(rel)) return;
    seen.add(rel);
    // lstat along the whole path: a symlink (to a folder outside, to .git, to a file) is never followed,
    // exactly as the start-up scan skips it; what it points at is treated as not there.
    if (lstatInVault(root, rel)?.isDirectory()) {
      let sub;
      try {
        sub = scanVault(join(root, rel));
      } catch (e) {
        // Short of descriptors or memory: the folder is there, and the pass is tried again.
        if (isMomentaryFault(e) || isMomentaryFault((e as Error).cause)) throw e;
        return; // gone or unlistable since the lstat: its rows stay until the watcher's next event says which
      }
      const under = rel ? `${rel}/` : "";
      // After another process's commits (`foreign`), a note in a new folder may already be indexed with its
      // stamps by that process: read it all the same, so that the pass can tell its listeners.
      for (const n of sub.notes) consider(under + n.path, foreign);
      for (const a of sub.attachments) consider(under + a.path, false);
      // What the index holds there and the folder no longer does: a folder put in the place of another
      // (mv Docs Docs.old; mv Docs.new Docs), two folders' names swapped, a note replaced by a folder of its
      // name. The events name the new folder only, so its old contents go here or nowhere.
      const listed = new Set([...sub.notes.map((n) => under + n.path), ...sub.attachments.map((a) => under + a.path)]);
      if (known.has(rel)) deleted.push(rel);
      if (rel && hasFileRow(db, rel)) goneFiles.push(rel);
      for (const p of notesUnder(db, rel)) if (!listed.has(p) && known.has(p)) deleted.push(p);
      for (const f of filesUnder(db, rel)) if (!listed.has(f)) goneFiles.push(f);
      return;
    }
    const entry = statEntry(root, rel);
    if (entry) {
      const k = known.get(rel);
      if (!isNoteEntry(rel, entry.size)) {
        attachments.push(entry);
        if (k) deleted.push(rel); // a note grown past the size of a note
      } else {
        if (!k || named || changedSince(k, entry)) todo.push(entry);
        if (!k && isNotePath(rel) && hasFileRow(db, rel)) goneFiles.push(rel); // back under it
      }
      return;
    }
    // Gone. A note or an attachment that was indexed here was a file, not a folder: nothing can be under it.
    // (Sweeping the rows under every gone path made rm -rf of 20,000 notes cost 9 s of the request thread.)
    if (known.has(rel)) {
      deleted.push(rel);
      return;
    }
    if (hasFileRow(db, rel)) {
      goneFiles.push(rel);
      return;
    }
    // Perhaps a folder: everything indexed under it is gone too (each checked: a case-only rename on a
    // disk that ignores case leaves the rows' own spelling reachable).
    if (!rel) return;
    for (const p of notesUnder(db, rel)) if (known.has(p) && !lstatInVault(root, p)) deleted.push(p);
    for (const f of filesUnder(db, rel)) if (!lstatInVault(root, f)) goneFiles.push(f);
  };
  for (const p of paths) consider(p, true);
  return { todo, deleted: [...new Set(deleted)], attachments, goneFiles: [...new Set(goneFiles)] };
}

// Paths an update looks up and stats between two turns of the event loop (~20 ms of work).
const PLAN_SLICE = 500;

/**
 * update()'s plan: what the index holds under `paths` (knownUnder) and how the disk differs (diffPaths),
 * PLAN_SLICE paths at a time with a turn of the event loop between: a checkout or a sync naming 20,000 notes
 * spent ~0.75 s in one stretch looking them up and stat'ing them. Nothing of this process writes the index
 * meanwhile (passes run one at a time); another process that does is caught by apply's check, which plans again.
 */
export async function comparePaths(root: string, db: Database, paths: string[], foreign: boolean): Promise<{ known: Map<string, KnownNote>; diff: ListingDiff }> {
  if (paths.length <= PLAN_SLICE) {
    const known = knownUnder(db, paths);
    return { known, diff: diffPaths(root, db, paths, known, foreign) };
  }
  const known = new Map<string, KnownNote>();
  const todo = new Map<string, FileEntry>();
  const attachments = new Map<string, FileEntry>();
  const deleted = new Set<string>();
  const goneFiles = new Set<string>();
  for (let i = 0; i < paths.length; i += PLAN_SLICE) {
    if (i > 0) await nextTurn();
    const slice = paths.slice(i, i + PLAN_SLICE);
    const k = knownUnder(db, slice);
    for (const [p, row] of k) known.set(p, row);
    const d = diffPaths(root, db, slice, k, foreign);
    // A note can be named in one slice and found under a folder named in another: once each.
    for (const e of d.todo) if (!todo.has(e.path)) todo.set(e.path, e);
    for (const e of d.attachments) if (!attachments.has(e.path)) attachments.set(e.path, e);
    for (const p of d.deleted) deleted.add(p);
    for (const p of d.goneFiles) goneFiles.add(p);
  }
  return { known, diff: { todo: [...todo.values()], attachments: [...attachments.values()], deleted: [...deleted], goneFiles: [...goneFiles] } };
}
