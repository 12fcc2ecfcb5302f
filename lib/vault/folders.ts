// The vault's folder tree, kept between calls. Listing it walks every folder's
// entries, files included (readdir cannot skip them): 55-60 ms on the request
// thread at 100k notes for 13 folders. A folder's change time moves whenever
// an entry is added to it, removed or renamed, so the kept tree is still right
// while every folder it names (the root too) has the change time it had when
// the tree was walked: a dozen lstat calls instead of the walk.
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { scanVault } from "./scan";

// Timestamps are coarse (a few ms on Linux, 2 s on FAT): a folder changed in the same tick right after our walk
// keeps its stamp. A tree is kept only when every folder's last change is older than this before the walk.
const SETTLED_MS = 3000;

interface KeptTree {
  folders: string[];
  stamps: Map<string, string>;
}

const kept = new Map<string, KeptTree>();
/** How many times the tree was walked (tests read it to tell a kept answer from a walked one). */
export const folderWalks = { count: 0 };

/** A folder's identity and last change, or null when it is gone or no longer a real folder. */
function stamp(root: string, rel: string): { key: string; ctimeNs: bigint } | null {
  try {
    const st = lstatSync(rel ? join(root, rel) : root, { bigint: true });
    if (!st.isDirectory()) return null;
    return { key: `${st.dev}:${st.ino}:${st.ctimeNs}`, ctimeNs: st.ctimeNs };
  } catch {
    return null;
  }
}

function stillTrue(root: string, tree: KeptTree): boolean {
  for (const [rel, was] of tree.stamps) if (stamp(root, rel)?.key !== was) return false;
  return true;
}

/** Every non-hidden folder under the root, sorted, empty ones included; symlinked folders are not followed. */
export function listFolders(root: string, settledMs = SETTLED_MS): string[] {
  const tree = kept.get(root);
  if (tree && stillTrue(root, tree)) return tree.folders.slice();
  kept.delete(root);
  const before = BigInt(Date.now()) * 1_000_000n;
  folderWalks.count++;
  const folders = scanVault(root, { foldersOnly: true }).folders.sort();
  const stamps = new Map<string, string>();
  let settled = true;
  for (const rel of ["", ...folders]) {
    const s = stamp(root, rel);
    // Gone already, or changed since the walk began (or too recently to tell): walk again next time.
    if (!s || s.ctimeNs > before - BigInt(settledMs) * 1_000_000n) settled = false;
    if (s) stamps.set(rel, s.key);
  }
  if (settled) kept.set(root, { folders, stamps });
  return folders.slice();
}
