// get_related_pages {pageId}: a page's neighbourhood in titles and ids only —
// its tree parent, its children (a folder's items; a folder index page
// stands for its folder), the pages it links to and the notes linking to it,
// its database siblings (rows only), and the sources its frontmatter cites.
import type { VaultContext } from "../vault-context";
import { classifyNotes, databaseSiblings, databaseTitle, isDatabasePath, type ItemType, type NoteClass, type Siblings } from "./databases";
import { folderRepresented, parentOf, refOf, resolveItem, type ItemRef } from "./items";
import { folderItemCount, listWorkspace } from "./list";
import { linkedFrom, linkingTo, type Neighbour } from "./neighbours";
import { sourcesOf } from "./sources";

/** Entries per list (children, outgoingLinks, backlinks); the totals say how many there are in all. */
export const RELATED_LIST_LIMIT = 50;
const SIBLINGS_LIMIT = 10;

export interface RelatedEntry {
  id: string;
  title: string;
  type: ItemType;
  databaseId?: string;
  linkKind?: "page_link" | "child_block";
}

export interface RelatedPages {
  page: ItemRef;
  parent: RelatedEntry | null;
  children: RelatedEntry[];
  outgoingLinks: RelatedEntry[];
  backlinks: RelatedEntry[];
  siblings: { total: number; items: { id: string; title: string }[] } | null;
  sources?: string[];
  /** Present when a list was cut at RELATED_LIST_LIMIT: how many there are in all. */
  totals?: { children?: number; outgoingLinks?: number; backlinks?: number };
}

function entries(vault: VaultContext, ns: Neighbour[], skip: Set<string>): RelatedEntry[] {
  const notes = ns.filter((n) => !isDatabasePath(n.path)).map((n) => n.path);
  const classes = classifyNotes(vault, notes);
  return ns
    .filter((n) => !skip.has(n.path))
    .map((n) => {
      const linkKind = n.embed ? ("child_block" as const) : ("page_link" as const);
      if (isDatabasePath(n.path)) return { id: n.path, title: databaseTitle(n.path), type: "database" as const, databaseId: n.path, linkKind };
      const cls = classes.get(n.path)!;
      return { id: n.path, title: n.title, type: cls.type, ...(cls.databaseId ? { databaseId: cls.databaseId } : {}), linkKind };
    });
}

/** How get_related_pages reads a row's siblings: the tool hands in one that runs off the event loop (a pass over every note after each change). */
export type SiblingsReader = (notePath: string, cls: NoteClass, limit: number) => Siblings | Promise<Siblings>;

export async function relatedPages(
  vault: VaultContext,
  pageId: string,
  readSiblings: SiblingsReader = (notePath, cls, limit) => databaseSiblings(vault, notePath, cls, limit),
): Promise<RelatedPages> {
  const db = vault.indexDb;
  const r = resolveItem(vault, pageId);
  const page = refOf(vault, r);
  // The spec: a database row's parent is the database it belongs to.
  const parent = page.type === "database_row" && page.databaseId ? { id: page.databaseId, title: databaseTitle(page.databaseId), type: "database" as const, databaseId: page.databaseId } : parentOf(vault, r);
  const totals: NonNullable<RelatedPages["totals"]> = {};

  let children: RelatedEntry[] = [];
  const folder = folderRepresented(r);
  if (folder !== null) {
    const list = listWorkspace(vault, folder, RELATED_LIST_LIMIT + 1, undefined);
    children = list.items
      .filter((i) => i.id !== r.path)
      .slice(0, RELATED_LIST_LIMIT)
      .map((i) => ({ id: i.id, title: i.title, type: i.type, ...(i.type === "database" ? { databaseId: i.id } : i.databaseId ? { databaseId: i.databaseId } : {}) }));
    if (list.hasMore) totals.children = folderItemCount(vault, folder) - (folder === r.path ? 0 : 1); // the rest: list_workspace
  }
  const childIds = new Set(children.map((c) => c.id));

  let outgoingLinks: RelatedEntry[] = [];
  if (r.kind === "note") {
    const out = linkedFrom(db, r.row.id, RELATED_LIST_LIMIT + childIds.size + 1);
    outgoingLinks = entries(vault, out.items, new Set([...childIds, r.path])).slice(0, RELATED_LIST_LIMIT);
    if (out.total > outgoingLinks.length + childIds.size + 1) totals.outgoingLinks = out.total;
  }

  let backlinks: RelatedEntry[] = [];
  if (r.kind !== "folder") {
    const skip = new Set(parent ? [parent.id] : []);
    const inc = linkingTo(db, r.path, RELATED_LIST_LIMIT + 1);
    backlinks = entries(vault, inc.items, skip).slice(0, RELATED_LIST_LIMIT);
    if (inc.total > RELATED_LIST_LIMIT) totals.backlinks = inc.total;
  }

  const cls = r.kind === "note" ? { type: page.type as "page" | "database_row", databaseId: page.databaseId } : { type: "page" as const };
  const siblings = r.kind === "note" && cls.type === "database_row" ? await readSiblings(r.path, cls, SIBLINGS_LIMIT) : null;

  let sources: string[] = [];
  if (r.kind === "note") {
    try {
      sources = sourcesOf(JSON.parse(r.row.frontmatter));
    } catch {
      sources = [];
    }
  }

  const parentEntry: RelatedEntry | null = parent
    ? parent.type === "folder" || parent.type === "database"
      ? parent
      : { ...parent, type: classifyNotes(vault, [parent.id]).get(parent.id)!.type }
    : null;
  return {
    page,
    parent: parentEntry,
    children,
    outgoingLinks,
    backlinks,
    siblings,
    ...(sources.length ? { sources } : {}),
    ...(Object.keys(totals).length ? { totals } : {}),
  };
}
