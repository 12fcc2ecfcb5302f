// list_workspace: one folder's items (sub-folders, notes, databases), a page
// at a time. The order is (folders first, then files) × vault path, a total
// order on names that never change while an item exists, so a cursor is
// just the sort key of the last item handed out (keyset pagination): items
// added or removed between two calls shift nothing among the others, and
// none is skipped or repeated.
import { readdirSync } from "node:fs";
import { ToolError } from "../errors";
import { isIgnoredPath, safeAbsPath } from "../vault/paths";
import type { VaultContext } from "../vault-context";
import { classifyNotes, databaseTitle, isDatabasePath } from "./databases";
import { baseName, folderRepresented, noteRowsByPath, noteTitleFallback, resolveItem, type ItemRef } from "./items";

export interface WorkspaceItem extends ItemRef {
  parentId?: string;
  icon?: string;
}

export interface WorkspacePage {
  items: WorkspaceItem[];
  hasMore: boolean;
  nextCursor?: string;
}

interface Entry {
  group: 0 | 1; // folders first
  path: string;
  kind: "folder" | "note" | "database";
}

interface Cursor {
  v: 1;
  /** The folder listed, so that a cursor from another listing is refused rather than misread. */
  parent: string;
  group: 0 | 1;
  path: string;
}

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString("base64url");
}

function decodeCursor(raw: string, parent: string): Cursor {
  let c: Partial<Cursor> | null = null;
  try {
    if (raw.length <= 4096) c = JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
  } catch {
    c = null;
  }
  if (!c || c.v !== 1 || (c.group !== 0 && c.group !== 1) || typeof c.path !== "string" || typeof c.parent !== "string") {
    throw new ToolError("invalid-input", "Invalid cursor: pass the nextCursor of a previous list_workspace call unchanged");
  }
  if (c.parent !== parent) throw new ToolError("invalid-input", "This cursor belongs to another parentId: list from the start, or pass the same parentId");
  return c as Cursor;
}

const after = (e: Entry, c: Cursor) => e.group > c.group || (e.group === c.group && e.path > c.path);
const compare = (a: Entry, b: Entry) => a.group - b.group || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/** The workspace items directly in a folder, from the disk (so that empty folders and notes not indexed yet appear). */
function folderEntries(vault: VaultContext, folder: string): Entry[] {
  let dirents;
  try {
    dirents = readdirSync(safeAbsPath(vault.root, folder), { withFileTypes: true });
  } catch {
    return []; // removed meanwhile: nothing in it
  }
  const out: Entry[] = [];
  for (const d of dirents) {
    if (isIgnoredPath(d.name)) continue;
    const path = folder ? `${folder}/${d.name}` : d.name;
    // Symlinks are neither directories nor files here: never followed.
    if (d.isDirectory()) out.push({ group: 0, path, kind: "folder" });
    else if (d.isFile() && /\.md$/i.test(d.name)) out.push({ group: 1, path, kind: "note" });
    else if (d.isFile() && isDatabasePath(d.name)) out.push({ group: 1, path, kind: "database" });
  }
  return out;
}

/** How many workspace items a folder holds directly. */
export function folderItemCount(vault: VaultContext, folder: string): number {
  return folderEntries(vault, folder).length;
}

function iconOf(frontmatter: string): string | undefined {
  if (!frontmatter.includes('"icon"')) return undefined;
  try {
    const icon = (JSON.parse(frontmatter) as Record<string, unknown>).icon;
    return typeof icon === "string" && icon.trim() && icon.length <= 64 ? icon.trim() : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One page of a folder's items. `parentId` omitted = the vault root; a
 * folder's index page lists that folder; any other note or a database has
 * no tree children (a database's rows are query_database's).
 */
export function listWorkspace(vault: VaultContext, parentId: string | undefined, limit: number, cursor: string | undefined): WorkspacePage {
  let folder: string | null = "";
  if (parentId !== undefined && parentId !== "" && parentId !== "/") folder = folderRepresented(resolveItem(vault, parentId));
  const key = folder ?? `\u0000${parentId}`;
  const from = cursor ? decodeCursor(cursor, key) : null;
  if (folder === null) return { items: [], hasMore: false };
  const entries = folderEntries(vault, folder)
    .filter((e) => !from || after(e, from))
    .sort(compare);
  const page = entries.slice(0, limit);
  const notes = page.filter((e) => e.kind === "note").map((e) => e.path);
  const rows = noteRowsByPath(vault.indexDb, notes);
  const classes = classifyNotes(vault, notes);
  const items = page.map((e): WorkspaceItem => {
    const parent = folder ? { parentId: folder } : {};
    if (e.kind === "folder") return { id: e.path, type: "folder", title: baseName(e.path), ...parent };
    // databaseId as get_related_pages gives it: the id to pass to query_database (a database's is its own).
    if (e.kind === "database") return { id: e.path, type: "database", title: databaseTitle(e.path), databaseId: e.path, ...parent };
    const row = rows.get(e.path);
    const cls = classes.get(e.path)!;
    const icon = row ? iconOf(row.frontmatter) : undefined;
    return {
      id: e.path,
      type: cls.type,
      title: row?.title ?? noteTitleFallback(e.path),
      ...parent,
      ...(icon ? { icon } : {}),
      ...(cls.databaseId ? { databaseId: cls.databaseId } : {}),
    };
  });
  const hasMore = entries.length > limit;
  const last = page[page.length - 1];
  return { items, hasMore, ...(hasMore && last ? { nextCursor: encodeCursor({ v: 1, parent: key, group: last.group, path: last.path }) } : {}) };
}
