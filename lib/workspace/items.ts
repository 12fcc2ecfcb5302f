// The workspace's items over a vault (see docs/workspace.md, "Mapping"):
// a note is a `page` (or a `database_row`), a `.base` file a `database`, a
// folder a `folder`; every id is the vault-relative path; the tree is the
// folder tree, and a folder's index note (Folder/Folder.md, Folder/🗂️
// Folder.md, Folder/index.md, Folder/README.md) stands for the folder.
import type { Database } from "bun:sqlite";
import { lstatSync } from "node:fs";
import { ToolError } from "../errors";
import { findNote, SUMMARY_COLUMNS, type NoteRow } from "../retrieval/notes";
import { inList } from "../semantic/store";
import { isIgnoredPath, normalizeVaultPath, safeAbsPath } from "../vault/paths";
import type { VaultContext } from "../vault-context";
import { classifyNote, databaseTitle, isDatabasePath, type ItemType, type NoteClass } from "./databases";
import { fold } from "./text";
import { indexMemo } from "./vault-cache";

export interface ItemRef {
  id: string;
  type: ItemType;
  title: string;
  databaseId?: string;
}

export type Resolved =
  | { kind: "note"; path: string; row: NoteRow }
  | { kind: "database"; path: string }
  | { kind: "folder"; path: string };

/** The folder part of a vault path ("" at the root). */
export function folderOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "" : path.slice(0, i);
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** Folder names from the root down to (not including) the item: a search result's breadcrumb. */
export function breadcrumbOf(path: string): string[] {
  const f = folderOf(path);
  return f ? f.split("/") : [];
}

function kindOnDisk(root: string, rel: string): "dir" | "file" | null {
  try {
    const st = lstatSync(safeAbsPath(root, rel));
    return st.isDirectory() ? "dir" : st.isFile() ? "file" : null; // a symlink is neither: never followed
  } catch (e) {
    if (e instanceof ToolError) throw e;
    return null;
  }
}

/**
 * An agent-supplied item id → what it names. Paths are checked as everywhere
 * (path-invalid for traversal, absolute paths, hidden entries); a missing item
 * is note-not-found. A bare id without extension names a folder when one
 * exists, else the note with ".md" added (as read_note accepts).
 */
export function resolveItem(vault: VaultContext, id: string): Resolved {
  const rel = normalizeVaultPath(id);
  if (isIgnoredPath(rel)) throw new ToolError("path-invalid", `Invalid path ${JSON.stringify(id)}: hidden files and folders are not part of the workspace`);
  // Each branch checks the path on disk (symlinks, a file as a folder): kindOnDisk and findNote both call safeAbsPath.
  if (isDatabasePath(rel)) {
    if (kindOnDisk(vault.root, rel) !== "file") throw new ToolError("note-not-found", `Database not found: ${rel}`);
    return { kind: "database", path: rel };
  }
  if (!/\.md$/i.test(rel) && kindOnDisk(vault.root, rel) === "dir") return { kind: "folder", path: rel };
  const row = findNote(vault.indexDb, vault.root, rel);
  return { kind: "note", path: row.path, row };
}

/** Titles of indexed notes by path (a note not indexed yet is absent). */
export function noteRowsByPath(db: Database, paths: string[]): Map<string, NoteRow> {
  if (!paths.length) return new Map();
  const rows = db.query(`SELECT ${SUMMARY_COLUMNS} FROM notes WHERE ${inList("path")}`).all(JSON.stringify(paths)) as NoteRow[];
  return new Map(rows.map((r) => [r.path, r]));
}

export function noteTitleFallback(path: string): string {
  return baseName(path).replace(/\.md$/i, "");
}

/** An item reference ({id, type, title, databaseId?}) for a resolved item. */
export function refOf(vault: VaultContext, r: Resolved, knownClass?: NoteClass): ItemRef {
  if (r.kind === "folder") return { id: r.path, type: "folder", title: baseName(r.path) };
  if (r.kind === "database") return { id: r.path, type: "database", title: databaseTitle(r.path) };
  const cls = knownClass ?? classifyNote(vault, r.path);
  return { id: r.path, type: cls.type, title: r.row.title, ...(cls.databaseId ? { databaseId: cls.databaseId } : {}) };
}

// Names that make a note its folder's index page, besides the folder's own name.
const INDEX_NAMES = new Set(["index", "readme", "_index"]);

/** A note name with leading emoji and punctuation dropped, folded: "🗂️ 01 - Community" → "01 - community". */
function indexKey(name: string): string {
  return fold(name.replace(/\.md$/i, "")).replace(/^[^\p{L}\p{N}]+/u, "").trim();
}

/** Is this note its folder's index page? */
export function isIndexNote(path: string): boolean {
  const folder = folderOf(path);
  if (!folder) return false;
  const key = indexKey(baseName(path));
  return key === indexKey(baseName(folder)) || INDEX_NAMES.has(key);
}

const INDEX_NOTES = {};

/** The index page of a folder, if it has one (its own-name note first, then index, README, _index); cached until the index changes. */
export function folderIndexNote(vault: VaultContext, folder: string): NoteRow | null {
  if (!folder) return null;
  const cache = indexMemo(vault, INDEX_NOTES, () => new Map<string, NoteRow | null>());
  let hit = cache.get(folder);
  if (hit === undefined) {
    hit = findFolderIndexNote(vault.indexDb, folder);
    cache.set(folder, hit);
  }
  return hit;
}

function findFolderIndexNote(db: Database, folder: string): NoteRow | null {
  const name = baseName(folder);
  const rows = db
    .query(`SELECT ${SUMMARY_COLUMNS} FROM notes WHERE folder = ? AND (name LIKE ? ESCAPE '\\' OR lower(name) IN ('index', 'readme', '_index')) ORDER BY path`)
    .all(folder, "%" + name.replace(/[\\%_]/g, (c) => "\\" + c)) as NoteRow[];
  const own = indexKey(name);
  return rows.find((r) => indexKey(r.name) === own) ?? rows.find((r) => INDEX_NAMES.has(indexKey(r.name))) ?? null;
}

/**
 * The tree parent of an item: the folder it is in (or that folder's index
 * page, which stands for it); for a folder's index page, the folder above.
 * null at the root.
 */
export function parentOf(vault: VaultContext, r: Resolved): ItemRef | null {
  let folder = folderOf(r.path);
  if (r.kind === "note" && isIndexNote(r.path)) folder = folderOf(folder);
  if (!folder) return null;
  const idx = folderIndexNote(vault, folder);
  if (idx && idx.path !== r.path) return { id: idx.path, type: "page", title: idx.title };
  return { id: folder, type: "folder", title: baseName(folder) };
}

/** The folder whose children a page stands for: its own folder when it is that folder's index page. */
export function folderRepresented(r: Resolved): string | null {
  if (r.kind === "folder") return r.path;
  if (r.kind === "note" && isIndexNote(r.path)) return folderOf(r.path);
  return null;
}
