import { z } from "zod";
import { offloaded } from "../lib/offload/offloaded";
import { planNoteRead } from "../lib/retrieval/note-read";
import { findNote, noteHeadings } from "../lib/retrieval/notes";
import { resolveFolder } from "../lib/vault/paths";
import { ALL_SCOPES, defineTool, limitField, notePathField, offsetField, READ_ONLY } from "./types";

export const listNotes = defineTool({
  name: "list_notes",
  description: "List notes (all, or in a folder) by path: {items: [{path, title, tags, modified, size}], total}.",
  details: "List notes in the vault (or under one folder), sorted by path, paginated. Returns {items: [{path, name, title, tags, modified, size}], total, offset, limit}. Parameters: path: Folder to list, vault-relative (e.g. \"Inbox\"); default: the whole vault; recursive: Include notes in sub-folders (default true); limit: Maximum items to return (default 50, max 1000); offset: Items to skip, for paging (default 0).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    path: z.string().optional().describe('A folder, e.g. "Inbox"'),
    recursive: z.boolean().default(true),
    limit: limitField(50),
    offset: offsetField,
  }),
  async handler({ path, recursive, limit, offset }, { vault, signal }) {
    const folder = path === undefined ? "" : resolveFolder(vault.root, path);
    const { items, total } = await offloaded.notePage(vault, { folder, recursive }, limit, offset, signal);
    return { items, total, offset, limit };
  },
});

export const readNote = defineTool({
  name: "read_note",
  description: "Read a note: {path, title, tags, frontmatter, content, hash, outgoingLinks}. Pass hash as expectedHash when writing.",
  details: "Read one note in full: {path, name, title, tags, frontmatter, content, hash, outgoingLinks, stat}. `hash` is the content hash to pass as expectedHash to write tools. outgoingLinks holds the first 200 (outgoingLinksTotal when there are more; list_outgoing_links pages on). Errors: note-not-found, path-invalid. Parameters: path: Vault-relative path of the note, with its .md extension, e.g. \"Projects/Lettuce.md\".",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({ path: notePathField }),
  async handler({ path }, { vault, signal, reserveAnswer }) {
    // Found here; the file is read and the answer made in a read worker (lib/offload), off the event loop.
    const plan = planNoteRead(vault.indexDb, vault.root, path);
    await reserveAnswer?.(plan.size);
    const answer = await offloaded.readNote(vault, plan, true, signal);
    if (answer) return answer;
    // Saved since it was indexed (the watcher has not got to it yet): indexed now, so that the title, tags
    // and links describe the content returned beside them. Once: a note saved again meanwhile is read as it is.
    // Never by waiting: not behind a pass already under way, nor for another process's write lock (a serve's
    // long pass held a stdio's read 5 s, then failed it); the watcher's own pass will bring the index along.
    if (vault.indexer.idle) await vault.indexer.update([plan.path], { noWait: true }).catch(() => undefined);
    return (await offloaded.readNote(vault, planNoteRead(vault.indexDb, vault.root, path), false, signal))!;
  },
});

export const readOutline = defineTool({
  name: "read_outline",
  description: "A note's headings [{level, title, id}]: its structure, cheaper than read_note; id works in patch_section.",
  details: "A note's heading outline as [{level, title, id}] (id = the rendered anchor slug, usable in [[Note#Heading]] links and patch_section). Much cheaper than read_note when you only need structure. Parameters: path: Vault-relative path of the note, with its .md extension, e.g. \"Projects/Lettuce.md\".",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({ path: notePathField }),
  handler({ path }, { vault }) {
    const row = findNote(vault.indexDb, vault.root, path);
    return noteHeadings(vault.indexDb, row.id).map(({ level, title, id }) => ({ level, title, id }));
  },
});

export const noteTools = [listNotes, readNote, readOutline];
