// Case-insensitive file systems (macOS's APFS and HFS+ by default, Windows'
// NTFS): there `notes/idea.md` opens `Notes/Idea.md`, so a path an agent
// sends in another letter case would reach an existing file under a name the
// index does not know, and a write would rename it or split it into two index
// rows. Paths are therefore put in the case the disk has before use.
import { closeSync, existsSync, openSync, readdirSync, rmSync } from "node:fs";
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
 * `rel` ('/'-separated, vault-relative) with each existing segment spelled as
 * on disk: when a segment is not there in exactly this case, the one entry of
 * its folder that matches case-insensitively is taken. Segments that do not
 * exist yet (a note being created) keep the caller's spelling. Only for
 * case-insensitive file systems: on others two such names are two files.
 */
export function onDiskCase(root: string, rel: string): string {
  const parts = rel.split("/");
  let dir = root;
  for (let i = 0; i < parts.length; i++) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      break; // the rest does not exist yet
    }
    const want = parts[i]!;
    if (!names.includes(want)) {
      const folded = want.normalize("NFC").toLowerCase();
      const hits = names.filter((n) => n.normalize("NFC").toLowerCase() === folded);
      if (hits.length !== 1) break;
      parts[i] = hits[0]!;
    }
    dir = join(dir, parts[i]!);
  }
  return parts.join("/");
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
