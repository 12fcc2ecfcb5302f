// The text of notes that retrieve() did not hand us (graph neighbours, lint and
// tag batches): bodies from the full-text table, passages split the way
// retrieval splits them, so that a quote's heading and ordinal mean the same
// thing whichever way its page entered the context.
import type { Database } from "bun:sqlite";
import { splitForQuery } from "../semantic/keyword-passages";
import type { RetrievalMode } from "../semantic/retrieve";
import type { ContextPassage } from "./validate";


export interface NoteText {
  id: number;
  path: string;
  title: string;
  mtime: number;
  /** Tags as written (frontmatter and inline). */
  tags: string[];
  body: string;
}

/** Path, title, modification time, tags and body (frontmatter removed) of these notes, by id. */
export function noteTexts(db: Database, ids: number[]): Map<number, NoteText> {
  if (!ids.length) return new Map();
  const rows = db
    .query(
      "SELECT n.id AS id, n.path AS path, n.title AS title, n.mtime AS mtime, n.tags AS tags, f.body AS body FROM notes n JOIN fts f ON f.rowid = n.id WHERE n.id IN (SELECT value FROM json_each(?))",
    )
    .all(JSON.stringify(ids)) as (Omit<NoteText, "tags"> & { tags: string })[];
  return new Map(rows.map((r) => [r.id, { ...r, tags: JSON.parse(r.tags) as string[] }]));
}

/** A note's passages in document order, as the given retrieval mode knows them. */
export function notePassages(db: Database, noteId: number, mode: RetrievalMode): ContextPassage[] {
  if (mode !== "keyword") {
    const stored = db.query("SELECT ord, heading, text FROM passages WHERE note_id = ? ORDER BY ord").all(noteId) as ContextPassage[];
    if (stored.length) return stored;
  }
  const body = noteTexts(db, [noteId]).get(noteId)?.body ?? "";
  return splitForQuery(body).map((p) => ({ ord: p.ord, heading: p.heading, text: p.text }));
}

/** The root index.md's frontmatter (where the wiki declares its lint: block), or null. */
export function indexFrontmatter(db: Database): Record<string, unknown> | null {
  const row = db.query("SELECT frontmatter FROM notes WHERE path = 'index.md' COLLATE NOCASE ORDER BY path LIMIT 1").get() as { frontmatter: string } | null;
  try {
    return row ? (JSON.parse(row.frontmatter) as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Note ids by path (paths that are no note are absent). */
export function noteIdsByPath(db: Database, paths: string[]): Map<string, number> {
  if (!paths.length) return new Map();
  const rows = db.query("SELECT id, path FROM notes WHERE path IN (SELECT value FROM json_each(?))").all(JSON.stringify(paths)) as { id: number; path: string }[];
  return new Map(rows.map((r) => [r.path, r.id]));
}
