import { readdirSync, statSync, type Stats } from "node:fs";
import { join } from "node:path";
import { isIgnoredPath } from "./paths";

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
 * Walk the vault once. Symlinks are not followed: a link that points outside
 * the vault must not pull foreign files into the index. With `foldersOnly`
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
          st = statSync(join(root, rel));
        } catch {
          continue;
        }
        (isNotePath(rel) ? out.notes : out.attachments).push(entryOf(rel, st));
      }
    }
  };
  walk("");
  return out;
}

/** Stat one vault file; null when it is gone or not a regular file. */
export function statEntry(root: string, rel: string): FileEntry | null {
  try {
    const st = statSync(join(root, rel));
    return st.isFile() ? entryOf(rel, st) : null;
  } catch {
    return null;
  }
}
