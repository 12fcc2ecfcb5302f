// get_page / get_pages: an item's content. A note gives its body (frontmatter
// moved to `properties`), a database its `.base` YAML, a folder a Markdown
// list of its items. Outline mode collapses a body to its headings plus the
// first line of each section, and says how long the full body is.
import { statSync } from "node:fs";
import { ToolError } from "../errors";
import { noteHeadings } from "../retrieval/notes";
import { splitFrontmatter } from "../vault/parse";
import { safeAbsPath } from "../vault/paths";
import type { VaultContext } from "../vault-context";
import { databaseTitle } from "./databases";
import { baseName, refOf, resolveItem, type Resolved } from "./items";
import { listWorkspace } from "./list";
import { frontmatterLineCount, outlineOf, renderOutline } from "./outline";
import { readVaultText } from "../vault/read-file";

export type PageMode = "full" | "outline";

export interface WorkspacePageContent {
  id: string;
  title: string;
  content: string;
  properties: Record<string, unknown>;
  type: string;
  databaseId?: string;
  mode?: "outline";
  fullContentChars?: number;
}

/** Items a folder's page lists before pointing at list_workspace. */
const FOLDER_PAGE_ITEMS = 100;
/** Characters of content a get_pages batch carries in all (a single page may be larger: get_page). */
const GET_PAGES_CHARS = 1_000_000;
/** Headings a page's outline shows (each with its first line); past them it says how many more. */
const OUTLINE_SECTIONS = 200;
/** A database's outline: its first lines (a .base file is short YAML). */
const DATABASE_OUTLINE_LINES = 40;
/** A .base file is a few hundred bytes of YAML; anything past this is no database definition. */
const MAX_DATABASE_BYTES = 1024 * 1024;

function readText(vault: VaultContext, path: string): string {
  try {
    return readVaultText(vault.root, path);
  } catch (e) {
    if (e instanceof ToolError) throw e;
    throw new ToolError("note-not-found", `Not found: ${path} (it was removed)`);
  }
}

function folderListing(vault: VaultContext, folder: string): string {
  const page = listWorkspace(vault, folder, FOLDER_PAGE_ITEMS, undefined);
  const lines = page.items.map((i) => `- ${i.type === "folder" ? "📁 " : ""}[${i.title}](${encodeURI(i.id)})${i.type === "database" ? " (database)" : ""}`);
  if (page.hasMore) lines.push(`- … more: list_workspace {"parentId": ${JSON.stringify(folder)}, "cursor": ${JSON.stringify(page.nextCursor)}}`);
  return lines.join("\n");
}

export function pageOf(vault: VaultContext, r: Resolved, mode: PageMode): WorkspacePageContent {
  const ref = refOf(vault, r);
  const base = { id: ref.id, title: ref.title, type: ref.type, ...(ref.databaseId ? { databaseId: ref.databaseId } : {}) };
  let content: string;
  let properties: Record<string, unknown> = {};
  let outline: string | null = null;
  if (r.kind === "note") {
    const text = readText(vault, r.path);
    const fm = splitFrontmatter(text);
    content = fm.body;
    try {
      properties = JSON.parse(r.row.frontmatter) ?? {};
    } catch {
      properties = {};
    }
    // Bounded like everything an agent pays for: a 50,000-heading log's outline was as big as the log.
    if (mode === "outline") outline = renderOutline(outlineOf(text, noteHeadings(vault.indexDb, r.row.id), frontmatterLineCount(fm.raw)), OUTLINE_SECTIONS);
  } else if (r.kind === "database") {
    if (statSync(safeAbsPath(vault.root, r.path)).size > MAX_DATABASE_BYTES) throw new ToolError("too-large", `${r.path} is over ${MAX_DATABASE_BYTES} bytes: not read as a database`);
    content = readText(vault, r.path);
    if (mode === "outline") outline = content.split(/\r?\n/).slice(0, DATABASE_OUTLINE_LINES).join("\n");
    base.title = databaseTitle(r.path);
  } else {
    content = folderListing(vault, r.path);
    base.title = baseName(r.path);
    if (mode === "outline") outline = content;
  }
  if (outline === null) return { ...base, content, properties };
  return { ...base, content: outline, properties, mode: "outline", fullContentChars: content.length };
}

export function getPage(vault: VaultContext, pageId: string, mode: PageMode): WorkspacePageContent {
  return pageOf(vault, resolveItem(vault, pageId), mode);
}

/** The longest item id a workspace tool takes (a vault path is far shorter). */
export const MAX_ITEM_ID = 1000;

export type PageResult = { id: string; ok: true; page: WorkspacePageContent } | { id: string; ok: false; error: string; kind: string };

/** Several pages; one that is missing or invalid is an entry with ok: false, never a failed call. */
export function getPages(vault: VaultContext, pageIds: string[], mode: PageMode): PageResult[] {
  // The batch's pages together stop at GET_PAGES_CHARS (eight 2 MB notes made a 23 MB answer):
  // a page that would pass it is an entry with kind too-large, to get on its own.
  let chars = 0;
  return pageIds.map((id) => {
    try {
      // get_page's schema refuses these; in a batch they are one entry's error, not the call's.
      if (!id || id.length > MAX_ITEM_ID) throw new ToolError("path-invalid", id ? `an id is at most ${MAX_ITEM_ID} characters` : "empty id");
      const page = getPage(vault, id, mode);
      if (chars > 0 && chars + page.content.length > GET_PAGES_CHARS) {
        throw new ToolError("too-large", `with the pages before it this batch would pass ${GET_PAGES_CHARS} characters; get_page it on its own`);
      }
      chars += page.content.length;
      return { id, ok: true, page };
    } catch (e) {
      if (e instanceof ToolError) return { id, ok: false, error: e.message, kind: e.kind };
      // Whatever went wrong with one page (a file unreadable mid-read), the others still come back.
      console.error(`lettuce: get_pages ${JSON.stringify(id)} failed:`, e);
      return { id, ok: false, error: "Internal error reading this page; see the server log", kind: "internal" };
    }
  });
}
