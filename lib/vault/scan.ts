import { existsSync, readdirSync, type Dirent, type Stats } from "node:fs";
import { join } from "node:path";
import { changeStampOf, ENTRY_FILE, folderIsGone, openStatFolder } from "../platform/folder-stat";
import { isIgnoredPath, lstatInVault } from "./paths";
import { isUnaddressableName, tellUnaddressable } from "./unaddressable";

export interface FileEntry {
  path: string; // vault-relative, '/'-separated
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  /** st_ctime with the inode folded in (lib/platform/change-stamp.ts): with size and mtime, what tells the scan a file changed (a tool can put an mtime back, not this). */
  changeMs: number;
}

export interface VaultListing {
  notes: FileEntry[];
  attachments: FileEntry[];
  folders: string[];
}

export function isNotePath(rel: string): boolean {
  return /\.md$/i.test(rel);
}

/**
 * Largest Markdown file that is a note. Past it (a log or data dump saved as .md) the file is listed as an
 * attachment: read whole, hashed and parsed, 300 MB took 17 s and 1.9 GB of memory to index, and every tool that
 * reads a note would read all of it. A person's 12 MB note is still a note.
 */
export const MAX_NOTE_FILE_BYTES = 64 * 1024 * 1024;

/** A file that the index keeps as a note (Markdown, and not past MAX_NOTE_FILE_BYTES). */
export function isNoteEntry(rel: string, size: number): boolean {
  return size <= MAX_NOTE_FILE_BYTES && isNotePath(rel);
}

function entryOf(root: string, rel: string, st: Stats): FileEntry {
  return { path: rel, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.birthtimeMs || st.ctimeMs, changeMs: changeStampOf(join(root, rel), st.ctimeMs, st.ino) };
}

/**
 * Walk the vault once. Symlinks are never followed (lstat throughout, the
 * same rule as the watcher's path): a link must not pull files from outside
 * the vault, or hidden ones from inside it, into the index. With `foldersOnly`
 * no file is stat'ed (list_folders wants the tree, not the files).
 */
export function scanVault(root: string, opts: { foldersOnly?: boolean } = {}): VaultListing {
  const out: VaultListing = { notes: [], attachments: [], folders: [] };
  const visit = listInto(out);
  for (const _ of walk(root, "", opts.foldersOnly ? { folder: visit.folder, file: null } : visit));
  return out;
}

/** Every note and attachment the scan would list, with its size, mtime and st_ctime, handed over as it is stat'ed (no listing built). */
export function visitVaultFiles(root: string, file: (rel: string, size: number, mtimeMs: number, changeMs: number) => void): void {
  for (const _ of walk(root, "", { folder: () => {}, file: (rel, size, mtimeMs, _ctimeMs, changeMs) => file(rel, size, mtimeMs, changeMs), quiet: true }));
}

interface Visitor {
  folder(rel: string): void;
  /** null: no file is stat'ed (folders only). */
  file: ((rel: string, size: number, mtimeMs: number, ctimeMs: number, changeMs: number) => void) | null;
  /** Leave files with names agents cannot use out without a word (a CLI search's freshness check, run in loops). */
  quiet?: boolean;
}

function listInto(out: VaultListing): Visitor {
  return {
    folder: (rel) => void out.folders.push(rel),
    file: (rel, size, mtimeMs, ctimeMs, changeMs) => void (isNoteEntry(rel, size) ? out.notes : out.attachments).push({ path: rel, size, mtimeMs, ctimeMs, changeMs }),
  };
}

/**
 * The same walk, giving the event loop a turn every `every` files: the server's
 * start-up scan of a big vault (10k notes: ~0.1 s of lstat) must not hold the
 * first requests (an `initialize` sent at launch) until it ends.
 */
export async function scanVaultYielding(root: string, every = 512): Promise<VaultListing> {
  const out: VaultListing = { notes: [], attachments: [], folders: [] };
  let files = 0;
  for (const n of walk(root, "", listInto(out))) {
    files += n;
    if (files >= every) {
      files = 0;
      await new Promise((r) => setImmediate(r));
    }
  }
  return out;
}

/**
 * Walks one folder and, depth first, those under it; yields how many files it handed over since the last yield.
 * Files are stat'ed through lib/platform/folder-stat.ts: by statx relative to the open folder where it can
 * (about twice as fast as lstatSync by path: the system call dominates a warm scan), else by lstat.
 */
function* walk(root: string, dirRel: string, visit: Visitor): Generator<number> {
  // The folder's absolute path once: path.join per file (it normalises every time) was ~0.13 s of a 100k-note restart.
  const dirAbs = dirRel ? join(root, dirRel) : root;
  let entries: Dirent[];
  try {
    entries = readdirSync(dirAbs, { withFileTypes: true });
  } catch (e) {
    if (!dirRel) throw rootUnreadable(root, e);
    // Vanished or unreadable while we walked: the watcher will catch up. Any other error fails the pass (it is tried again).
    if (folderIsGone(e)) return;
    throw e;
  }
  const folder = visit.file ? openStatFolder(dirAbs) : null;
  if (visit.file && !folder) {
    if (!dirRel) throw rootUnreadable(root, null);
    return;
  }
  try {
    let files = 0;
    for (const d of entries) {
      const rel = dirRel ? `${dirRel}/${d.name}` : d.name;
      if (isIgnoredPath(d.name)) {
        if (!visit.quiet && isUnaddressableName(d.name)) tellUnaddressable(rel);
        continue;
      }
      if (d.isDirectory()) {
        // A name that is not UTF-8, decoded lossily, names no folder: listed, it was a path no tool could use,
        // and its notes were left out without a word.
        if (d.name.includes("\uFFFD") && !existsSync(join(root, rel))) {
          if (!visit.quiet) tellUnaddressable(rel);
          continue;
        }
        // Depth first, in readdir order, as before: listing order decides new notes' ids on a cold scan.
        visit.folder(rel);
        yield files;
        files = 0;
        yield* walk(root, rel, visit);
      } else if (d.isFile() && folder && visit.file) {
        const st = folder.stat(d.name);
        if (!st && !visit.quiet && d.name.includes("\uFFFD")) tellUnaddressable(rel); // a name that is not UTF-8, decoded lossily
        if (st?.kind !== ENTRY_FILE) continue; // gone, or replaced by a link or a folder since readdir
        visit.file(rel, st.size, st.mtimeMs, st.ctimeMs, st.changeMs);
        // A flat folder of 30k notes must not be one unbroken stretch either.
        if (++files >= 128) {
          yield files;
          files = 0;
        }
      }
    }
    yield files;
  } finally {
    folder?.close();
  }
}

/**
 * A vault root the walk cannot list (gone, a link, out of file descriptors): an error, never an empty
 * listing, which the indexer would take for "every note was deleted".
 */
function rootUnreadable(root: string, cause: unknown): Error {
  const why = cause instanceof Error ? `: ${cause.message}` : " (not a real folder: a link, or gone)";
  return new Error(`cannot list the vault folder ${root}${why}`, { cause });
}

/** Stat one vault file; null when it is gone, not a regular file, or reached through a symlink. */
export function statEntry(root: string, rel: string): FileEntry | null {
  const st = lstatInVault(root, rel);
  return st?.isFile() ? entryOf(root, rel, st) : null;
}
