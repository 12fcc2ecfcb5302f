import { lstatSync, readdirSync, type Stats } from "node:fs";
import { join, sep } from "node:path";
import { isIgnoredPath, lstatInVault } from "./paths";

export interface FileEntry {
  path: string; // vault-relative, '/'-separated
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

export interface VaultListing {
  notes: FileEntry[];
  attachments: FileEntry[];
  folders: string[];
}

export function isNotePath(rel: string): boolean {
  return /\.md$/i.test(rel);
}

function entryOf(rel: string, st: Stats): FileEntry {
  return { path: rel, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.birthtimeMs || st.ctimeMs };
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

/** Every note and attachment the scan would list, handed over as it is stat'ed (no listing built). */
export function visitVaultFiles(root: string, file: (rel: string, st: Stats) => void): void {
  for (const _ of walk(root, "", { folder: () => {}, file }));
}

interface Visitor {
  folder(rel: string): void;
  /** null: no file is stat'ed (folders only). */
  file: ((rel: string, st: Stats) => void) | null;
}

function listInto(out: VaultListing): Visitor {
  return {
    folder: (rel) => void out.folders.push(rel),
    file: (rel, st) => void (isNotePath(rel) ? out.notes : out.attachments).push(entryOf(rel, st)),
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

/** Walks one folder and, depth first, those under it; yields how many files it handed over since the last yield. */
function* walk(root: string, dirRel: string, visit: Visitor): Generator<number> {
  let entries;
  try {
    entries = readdirSync(dirRel ? join(root, dirRel) : root, { withFileTypes: true });
  } catch {
    return; // vanished or unreadable while we walked: the watcher will catch up
  }
  let files = 0;
  // The folder's absolute path once: path.join per file (it normalises every time) was ~0.13 s of a 100k-note restart.
  const dirAbs = dirRel ? join(root, dirRel) : root;
  for (const d of entries) {
    const rel = dirRel ? `${dirRel}/${d.name}` : d.name;
    if (isIgnoredPath(d.name)) continue;
    if (d.isDirectory()) {
      // Depth first, in readdir order, as before: listing order decides new notes' ids on a cold scan.
      visit.folder(rel);
      yield files;
      files = 0;
      yield* walk(root, rel, visit);
    } else if (d.isFile() && visit.file) {
      let st: Stats;
      try {
        st = lstatSync(dirAbs + sep + d.name);
      } catch {
        continue;
      }
      if (!st.isFile()) continue; // replaced by a link or a folder since readdir
      visit.file(rel, st);
      // A flat folder of 30k notes must not be one unbroken stretch either.
      if (++files >= 128) {
        yield files;
        files = 0;
      }
    }
  }
  yield files;
}

/** Stat one vault file; null when it is gone, not a regular file, or reached through a symlink. */
export function statEntry(root: string, rel: string): FileEntry | null {
  const st = lstatInVault(root, rel);
  return st?.isFile() ? entryOf(rel, st) : null;
}
