import type { Database } from "bun:sqlite";
import { ToolError } from "../errors";
import { findNote } from "../retrieval/notes";
import { normalizeVaultPath, resolveFolder } from "../vault/paths";
import type { VaultContext } from "../vault-context";
import { startsWith } from "../store/sql-text";

/** A `> [!ai]` callout as the tools return it (spec: pending_directives). */
export interface Directive {
  path: string;
  line: number;
  title: string;
  body: string;
  done: boolean;
}

/** Which notes a directive query looks at: the whole vault, one note, or one folder and below. */
export type DirectiveScope = { kind: "all" } | { kind: "note"; path: string } | { kind: "folder"; folder: string };

export const ALL_NOTES: DirectiveScope = { kind: "all" };

/**
 * Turn a tool's `path` argument into a scope. A path naming an indexed note
 * scopes to that note; a `.md` path that names none is note-not-found; any
 * other path is a folder (which may not exist yet: a poll can wait for it).
 */
export function resolveScope(vault: VaultContext, path: string | undefined): DirectiveScope {
  if (path === undefined) return ALL_NOTES;
  const rel = normalizeVaultPath(path, { allowRoot: true });
  if (rel === "") return ALL_NOTES;
  try {
    return { kind: "note", path: findNote(vault.indexDb, vault.root, rel).path };
  } catch (e) {
    if (!(e instanceof ToolError) || e.kind !== "note-not-found" || /\.md$/i.test(rel)) throw e;
  }
  // Spelt as on disk: a folder named composed that a Mac wrote decomposed, or in another letter case, found nothing.
  return { kind: "folder", folder: resolveFolder(vault.root, rel) };
}

export function scopeCovers(scope: DirectiveScope, path: string): boolean {
  if (scope.kind === "all") return true;
  if (scope.kind === "note") return scope.path === path;
  return path.startsWith(scope.folder + "/");
}

function scopeSql(scope: DirectiveScope): { where: string; params: (string | number)[] } {
  if (scope.kind === "note") return { where: "n.path = ?", params: [scope.path] };
  if (scope.kind === "folder") {
    const under = startsWith("n.folder", scope.folder + "/");
    return { where: `(n.folder = ? OR ${under.sql})`, params: [scope.folder, ...under.params] };
  }
  return { where: "1", params: [] };
}

interface Row {
  path: string;
  line: number;
  title: string;
  body: string;
  done: number;
}

/**
 * Directives from the index, in path then file order. `limit`: the first ones only, read as such (a vault can hold tens of thousands: 50,000 read whole cost
 * ~0.15 s of the request thread for each list of 25). directiveKeys over a prefix gives the keys the whole
 * list would: a key counts only the copies before it in its own note.
 */
export function queryDirectives(db: Database, scope: DirectiveScope, opts: { includeDone?: boolean; limit?: number } = {}): Directive[] {
  const { where, params } = scopeSql(scope);
  const rows = db
    .query(
      `SELECT n.path AS path, d.line AS line, d.title AS title, d.body AS body, d.done AS done
       FROM directives d JOIN notes n ON n.id = d.note_id
       WHERE ${where} ${opts.includeDone ? "" : "AND d.done = 0"} ORDER BY n.path, d.ord LIMIT ?`,
    )
    .all(...params, opts.limit ?? -1) as Row[];
  return rows.map((r) => ({ path: r.path, line: r.line, title: r.title, body: r.body, done: r.done === 1 }));
}

export function countPendingDirectives(db: Database): number {
  return (db.query("SELECT count(*) AS n FROM directives WHERE done = 0").get() as { n: number }).n;
}

/**
 * A directive's identity across edits: its note, its text, and which copy of
 * that text it is in the note. Not its line, so text added above a directive
 * neither counts as a change of the pending set nor loses its lease.
 */
export function directiveKeys(ds: { path: string; title: string; body: string }[]): string[] {
  const seen = new Map<string, number>();
  return ds.map((d) => {
    const base = `${d.path}\u0000${d.title}\u0000${d.body}`;
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    return `${base}\u0000${n}`;
  });
}
