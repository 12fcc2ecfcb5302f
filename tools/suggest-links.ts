import { z } from "zod";
import { offloaded } from "../lib/offload/offloaded";
import { findNote } from "../lib/retrieval/notes";
import { safeAbsPath } from "../lib/vault/paths";
import { ALL_SCOPES, defineTool, limitField, notePathField, offsetField, page, READ_ONLY } from "./types";

export const suggestLinksTool = defineTool({
  name: "suggest_links",
  description: "Other notes' names written in a note but not linked: {items: [{targetPath, name, count}], total}.",
  details: "Unlinked mentions in a note: other notes' names and aliases that appear as plain prose but are not [[linked]] yet, as a paginated list {items: [{targetPath, name, count}], total, offset, limit}, most mentioned first. Deterministic candidates to confirm and link. Skips names shared by two or more notes, very short names (under 4 characters, except all-caps acronyms like MCP), notes the note already links to, and text in frontmatter, code, links and URLs. Errors: note-not-found, path-invalid. Parameters: path: Vault-relative path of the note, with its .md extension, e.g. \"Projects/Lettuce.md\"; limit: Maximum items to return (default 50, max 1000); offset: Items to skip, for paging (default 0).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({ path: notePathField, limit: limitField(50), offset: offsetField }),
  async handler({ path, limit, offset }, { vault, signal }) {
    const row = findNote(vault.indexDb, vault.root, path);
    safeAbsPath(vault.root, row.path);
    // The mention scan of a big note runs in a read worker (lib/offload), off the event loop.
    return page(await offloaded.suggestLinks(vault, row.path, signal), offset, limit);
  },
});

export const suggestLinkTools = [suggestLinksTool];
