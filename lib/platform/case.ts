// Case-insensitive file systems (macOS's APFS and HFS+ by default, Windows'
// NTFS): there `notes/idea.md` opens `Notes/Idea.md`. The write path puts an
// agent's path in the disk's spelling on every system (lib/vault/paths.ts,
// lib/write/notes.ts); this module tells `lettuce doctor` which rule the
// vault's file system follows, and which files would collide under it.
import { closeSync, existsSync, openSync, rmSync } from "node:fs";
import { join } from "node:path";

const known = new Map<string, boolean>();

/**
 * Does the file system holding `root` ignore letter case? Probed once per root
 * by creating a file and looking for it under another case.
 * LETTUCE_FS_CASE=sensitive|insensitive overrides the probe (for unusual
 * mounts, and for tests on Linux, whose file systems are case-sensitive).
 */
export function isCaseInsensitive(root: string, env: Record<string, string | undefined> = process.env): boolean {
  const forced = env.LETTUCE_FS_CASE;
  if (forced === "insensitive") return true;
  if (forced === "sensitive") return false;
  let v = known.get(root);
  if (v === undefined) {
    v = probe(root);
    known.set(root, v);
  }
  return v;
}

function probe(root: string): boolean {
  // In .lettuce/ when it exists, else a dot-file (hidden from the index) in the vault itself, gone at once.
  const dir = existsSync(join(root, ".lettuce")) ? join(root, ".lettuce") : root;
  const name = `.lettuce-case-probe-${process.pid}-Ab.tmp`;
  try {
    closeSync(openSync(join(dir, name), "wx"));
    try {
      return existsSync(join(dir, name.toLowerCase())) && existsSync(join(dir, name.toUpperCase()));
    } finally {
      rmSync(join(dir, name), { force: true });
    }
  } catch {
    // Read-only vault: assume what the platform usually has.
    return process.platform === "darwin" || process.platform === "win32";
  }
}

/**
 * Groups of vault paths that differ only in letter case (or Unicode
 * normalisation): two files on Linux, one on macOS and Windows, where a copy,
 * a sync tool or a checkout keeps only one of them.
 */
export function caseTwins(paths: string[]): string[][] {
  const byKey = new Map<string, string[]>();
  for (const p of paths) {
    const k = p.normalize("NFC").toLowerCase();
    const g = byKey.get(k);
    if (g) g.push(p);
    else byKey.set(k, [p]);
  }
  return [...byKey.values()].filter((g) => g.length > 1).map((g) => g.sort());
}
