import { z } from "zod";
import { ToolError } from "../lib/errors";
import { listAttachmentsIn } from "../lib/retrieval/attachments";
import { mimeTypeOf } from "../lib/vault/mime";
import { lstatInVault, pathSpellings, resolveFolder, safeAbsPath } from "../lib/vault/paths";
import { isNoteEntry, isNotePath } from "../lib/vault/scan";
import { ALL_SCOPES, ContentParts, defineTool, limitField, offsetField, READ_ONLY } from "./types";
import { readVaultFile } from "../lib/vault/read-file";
import { envNumber } from "../lib/env-number";

// The image types MCP clients pass on to a model (an SVG is text, and most models take none of the rest).
const VIEWABLE = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** Largest attachment read_attachment returns; base64 of more would swamp an agent's context. */
export const MAX_ATTACHMENT_BYTES = envNumber("LETTUCE_MAX_ATTACHMENT_BYTES", 5 * 1024 * 1024, { min: 1024, max: 1024 ** 3, integer: true });

export const listAttachments = defineTool({
  name: "list_attachments",
  description: "Non-Markdown files (images, PDFs, data): {items: [{path, size, mimeType}], total}.",
  details: "List the non-Markdown files in the vault (images, PDFs, data), optionally under one folder, paginated: {items: [{path, size, mimeType}], total, offset, limit}. Use it to check which referenced images exist. Parameters: path: Folder to list under, vault-relative (e.g. \"assets\"); default: whole vault; limit: Maximum items to return (default 50, max 1000); offset: Items to skip, for paging (default 0).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    path: z.string().optional().describe('A folder, e.g. "assets"'),
    limit: limitField(50),
    offset: offsetField,
  }),
  handler({ path, limit, offset }, { vault }) {
    const folder = path === undefined ? "" : resolveFolder(vault.root, path);
    const { items, total } = listAttachmentsIn(vault.indexDb, folder, limit, offset);
    return { items, total, offset, limit };
  },
});

export const readAttachment = defineTool({
  name: "read_attachment",
  description: "A non-Markdown file as base64: {path, mimeType, size, base64}; view: true shows an image to the model.",
  details: "Read one non-Markdown file (image, PDF, data) as base64: {path, mimeType, size, base64}. With view: true an image comes back as an MCP image part the model can see (plus {path, mimeType, size} as text) instead of base64 in text, which a model cannot look at. Files over 5242880 bytes are refused with kind \"too-large\". Use read_note for notes. Parameters: path: Vault-relative path of the file, e.g. \"assets/diagram.png\"; view: Return an image as an image part (images only).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    path: z.string().describe('File path, e.g. "assets/diagram.png"'),
    view: z.boolean().default(false).describe("Return an image as an image part the model can see"),
  }),
  handler({ path, view }, { vault }) {
    // The literal path first, then its decoded and NFC/NFD spellings; never through a symlink.
    const spellings = pathSpellings(path);
    for (const s of spellings) safeAbsPath(vault.root, s);
    const found = spellings.map((s) => ({ rel: s, st: lstatInVault(vault.root, s) })).find((f) => f.st?.isFile());
    const { rel, st } = found ?? { rel: spellings[0]!, st: lstatInVault(vault.root, spellings[0]!) };
    const abs = safeAbsPath(vault.root, rel);
    // A Markdown file too big to be a note is listed as an attachment; the size check below answers for it.
    const oversizedNote = st?.isFile() && !isNoteEntry(rel, st.size);
    if (isNotePath(rel) && !oversizedNote) throw new ToolError("invalid-input", `${rel} is a note; use read_note`);
    if (!st) throw new ToolError("attachment-not-found", `Attachment not found: ${rel}`);
    if (!st.isFile()) throw new ToolError("attachment-not-found", `Not a file: ${rel}`);
    if (st.size > MAX_ATTACHMENT_BYTES) {
      throw new ToolError("too-large", `${rel} is ${st.size} bytes; read_attachment returns files up to ${MAX_ATTACHMENT_BYTES} bytes`, {
        size: st.size,
        maxBytes: MAX_ATTACHMENT_BYTES,
      });
    }
    // Read through the same checks again: the file may have been swapped (for a FIFO, a bigger file) since the lstat.
    let buf: Buffer;
    try {
      const read = readVaultFile(vault.root, rel, MAX_ATTACHMENT_BYTES + 1);
      if (read.size > MAX_ATTACHMENT_BYTES) throw new ToolError("too-large", `${rel} is ${read.size} bytes; read_attachment returns files up to ${MAX_ATTACHMENT_BYTES} bytes`, { size: read.size, maxBytes: MAX_ATTACHMENT_BYTES });
      buf = read.bytes;
    } catch (e) {
      if (e instanceof ToolError) throw e;
      throw new ToolError("attachment-not-found", `Attachment not found: ${rel}`);
    }
    const mimeType = mimeTypeOf(rel);
    if (view) {
      if (!VIEWABLE.has(mimeType)) throw new ToolError("invalid-input", `${rel} is ${mimeType}, not an image: view shows PNG, JPEG, GIF and WebP images; read it without view for base64`);
      return new ContentParts([
        { type: "text", text: JSON.stringify({ path: rel, mimeType, size: buf.length }) },
        { type: "image", data: buf.toString("base64"), mimeType },
      ]);
    }
    return { path: rel, mimeType, size: buf.length, base64: buf.toString("base64") };
  },
});

export const attachmentTools = [listAttachments, readAttachment];
