import { lstatSync, readdirSync, type Stats } from "node:fs";
import { join } from "node:path";
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
  const walk = (dirRel: string) => {
    let entries;
    try {
      entries = readdirSync(dirRel ? join(root, dirRel) : root, { withFileTypes: true });
    } catch {
      return; // vanished or unreadable while we walked: the watcher will catch up
    }
    for (const d of entries) {
      const rel = dirRel ? `${dirRel}/${d.name}` : d.name;
      if (isIgnoredPath(d.name)) continue;
      if (d.isDirectory()) {
        out.folders.push(rel);
        walk(rel);
      } else if (d.isFile() && !opts.foldersOnly) {
        let st: Stats;
        try {
          st = lstatSync(join(root, rel));
        } catch {
          continue;
        }
        if (!st.isFile()) continue; // replaced by a link or a folder since readdir
        (isNotePath(rel) ? out.notes : out.attachments).push(entryOf(rel, st));
      }
    }
  };
  walk("");
  return out;
}

/** Stat one vault file; null when it is gone, not a regular file, or reached through a symlink. */
export function statEntry(root: string, rel: string): FileEntry | null {
  const st = lstatInVault(root, rel);
  return st?.isFile() ? entryOf(rel, st) : null;
}
