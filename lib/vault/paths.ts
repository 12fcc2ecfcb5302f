import { lstatSync, readdirSync, realpathSync, type Stats } from "node:fs";
import { join } from "node:path";
import { ToolError } from "../errors";
import { platformPathProblem, toVaultRelative } from "../platform/paths";
import { isUnaddressableName } from "./unaddressable";

// Directories that are never part of the vault's content. `.lettuce` holds our
// own databases; the others belong to editors, sync tools and package managers.
export const IGNORED_DIRS = new Set([".lettuce", ".obsidian", ".trash", ".git", "node_modules"]);

/**
 * Folders never indexed whatever their letter case (on a disk that ignores case, `NODE_MODULES` is that
 * folder): a package manager's, and what NAS and OS recycle bins put into synced folders (Synology's
 * `@eaDir` thumbnails and `#recycle`, Windows' `$RECYCLE.BIN`), whose deleted notes were searchable.
 * Lower-case; the freshness walk in C gets this list and compares the same way.
 */
export const NEVER_INDEXED_NAMES = new Set(["node_modules", "@eadir", "#recycle", "$recycle.bin"]);

/** Longest file or folder name most filesystems take (bytes of UTF-8), and longest path. */
export const MAX_NAME_BYTES = 255;
export const MAX_PATH_BYTES = 4096;

/**
 * True when a vault-relative path is hidden from agents: a dot-file or
 * dot-folder anywhere in it (`.git`, `.obsidian`, `.trash`, `.env`,
 * `.lettuce`), a folder we never index (NEVER_INDEXED_NAMES), or a name no tool
 * path can spell (./unaddressable.ts: a backslash, a control character).
 */
export function isIgnoredPath(rel: string): boolean {
  // One name (the walk asks for each directory entry): no split, which was ~0.1 s of a 100k-note restart.
  if (!rel.includes("/")) return isIgnoredName(rel);
  for (const part of rel.split("/")) {
    if (isIgnoredName(part)) return true;
  }
  return false;
}

/**
 * One name of a path. NEVER_INDEXED_NAMES in any letter case: on a case-insensitive
 * disk `NODE_MODULES/x.md` is that folder, and a write respells an existing
 * folder's case (existingFolderSpelling), so a case-sensitive test let agents in.
 */
function isIgnoredName(part: string): boolean {
  const c = part.charCodeAt(0);
  if (part.length > 1 && c === 46) return true; // "."
  // Only names that can be one of them are lower-cased (the walk asks for every entry).
  const candidate = part.length >= 6 && part.length <= 12 && (c === 110 || c === 78 || c === 64 || c === 35 || c === 36); // n N @ # $
  return IGNORED_DIRS.has(part) || (candidate && NEVER_INDEXED_NAMES.has(part.toLowerCase())) || isUnaddressableName(part);
}

function invalid(input: string, why: string, kind = "path-invalid"): never {
  throw new ToolError(kind, `Invalid path ${JSON.stringify(input)}: ${why}`);
}

/** Check one spelling of a path and return its canonical parts. */
function checkedParts(input: string, p: string, opts: { allowRoot?: boolean }): string[] {
  if (p.includes("\0")) invalid(input, "contains a NUL byte");
  // Half of a surrogate pair is no character: written, it became U+FFFD, so "a\ud800.md" and "a\udc00.md"
  // named one file and the answer named another (the Unicode audit).
  if (!p.isWellFormed()) invalid(input, "contains half of a surrogate pair (not Unicode text)");
  if (p.includes("\\")) invalid(input, "backslashes are not allowed; use '/'");
  if (/^[a-zA-Z]:/.test(p)) invalid(input, "absolute paths are not allowed");
  if (p.startsWith("/") && !(opts.allowRoot && p === "/")) invalid(input, "absolute paths are not allowed; use a vault-relative path");
  if (p.startsWith("~")) invalid(input, "home-relative paths are not allowed");
  const parts: string[] = [];
  for (const part of p.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") invalid(input, "'..' is not allowed");
    if (/[\u0000-\u001f\u007f]/.test(part)) invalid(input, "control characters are not allowed");
    if (part === ".lettuce") invalid(input, "the .lettuce directory is private to the server");
    if (part.startsWith(".") || isIgnoredName(part)) {
      invalid(input, `hidden files and folders (${part}) are not part of the vault for agents (.git, .obsidian, .trash, .env, … are never read, written or listed)`);
    }
    if (Buffer.byteLength(part) > MAX_NAME_BYTES) invalid(input, `the name "${part.slice(0, 40)}…" is over ${MAX_NAME_BYTES} bytes`, "too-long");
    parts.push(part);
  }
  if (Buffer.byteLength(parts.join("/")) > MAX_PATH_BYTES) invalid(input, `the path is over ${MAX_PATH_BYTES} bytes`, "too-long");
  const why = platformPathProblem(parts.join("/")); // Windows: device names, trailing dots, streams (lib/platform/paths.ts)
  if (why) invalid(input, why);
  return parts;
}

/**
 * Every spelling of an agent-supplied path to try, in order, each canonical
 * and checked: the literal path first (a note may really be called
 * `Meeting%20Notes.md` or `100%25 done.md`), then its percent-decoded form
 * (agents copy paths out of URLs), each in NFC and NFD (macOS writes NFD
 * names; agents send NFC). Traversal, hidden names and the rest are refused
 * in any spelling: decoding (up to three times) is there to refuse
 * `%252e%252e`, never to reach a file the literal path does not name.
 */
export function pathSpellings(input: string, opts: { allowRoot?: boolean } = {}): string[] {
  if (typeof input !== "string") invalid(String(input), "not a string");
  const literal = checkedParts(input, input, opts).join("/");
  const forms = [literal];
  let p = input;
  for (let i = 0; i < 3 && /%[0-9a-fA-F]{2}/.test(p); i++) {
    try {
      p = decodeURIComponent(p);
    } catch {
      // Not an encoding after all (a name like "50%ab off.md"): the literal spelling stands.
      if (i === 0) break;
      invalid(input, "malformed percent-encoding");
    }
    forms.push(checkedParts(input, p, opts).join("/"));
  }
  const out: string[] = [];
  // A form a file system could not hold is no spelling to try: a legal composed Korean title of 126 bytes is
  // 303 decomposed, and looking that up answered too-long for the note the agent named (the Unicode audit).
  const fits = (g: string) => Buffer.byteLength(g) <= MAX_PATH_BYTES && g.split("/").every((part) => Buffer.byteLength(part) <= MAX_NAME_BYTES);
  for (const f of forms.slice(0, 2)) for (const g of [f, f.normalize("NFC"), f.normalize("NFD")]) if (!out.includes(g) && (g === f || fits(g))) out.push(g);
  if (out[0] === "" && !opts.allowRoot) invalid(input, "empty path");
  return out;
}

/**
 * Turn an agent-supplied path into a canonical vault-relative one, or refuse it
 * (path-invalid; too-long for an over-long name). The literal spelling: callers
 * that look a file up try pathSpellings() in turn.
 * `allowRoot` lets folder arguments name the vault root as "" or "/".
 */
export function normalizeVaultPath(input: string, opts: { allowRoot?: boolean } = {}): string {
  return pathSpellings(input, opts)[0]!;
}

/**
 * lstat of a vault-relative path when no component of it is a symlink (and
 * every component but the last is a folder); null when it does not exist or
 * goes through a link. Symlinks are never followed: the one rule for the
 * start-up scan, the watcher and the tools.
 */
export function lstatInVault(root: string, rel: string): Stats | null {
  if (!rel) {
    try {
      return lstatSync(root); // the root itself: a link here is the vault folder being swapped out
    } catch {
      return null;
    }
  }
  const parts = rel.split("/");
  let abs = root;
  for (let i = 0; i < parts.length; i++) {
    abs = join(abs, parts[i]!);
    let st: Stats;
    try {
      st = lstatSync(abs);
    } catch {
      return null;
    }
    if (st.isSymbolicLink()) return null;
    if (i === parts.length - 1) return st;
    if (!st.isDirectory()) return null;
  }
  return null;
}

/**
 * Absolute filesystem path for a vault-relative path, refusing one that goes
 * through a symlink (in or out of the vault: links are never followed) or
 * through a file as if it were a folder. Missing files are fine (the caller
 * decides between not-found and create); the existing part of the path is checked.
 */
export function safeAbsPath(root: string, rel: string): string {
  if (!rel) return root;
  const parts = rel.split("/");
  let abs = root;
  for (let i = 0; i < parts.length; i++) {
    abs = join(abs, parts[i]!);
    let st: Stats;
    try {
      st = lstatSync(abs);
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === "ENAMETOOLONG") invalid(rel, "a name in it is too long for the filesystem", "too-long");
      if (code === "ENOTDIR") invalid(rel, `${parts.slice(0, i).join("/")} is a file, not a folder`);
      return join(root, ...parts); // the rest does not exist yet
    }
    if (st.isSymbolicLink()) invalid(rel, `${parts.slice(0, i + 1).join("/")} is a symbolic link; Lettuce never follows links`);
    if (i < parts.length - 1 && !st.isDirectory()) invalid(rel, `${parts.slice(0, i + 1).join("/")} is a file, not a folder`);
  }
  // Belt and braces: the real path must still be inside the real vault root.
  try {
    const real = realpathSync(abs);
    const realRoot = realRootOf(root);
    if (toVaultRelative(realRoot, real) === null) invalid(rel, "it leaves the vault"); // lib/platform/paths.ts: Windows drives and case too
  } catch (e) {
    if (e instanceof ToolError) throw e;
  }
  return abs;
}

/**
 * The vault-relative path with each existing folder spelled as it is on disk:
 * `PLUGINS/x.md` becomes `Plugins/x.md` when the vault has `Plugins/`, and an
 * NFC folder name finds its NFD twin, so that a write lands beside its
 * siblings instead of creating a look-alike folder. The last part is kept.
 */
export function existingFolderSpelling(root: string, rel: string): string {
  const parts = rel.split("/");
  let abs = root;
  for (let i = 0; i < parts.length - 1; i++) {
    const want = parts[i]!;
    let st: Stats | null = null;
    try {
      st = lstatSync(join(abs, want));
    } catch {
      /* not there under this spelling */
    }
    if (!st) {
      const key = foldName(want);
      let match: string | undefined;
      try {
        match = readdirSync(abs, { withFileTypes: true }).find((d) => d.isDirectory() && foldName(d.name) === key)?.name;
      } catch {
        /* a folder that does not exist yet: keep the rest as given */
      }
      if (!match) break;
      parts[i] = match;
    }
    abs = join(abs, parts[i]!);
  }
  return parts.join("/");
}

/** A file or folder name compared the way a person would: case and Unicode normalisation aside. */
export function foldName(name: string): string {
  return name.normalize("NFC").toLowerCase();
}

/**
 * A folder argument (list_notes, list_attachments, directive scopes): the first
 * spelling that is a folder in the vault, else the literal one (which lists nothing).
 */
export function resolveFolder(root: string, input: string): string {
  const spellings = pathSpellings(input, { allowRoot: true });
  for (const rel of spellings) {
    safeAbsPath(root, rel);
    if (!rel || lstatInVault(root, rel)?.isDirectory()) return rel;
  }
  // In another letter case or normalisation, as the write tools find a note's folder.
  const respelled = existingFolderSpelling(root, `${spellings[0]!}/-`).slice(0, -2);
  if (respelled !== spellings[0] && lstatInVault(root, respelled)?.isDirectory()) return respelled;
  return spellings[0]!;
}

/**
 * An OS error from touching a vault path, as the kind an agent can act on
 * (path-invalid, too-long), or null when it is not about the path.
 */
export function osPathError(e: unknown, rel: string): ToolError | null {
  const code = (e as { code?: string } | null)?.code;
  const why: Record<string, [string, string]> = {
    ENAMETOOLONG: ["too-long", "a name in it is too long for the filesystem"],
    ENOTDIR: ["path-invalid", "part of it is a file, not a folder"],
    EISDIR: ["path-invalid", "it is a folder"],
    ELOOP: ["path-invalid", "it goes through a symbolic link"],
    EEXIST: ["path-invalid", "a file or a broken link is in the way of a folder it needs"],
    ENOENT: ["path-invalid", "a folder in it vanished or is a broken link"],
    EINVAL: ["path-invalid", "the filesystem refuses this name"],
    EILSEQ: ["path-invalid", "the filesystem refuses this name"],
  };
  const hit = code ? why[code] : undefined;
  return hit ? new ToolError(hit[0], `Invalid path ${JSON.stringify(rel)}: ${hit[1]}`) : null;
}

const realRoots = new Map<string, string>();
function realRootOf(root: string): string {
  let r = realRoots.get(root);
  if (!r) {
    r = realpathSync(root);
    realRoots.set(root, r);
  }
  return r;
}
