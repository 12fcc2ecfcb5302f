import type { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ToolError } from "../errors";
import { normalizeVaultPath, safeAbsPath } from "../vault/paths";

export interface NoteRow {
  id: number;
  path: string;
  name: string;
  folder: string;
  title: string;
  size: number;
  mtime: number;
  ctime: number;
  hash: string;
  frontmatter: string;
  tags: string;
  aliases: string;
}

export interface NoteSummary {
  path: string;
  name: string;
  title: string;
  tags: string[];
  modified: string;
  size: number;
}

export function summarize(r: NoteRow): NoteSummary {
  return { path: r.path, name: r.name, title: r.title, tags: JSON.parse(r.tags), modified: new Date(r.mtime).toISOString(), size: r.size };
}

export const SUMMARY_COLUMNS = "id, path, name, folder, title, size, mtime, ctime, hash, tags, frontmatter, aliases";

/**
 * Look up a note by an agent-supplied path: validated, then matched exactly,
 * then case-insensitively (agents often lowercase), then with ".md" added.
 * Throws path-invalid / note-not-found as the spec says.
 */
export function findNote(db: Database, root: string, input: string): NoteRow {
  const rel = normalizeVaultPath(input);
  safeAbsPath(root, rel);
  const q = db.query(`SELECT ${SUMMARY_COLUMNS} FROM notes WHERE path = ?`);
  let row = q.get(rel) as NoteRow | null;
  if (!row && !/\.md$/i.test(rel)) row = q.get(rel + ".md") as NoteRow | null;
  if (!row) {
    row = db.query(`SELECT ${SUMMARY_COLUMNS} FROM notes WHERE path = ? COLLATE NOCASE`).get(/\.md$/i.test(rel) ? rel : rel + ".md") as NoteRow | null;
  }
  if (!row) {
    // Indexed state may lag a file created a moment ago; say so precisely.
    const onDisk = existsSync(join(root, rel));
    throw new ToolError("note-not-found", onDisk && !/\.md$/i.test(rel) ? `Not a note (not Markdown): ${rel}; use read_attachment` : `Note not found: ${rel}`);
  }
  return row;
}
