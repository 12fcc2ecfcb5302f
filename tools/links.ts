import { z } from "zod";
import { offloaded } from "../lib/offload/offloaded";
import { backlinks, outgoingLinks } from "../lib/retrieval/links";
import { findNote } from "../lib/retrieval/notes";
import { ALL_SCOPES, defineTool, limitField, notePathField, offsetField, READ_ONLY } from "./types";

export const listOutgoingLinks = defineTool({
  name: "list_outgoing_links",
  description: "Links out of a note: {items: [{target, kind, heading, resolvedPath}], total}; resolvedPath null = broken.",
  details: "The links out of a note (wikilinks, embeds and Markdown links to local files), resolved or not, paginated: {items: [{target, displayText, kind, heading, resolvedPath}], total, offset, limit}. kind is \"wikilink\" or \"markdown\"; resolvedPath is null for a broken link. Parameters: path: Vault-relative path of the note, with its .md extension, e.g. \"Projects/Lettuce.md\"; limit: Maximum items to return (default 100, max 1000); offset: Items to skip, for paging (default 0).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({ path: notePathField, limit: limitField(100), offset: offsetField }),
  handler({ path, limit, offset }, { vault }) {
    const row = findNote(vault.indexDb, vault.root, path);
    const { items, total } = outgoingLinks(vault.indexDb, row.id, limit, offset);
    return { items, total, offset, limit };
  },
});

export const listBacklinks = defineTool({
  name: "list_backlinks",
  description: "Who links to a note: {items: [{sourcePath, displayText, heading, line}], total}.",
  details: "Every link into a note from other notes, paginated: {items: [{sourcePath, sourceName, displayText, heading, block, line}], total, offset, limit}. displayText is the link's alias text or null; heading/block are the section the link points at, or null. Parameters: path: Vault-relative path of the note, with its .md extension, e.g. \"Projects/Lettuce.md\"; limit: Maximum items to return (default 100, max 1000); offset: Items to skip, for paging (default 0).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({ path: notePathField, limit: limitField(100), offset: offsetField }),
  handler({ path, limit, offset }, { vault }) {
    const row = findNote(vault.indexDb, vault.root, path);
    const { items, total } = backlinks(vault.indexDb, row.path, row.id, limit, offset);
    return { items, total, offset, limit };
  },
});

export const linkGraphTool = defineTool({
  name: "link_graph",
  description: "A note's link neighbourhood, both directions, to depth hops: {nodes: [{path, name}], edges: [{from, to}]}.",
  details: "The local link neighbourhood of a note: breadth-first to `depth` hops (default 1, capped at 5) following outbound links and inbound backlinks. Returns {center, depth, nodes: [{path, name}], edges: [{from, to}]}; `truncated: true` when maxNodes (or the 2,000-node / 10,000-edge cap) cut it short. Parameters: path: Vault-relative path of the note, with its .md extension, e.g. \"Projects/Lettuce.md\"; depth: Hops to follow (default 1; values above 5 are capped at 5); maxNodes: Stop adding nodes after this many (default 100; never more than 2000 nodes or 10000 edges).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    path: notePathField,
    depth: z.number().int().min(0).default(1).describe("Hops (capped at 5)"),
    maxNodes: z.number().int().min(1).max(10000).default(100),
  }),
  async handler({ path, depth, maxNodes }, { vault, signal }) {
    const row = findNote(vault.indexDb, vault.root, path);
    return offloaded.linkGraph(vault, row.path, Math.min(depth, 5), maxNodes, signal);
  },
});

export const linkTools = [listOutgoingLinks, listBacklinks, linkGraphTool];
