// What a tool call touched, for the audit log: the path or id it named, and
// what kind of thing that is. Only identifiers are kept, never content (note
// text, queries, edit strings, answers): a path is what the person reading
// the log needs, and all the log may hold.

export interface AuditTarget {
  type: string;
  id: string;
}

const MAX_ID = 500;
// Tools whose `path` names a folder rather than a note.
const FOLDER_TOOLS = new Set(["list_notes", "lint"]);

function str(v: unknown): string | null {
  return typeof v === "string" && v.length > 0 ? v.slice(0, MAX_ID) : null;
}

function typeOfPath(path: string): string {
  if (/\.base$/i.test(path)) return "database";
  const last = path.slice(path.lastIndexOf("/") + 1);
  return /\.md$/i.test(last) || !last.includes(".") ? "page" : "attachment";
}

export function auditTarget(tool: string, args: unknown): AuditTarget | null {
  if (!args || typeof args !== "object" || Array.isArray(args)) return null;
  const a = args as Record<string, unknown>;
  const db = str(a.databaseId);
  if (db) return { type: "database", id: db };
  const page = str(a.pageId);
  if (page) return { type: typeOfPath(page), id: page };
  const path = str(a.path);
  if (path) return { type: FOLDER_TOOLS.has(tool) && !/\.md$/i.test(path) ? "folder" : typeOfPath(path), id: path };
  // move_note's source; query_audit_log's `from` is a time, not a target.
  const from = tool === "move_note" ? str(a.from) : null;
  if (from) return { type: "page", id: from };
  const resource = str(a.resource);
  if (resource) return { type: "resource", id: resource };
  if (Array.isArray(a.pageIds)) {
    const first = str(a.pageIds[0]);
    if (first) return { type: typeOfPath(first), id: a.pageIds.length > 1 ? `${first} (+${a.pageIds.length - 1} more)` : first };
  }
  const proposal = a.proposalId ?? (tool.includes("proposal") ? a.id : undefined);
  if (typeof proposal === "number" || typeof proposal === "string") return { type: "proposal", id: String(proposal).slice(0, MAX_ID) };
  return null;
}
