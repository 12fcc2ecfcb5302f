import { z } from "zod";
import { offloaded } from "../lib/offload/offloaded";
import { normalizeTag } from "../lib/vault/parse";
import { ALL_SCOPES, defineTool, limitField, offsetField, READ_ONLY } from "./types";

export const listTags = defineTool({
  name: "list_tags",
  description: "Every tag with its note count, most used first: {items: [{tag, count}], total}.",
  details: "Every tag in the vault (frontmatter tags and inline #tags, case-insensitive) with how many notes carry it, most used first, paginated: {items: [{tag, count}], total, offset, limit}. Parameters: limit: Maximum items to return (default 100, max 5000); offset: Items to skip, for paging (default 0).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({ limit: limitField(100, 5000), offset: offsetField }),
  async handler({ limit, offset }, { vault, signal }) {
    const { items, total } = await offloaded.tagCounts(vault, limit, offset, signal);
    return { items, total, offset, limit };
  },
});

export const notesByTag = defineTool({
  name: "notes_by_tag",
  description: "Notes carrying a tag or a nested one (\"project\" includes \"project/web\"): {items, total}.",
  details: "Notes carrying a tag or any nested descendant of it (\"project\" also returns notes tagged \"project/web\"), paginated note summaries {path, name, title, tags, modified, size}. A leading # is optional. Parameters: tag: The tag, e.g. \"project\" or \"#area/garden\"; limit: Maximum items to return (default 50, max 1000); offset: Items to skip, for paging (default 0).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({ tag: z.string().min(1).describe('e.g. "project"'), limit: limitField(50), offset: offsetField }),
  async handler({ tag, limit, offset }, { vault, signal }) {
    const t = normalizeTag(tag.trim()).toLowerCase();
    const { items, total } = await offloaded.notePage(vault, { tag: t }, limit, offset, signal);
    return { items, total, offset, limit };
  },
});

export const tagTools = [listTags, notesByTag];
