// The workspace read tools (spec: workspace-read-tools.md) over the vault:
// an item's id is its vault-relative path; see docs/workspace.md.
import { z } from "zod";
import { MAX_ITEM_ID, planPage, planPages } from "../lib/workspace/page";
import { pagesAnswerSize } from "../lib/workspace/page-build";
import { offloaded } from "../lib/offload/offloaded";
import { listWorkspace } from "../lib/workspace/list";
import { relatedPages } from "../lib/workspace/related";
import { searchWorkspace } from "../lib/workspace/search";
import { pagesCiting } from "../lib/workspace/sources";
import { ToolError } from "../lib/errors";
import { ALL_SCOPES, defineTool, limitField, READ_ONLY } from "./types";

// No minimum length: an empty id is path-invalid, as every path argument (docs/workspace.md), not a protocol error.
const itemId = z.string().max(MAX_ITEM_ID);
const mode = z.enum(["full", "outline"]).default("full").describe("outline: a cheap skim");

export const searchWorkspace_ = defineTool({
  name: "search_workspace",
  description: "Find pages and databases by title and content (titles first, prefix words, substring fallback): {results: [{id, type, title, breadcrumb, snippet}]}.",
  details: "Find pages and databases by title and content: title matches first, every word a prefix, case and accents ignored (cozum finds Çözüm). Chinese/Japanese/Thai words are found inside longer text. Queries under 3 letters, or with no index hit, fall back to a substring match. Returns {results: [{id, type, title, breadcrumb, matchedOn, snippet, parentId?}]}; pass id to get_page. For task context use prepare_context. Parameters: query: Words to find in titles and content; limit: Maximum results (default 10, max 100).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    query: z.string().min(1).max(500),
    limit: limitField(10, 100),
  }),
  handler({ query, limit }, { vault, signal }) {
    return searchWorkspace(vault, query, limit, (q, n) => offloaded.titleMatches(vault, q, n, signal));
  },
});

export const listWorkspace_ = defineTool({
  name: "list_workspace",
  description: "One folder's items (folders, pages, databases) by cursor: {items: [{id, type, title}], hasMore, nextCursor}.",
  details: "List one folder's items (sub-folders, notes as pages, .base files as databases): folders first, then by path. Omit parentId for the vault root. Returns {items: [{id, type, title, parentId?, icon?}], hasMore, nextCursor?}; pass nextCursor to continue (stable while files change). Parameters: parentId: Folder (or a folder's index page) to list, e.g. \"Projects\"; omit for the root; limit: Items per page (default 100, max 500); cursor: nextCursor from the previous call.",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    parentId: itemId.optional().describe("A folder; omit for the root"),
    limit: limitField(100, 500),
    cursor: z.string().max(4096).optional(),
  }),
  handler({ parentId, limit, cursor }, { vault }) {
    return listWorkspace(vault, parentId, limit, cursor);
  },
});

export const getPage_ = defineTool({
  name: "get_page",
  description: "A page or database by id (its vault path): {id, title, content, properties, type}; mode outline for a cheap skim.",
  details: "Read a page (a note), database (.base) or folder by id (its vault path). Returns {id, title, content, properties, type}: content is the body, properties the frontmatter. mode \"outline\" gives headings plus each section's first line and fullContentChars — skim long pages first. Errors: note-not-found, path-invalid. Parameters: pageId: Item id, e.g. \"Projects/Lettuce.md\"; mode: \"outline\" = headings plus the first line of each section, with fullContentChars (a cheap skim).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({ pageId: itemId, mode }),
  async handler({ pageId, mode }, { vault, signal, reserveAnswer }) {
    // Resolved here; read and assembled in a read worker (lib/offload), off the event loop.
    const plan = planPage(vault, pageId);
    await reserveAnswer?.(plan.size);
    return offloaded.page(vault, plan, mode, signal);
  },
});

export const getPages_ = defineTool({
  name: "get_pages",
  description: "get_page for up to 50 ids: {results: [{id, ok, page?, error?}]}.",
  details: "Batch get_page for up to 50 known ids. Returns {results: [{id, ok, page?, error?, kind?}]}: a missing or invalid id is an entry with ok: false, never a failed call. Parameters: pageIds: Item ids (max 50); mode: \"outline\" = headings plus the first line of each section, with fullContentChars (a cheap skim).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  // An empty or over-long id is that entry's error (getPages), not the batch's: the spec says one bad id never fails the call.
  input: z.object({ pageIds: z.array(z.string().max(100_000)).min(1).max(50), mode }),
  async handler({ pageIds, mode }, { vault, signal, reserveAnswer }) {
    const planned = await planPages(vault, pageIds);
    await reserveAnswer?.(pagesAnswerSize(planned));
    return offloaded.pages(vault, planned, mode, signal);
  },
});

export const getRelatedPages = defineTool({
  name: "get_related_pages",
  description: "A page's parent, children, links, backlinks and siblings (ids, titles); or, by resource (a file path), the notes citing it.",
  details: "A page's neighbourhood, titles and ids only: {page, parent, children, outgoingLinks, backlinks, siblings, sources?}. Or pass resource (a file or folder path) instead: the notes whose frontmatter sources cite it, {resource, pages: [{id, title, type, match, source}], total, note?} — ask before changing a file. Parameters: pageId: Page, database or folder id; resource: A repository file or folder path (relative, or the absolute path your editor uses).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    pageId: itemId.optional(),
    resource: z.string().min(1).max(2000).optional().describe("A file path (instead of pageId)"),
  }),
  handler({ pageId, resource }, { vault, signal }) {
    if ((pageId === undefined) === (resource === undefined)) throw new ToolError("invalid-input", "Pass exactly one of pageId and resource");
    if (resource !== undefined) return pagesCiting(vault, resource);
    return relatedPages(vault, pageId!, (notePath, cls, limit) => offloaded.databaseSiblings(vault, notePath, cls, limit, signal));
  },
});

export const workspaceTools = [searchWorkspace_, listWorkspace_, getPage_, getPages_, getRelatedPages];
