import { statSync } from "node:fs";
import { z } from "zod";
import { ToolError } from "../lib/errors";
import { contentHash } from "../lib/index/parse-job";
import { outgoingLinks } from "../lib/retrieval/links";
import { findNote, listNotesIn, noteHeadings } from "../lib/retrieval/notes";
import { resolveFolder, safeAbsPath } from "../lib/vault/paths";
import { ALL_SCOPES, defineTool, limitField, notePathField, offsetField, READ_ONLY } from "./types";
import { readVaultFile } from "../lib/vault/read-file";

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
  handler({ path, recursive, limit, offset }, { vault }) {
    const folder = path === undefined ? "" : resolveFolder(vault.root, path);
    const { items, total } = listNotesIn(vault.indexDb, folder, recursive, limit, offset);
    return { items, total, offset, limit };
  },
});

/** Outgoing links read_note lists; past it, outgoingLinksTotal says how many and list_outgoing_links pages on. */
const MAX_READ_NOTE_LINKS = 200;

export const readNote = defineTool({
  name: "read_note",
  description: "Read a note: {path, title, tags, frontmatter, content, hash, outgoingLinks}. Pass hash as expectedHash when writing.",
  details: "Read one note in full: {path, name, title, tags, frontmatter, content, hash, outgoingLinks, stat}. `hash` is the content hash to pass as expectedHash to write tools. outgoingLinks holds the first 200 (outgoingLinksTotal when there are more; list_outgoing_links pages on). Errors: note-not-found, path-invalid. Parameters: path: Vault-relative path of the note, with its .md extension, e.g. \"Projects/Lettuce.md\".",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({ path: notePathField }),
  handler({ path }, { vault }) {
    const row = findNote(vault.indexDb, vault.root, path);
    const abs = safeAbsPath(vault.root, row.path);
    let bytes: Buffer;
    let st;
    try {
      bytes = readVaultFile(vault.root, row.path).bytes;
      st = statSync(abs);
    } catch {
      throw new ToolError("note-not-found", `Note not found: ${row.path}`);
    }
    // A note of 50,000 links (a long log) sent them all beside its text: the first ones here, list_outgoing_links pages on.
    const { items: links, total: linkTotal } = outgoingLinks(vault.indexDb, row.id, MAX_READ_NOTE_LINKS);
    return {
      path: row.path,
      name: row.name,
      title: row.title,
      tags: JSON.parse(row.tags),
      frontmatter: JSON.parse(row.frontmatter),
      content: bytes.toString("utf8"),
      // Of the bytes, as the write tools check expectedHash (a decoded string differs for non-UTF-8 files).
      hash: contentHash(bytes),
      outgoingLinks: links.map((l) => ({ target: l.target, kind: l.kind, resolvedPath: l.resolvedPath })),
      ...(linkTotal > links.length ? { outgoingLinksTotal: linkTotal } : {}),
      // Created as the index first saw the note: a save by rename (editors, agents) gives the file a new birth time.
      stat: { size: st.size, modified: st.mtime.toISOString(), created: new Date(Math.min(row.ctime || Infinity, st.birthtimeMs || st.ctimeMs)).toISOString() },
    };
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
