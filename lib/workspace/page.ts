// get_page / get_pages: an item's content. A note gives its body (frontmatter
// moved to `properties`), a database its `.base` YAML, a folder a Markdown
// list of its items. Outline mode collapses a body to its headings plus the
// first line of each section, and says how long the full body is.
//
// Here, on the event loop, each id is checked and resolved (path rules, the
// index, the vault's caches); the files are read and the pages assembled by
// page-build.ts, in a read worker when the tool runs (lib/offload/pool.ts).
import { ToolError } from "../errors";
import { inTurns } from "../platform/turns";
import type { VaultContext } from "../vault-context";
import { classifyNotes, databaseTitle, type NoteClass } from "./databases";
import { baseName, refOf, resolveItem, type Resolved } from "./items";
import { listWorkspace } from "./list";
import { pageError, type PagePlan, type PlannedPage } from "./page-build";

export type { PageMode, PageResult, PagePlan, PlannedPage, WorkspacePageContent } from "./page-build";

/** Items a folder's page lists before pointing at list_workspace. */
const FOLDER_PAGE_ITEMS = 100;

function folderListing(vault: VaultContext, folder: string): string {
  const page = listWorkspace(vault, folder, FOLDER_PAGE_ITEMS, undefined);
  const lines = page.items.map((i) => `- ${i.type === "folder" ? "📁 " : ""}[${i.title}](${encodeURI(i.id)})${i.type === "database" ? " (database)" : ""}`);
  if (page.hasMore) lines.push(`- … more: list_workspace {"parentId": ${JSON.stringify(folder)}, "cursor": ${JSON.stringify(page.nextCursor)}}`);
  return lines.join("\n");
}

/** What a resolved item's page needs from the event loop's side (`cls`: the note's class, when known already). */
export function planOf(vault: VaultContext, r: Resolved, cls?: NoteClass): PagePlan {
  const ref = refOf(vault, r, cls);
  const base = { id: ref.id, title: ref.title, type: ref.type, ...(ref.databaseId ? { databaseId: ref.databaseId } : {}) };
  if (r.kind === "note") return { base, kind: "note", path: r.path, noteId: r.row.id, frontmatter: r.row.frontmatter, size: r.row.size };
  // A database is read only up to 1 MB (page-build.ts), a folder's page is its listing: small either way.
  if (r.kind === "database") return { base: { ...base, title: databaseTitle(r.path) }, kind: "database", path: r.path, size: 0 };
  const folderContent = folderListing(vault, r.path);
  return { base: { ...base, title: baseName(r.path) }, kind: "folder", path: r.path, folderContent, size: 0 };
}

export function planPage(vault: VaultContext, pageId: string): PagePlan {
  return planOf(vault, resolveItem(vault, pageId));
}

/** The longest item id a workspace tool takes (a vault path is far shorter). */
export const MAX_ITEM_ID = 1000;

type ResolvedEntry = { id: string; r: Resolved } | { id: string; ok: false; error: string; kind: string };

function resolveEntry(vault: VaultContext, id: string): ResolvedEntry {
  try {
    // get_page's schema refuses these; in a batch they are one entry's error, not the call's.
    if (!id || id.length > MAX_ITEM_ID) throw new ToolError("path-invalid", id ? `an id is at most ${MAX_ITEM_ID} characters` : "empty id");
    return { id, r: resolveItem(vault, id) };
  } catch (e) {
    return { id, ...pageError(id, e) };
  }
}

/**
 * A batch's ids resolved; one that is missing or invalid is already its entry's error. Id by id in the event
 * loop's shared turns (lib/platform/turns.ts): each id costs path checks on disk and index lookups, and
 * concurrent batches resolved whole held every other caller for the lot. The notes are classified (page or
 * database row) in one go: one by one, each loaded and checked every base again.
 */
export async function planPages(vault: VaultContext, pageIds: string[]): Promise<PlannedPage[]> {
  const resolved = await inTurns(pageIds.length, (i) => resolveEntry(vault, pageIds[i]!));
  const notes = resolved.flatMap((e) => ("r" in e && e.r.kind === "note" ? [e.r.path] : []));
  const classes = notes.length ? classifyNotes(vault, notes) : undefined;
  return inTurns(resolved.length, (i): PlannedPage => {
    const e = resolved[i]!;
    if (!("r" in e)) return e;
    try {
      return { id: e.id, plan: planOf(vault, e.r, e.r.kind === "note" ? classes?.get(e.r.path) : undefined) };
    } catch (err) {
      return { id: e.id, ...pageError(e.id, err) };
    }
  });
}
