// MCP resources: the digest (lettuce://digest, the vault map an agent reads
// for orientation, with the change-feed cursor it was built at) and every note
// as lettuce://note/{path}, listed page by page and offered as a template so
// that clients with a resource picker can attach a note. Readable by every
// scope, as the read tools are.
import { basename } from "node:path";
import { ToolError } from "../errors";
import { cursorNow } from "../changes/feed";
import { caughtUpJournal } from "../changes/journal";
import { notesAfter } from "../digest/map";
import { offloaded } from "../offload/offloaded";
import { findNote } from "../retrieval/notes";
import type { Scope } from "../store/tokens";
import type { VaultContext } from "../vault-context";
import { readVaultText } from "../vault/read-file";

export const DIGEST_URI = "lettuce://digest";
export const NOTE_PREFIX = "lettuce://note/";
const RESOURCE_SCOPES: readonly Scope[] = ["read", "propose", "write"];
const LIST_PAGE = 100;
/** JSON-RPC code the MCP specification gives an unknown resource. */
export const RESOURCE_NOT_FOUND = -32002;

type Answer = { result: unknown } | { error: { code: number; message: string; data?: unknown } };

const invalid = (message: string): Answer => ({ error: { code: -32602, message } });

export function noteUri(path: string): string {
  return NOTE_PREFIX + path.split("/").map(encodeURIComponent).join("/");
}

function list(vault: VaultContext, params: Record<string, unknown>): Answer {
  let after = "";
  if (params.cursor !== undefined) {
    if (typeof params.cursor !== "string") return invalid("cursor must be a string from a previous resources/list");
    after = Buffer.from(params.cursor, "base64url").toString("utf8");
  }
  const resources: unknown[] = [];
  if (!after) {
    resources.push({
      uri: DIGEST_URI,
      name: "digest",
      title: "Vault map",
      description: "A compact map of the vault (databases, tags, folders, every note with its title and size), starting with a cursor: line for get_changes_since. Read it first for orientation.",
      mimeType: "text/markdown",
    });
  }
  const notes = notesAfter(vault.indexDb, after, LIST_PAGE);
  for (const n of notes) resources.push({ uri: noteUri(n.path), name: n.path, title: n.title, mimeType: "text/markdown", size: n.size });
  const next = notes.length === LIST_PAGE ? { nextCursor: Buffer.from(notes[notes.length - 1]!.path).toString("base64url") } : {};
  return { result: { resources, ...next } };
}

async function read(vault: VaultContext, params: Record<string, unknown>): Promise<Answer> {
  const uri = params.uri;
  if (typeof uri !== "string" || !uri) return invalid("resources/read needs params.uri (a string)");
  const digest = /^lettuce:\/\/digest(?:\?page=(\d{1,6}))?$/.exec(uri);
  if (digest) {
    const cursor = cursorNow(await caughtUpJournal(vault)); // before the map: changes made while it is built come later
    const n = Number(digest[1] ?? 1);
    // Built in a read worker, which keeps the pages until the index or the cursor moves: the map lists every
    // note (~20 ms on obsidian-hub, ~0.3 s at 100k notes), and every agent reads it first.
    const { text, pages } = await offloaded.digestPage(vault, cursor, basename(vault.root), n);
    if (text === null) return { error: { code: RESOURCE_NOT_FOUND, message: `The digest has ${pages} page(s); there is no page ${n}`, data: { uri } } };
    return { result: { contents: [{ uri, mimeType: "text/markdown", text }] } };
  }
  if (uri.startsWith(NOTE_PREFIX)) {
    try {
      const row = findNote(vault.indexDb, vault.root, uri.slice(NOTE_PREFIX.length));
      const text = readVaultText(vault.root, row.path);
      return { result: { contents: [{ uri, mimeType: "text/markdown", text }] } };
    } catch (e) {
      if (e instanceof ToolError && e.kind === "path-invalid") return invalid(e.message);
      if (e instanceof ToolError || (e as { code?: string }).code === "ENOENT") return { error: { code: RESOURCE_NOT_FOUND, message: `Resource not found: ${uri}`, data: { uri } } };
      throw e;
    }
  }
  return { error: { code: RESOURCE_NOT_FOUND, message: `Resource not found: ${uri} (Lettuce serves ${DIGEST_URI} and ${NOTE_PREFIX}{path})`, data: { uri } } };
}

/** Answer resources/list, resources/read or resources/templates/list for a caller of this scope. */
export async function handleResources(vault: VaultContext, method: string, params: Record<string, unknown>, scope: Scope): Promise<Answer> {
  if (!RESOURCE_SCOPES.includes(scope)) return { error: { code: -32603, message: `The ${scope} token may not read resources` } };
  switch (method) {
    case "resources/list":
      return list(vault, params);
    case "resources/read":
      return read(vault, params);
    case "resources/templates/list":
      return {
        result: {
          resourceTemplates: [
            { uriTemplate: `${NOTE_PREFIX}{path}`, name: "note", title: "Note", description: 'A note by its vault-relative path, e.g. lettuce://note/Projects/Lettuce.md ("/" may be written %2F)', mimeType: "text/markdown" },
          ],
        },
      };
    default:
      return { error: { code: -32601, message: `Method not found: ${method}` } };
  }
}
