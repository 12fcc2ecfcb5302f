import type { Database } from "bun:sqlite";
import { accessSync, constants as fsConstants, existsSync } from "node:fs";
import { join } from "node:path";
import { ToolError } from "../errors";
import { foldName, lstatInVault, pathSpellings, safeAbsPath } from "../vault/paths";
import { isAscii, nameKey } from "../vault/fold";
import { noteName } from "../vault/parse";
import { isNoteEntry, isNotePath, MAX_NOTE_FILE_BYTES } from "../vault/scan";
import { startsWith } from "../store/sql-text";

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
 * then with ".md" added, then case-insensitively (agents often lowercase);
 * each time under every spelling pathSpellings() gives (the literal path
 * first, then percent-decoded, NFC and NFD forms).
 * Throws path-invalid / note-not-found as the spec says.
 */
export function findNote(db: Database, root: string, input: string): NoteRow {
  const spellings = pathSpellings(input);
  const rel = spellings[0]!;
  for (const s of spellings) safeAbsPath(root, s);
  const q = db.query(`SELECT ${SUMMARY_COLUMNS} FROM notes WHERE path = ?`);
  const nocase = db.query(`SELECT ${SUMMARY_COLUMNS} FROM notes WHERE path = ? COLLATE NOCASE`);
  const withMd = (p: string) => (/\.md$/i.test(p) ? p : p + ".md");
  let row: NoteRow | null = null;
  for (const s of spellings) {
    row = (q.get(s) as NoteRow | null) ?? (/\.md$/i.test(s) ? null : (q.get(s + ".md") as NoteRow | null));
    if (row) return row;
  }
  for (const s of spellings) {
    row = (nocase.get(withMd(s)) as NoteRow | null) ?? foldedMatch(db, withMd(s));
    if (row) return row;
  }
  // Indexed state may lag a file created a moment ago; say so precisely.
  const st = lstatInVault(root, rel);
  if (st?.isFile() && isNotePath(rel) && !isNoteEntry(rel, st.size)) {
    throw new ToolError("too-large", `${rel} is ${st.size} bytes: Markdown files over ${MAX_NOTE_FILE_BYTES} bytes are not notes (search and list_attachments see them as files)`, {
      size: st.size,
      maxBytes: MAX_NOTE_FILE_BYTES,
    });
  }
  const onDisk = existsSync(join(root, rel));
  if (onDisk && !/\.md$/i.test(rel)) throw new ToolError("note-not-found", `Not a note (not Markdown): ${rel}; use read_attachment`);
  // There but never indexed because this user may not read it: not-found would have an agent create it again.
  if (st?.isFile() && isNotePath(rel)) {
    try {
      accessSync(join(root, rel), fsConstants.R_OK);
    } catch {
      throw new ToolError("permission-denied", `${rel} exists, but the server's user may not read it (permission denied)`);
    }
  }
  // A bare name or a title ("Canvas" for Plugins/Canvas.md) is what an agent most often gets wrong: name the notes it may mean.
  const guesses = notesNamed(db, rel);
  if (guesses.length) {
    throw new ToolError("note-not-found", `Note not found: ${rel}; did you mean ${guesses.map((g) => JSON.stringify(g)).join(" or ")}?`, { didYouMean: guesses });
  }
  throw new ToolError("note-not-found", `Note not found: ${rel}`);
}

/**
 * The note at `path` in another letter case outside ASCII (`über.md` for `Über.md`): SQLite's NOCASE folds
 * ASCII only. The note's name key narrows it to the few notes of that name, compared by foldName as links are.
 */
function foldedMatch(db: Database, path: string): NoteRow | null {
  if (isAscii(path)) return null;
  const key = nameKey(noteName(path));
  if (!key) return null;
  const want = foldName(path);
  const named = db.query("SELECT n.id, n.path FROM name_keys k JOIN notes n ON n.id = k.note_id WHERE k.key = ? ORDER BY n.path").all(key) as { id: number; path: string }[];
  const hit = named.find((r) => foldName(r.path) === want);
  return hit ? (db.query(`SELECT ${SUMMARY_COLUMNS} FROM notes WHERE id = ?`).get(hit.id) as NoteRow) : null;
}

/** Up to five notes whose file name or title is the last part of `rel` (case aside, ".md" optional). */
function notesNamed(db: Database, rel: string): string[] {
  const name = rel.slice(rel.lastIndexOf("/") + 1).replace(/\.md$/i, "");
  if (!name) return [];
  return (db.query("SELECT path FROM notes WHERE name = ?1 COLLATE NOCASE OR title = ?1 COLLATE NOCASE ORDER BY length(path), path LIMIT 5").all(name) as { path: string }[]).map((r) => r.path);
}

/** One page of note summaries. */
export interface NotePage {
  items: NoteSummary[];
  total: number;
}

function pageOfNotes(db: Database, where: string, params: (string | number)[], limit: number, offset: number): NotePage {
  const total = (db.query(`SELECT count(*) AS n FROM notes ${where}`).get(...params) as { n: number }).n;
  const rows = db.query(`SELECT ${SUMMARY_COLUMNS} FROM notes ${where} ORDER BY path LIMIT ? OFFSET ?`).all(...params, limit, offset) as NoteRow[];
  return { items: rows.map(summarize), total };
}

/** Notes in a folder ("" = the vault root), with or without its sub-folders, by path. */
export function listNotesIn(db: Database, folder: string, recursive: boolean, limit: number, offset: number): NotePage {
  if (folder && recursive) {
    const under = startsWith("folder", folder + "/");
    return pageOfNotes(db, `WHERE (folder = ? OR ${under.sql})`, [folder, ...under.params], limit, offset);
  }
  if (folder || !recursive) return pageOfNotes(db, "WHERE folder = ?", [folder], limit, offset);
  return pageOfNotes(db, "", [], limit, offset);
}

/** Notes carrying a lower-cased tag or one nested under it, by path. */
export function notesWithTag(db: Database, tagLc: string, limit: number, offset: number): NotePage {
  const under = startsWith("tag_lc", tagLc + "/");
  return pageOfNotes(db, `WHERE id IN (SELECT note_id FROM tags WHERE tag_lc = ? OR ${under.sql})`, [tagLc, ...under.params], limit, offset);
}

/** The folders directly under `folder` ("" = the vault root) that hold notes at any depth, by name. */
export function childFolders(db: Database, folder: string): string[] {
  const under = startsWith("folder", folder + "/");
  const rows = (
    folder ? db.query(`SELECT DISTINCT folder FROM notes WHERE ${under.sql}`).all(...under.params) : db.query("SELECT DISTINCT folder FROM notes WHERE folder != ''").all()
  ) as { folder: string }[];
  const prefix = folder ? folder + "/" : "";
  const out = new Set<string>();
  for (const r of rows) out.add(prefix + r.folder.slice(prefix.length).split("/")[0]);
  return [...out].sort((a, b) => a.localeCompare(b));
}

/** Notes by last modification, newest first (the web UI's start page). */
export function recentNotes(db: Database, limit: number, offset: number): NotePage {
  const total = noteCount(db);
  const rows = db.query(`SELECT ${SUMMARY_COLUMNS} FROM notes ORDER BY mtime DESC, path LIMIT ? OFFSET ?`).all(limit, offset) as NoteRow[];
  return { items: rows.map(summarize), total };
}

/** Which notes a page lists: a folder's (with or without its sub-folders), a tag's, or the newest first. */
export type NoteListing = { folder: string; recursive: boolean } | { tag: string } | { recent: true };

/**
 * One page of a listing. Each sorts every note it selects (~20-90 ms at 100k notes for a big folder, a
 * common tag or the newest notes), so the server runs it in a read worker (lib/offload).
 */
export function notePage(db: Database, of: NoteListing, limit: number, offset: number): NotePage {
  if ("folder" in of) return listNotesIn(db, of.folder, of.recursive, limit, offset);
  if ("tag" in of) return notesWithTag(db, of.tag, limit, offset);
  return recentNotes(db, limit, offset);
}

export function noteById(db: Database, id: number): NoteRow | null {
  return db.query(`SELECT ${SUMMARY_COLUMNS} FROM notes WHERE id = ?`).get(id) as NoteRow | null;
}

export function noteByPath(db: Database, path: string): NoteRow | null {
  return db.query(`SELECT ${SUMMARY_COLUMNS} FROM notes WHERE path = ?`).get(path) as NoteRow | null;
}

export function noteCount(db: Database): number {
  return (db.query("SELECT count(*) AS n FROM notes").get() as { n: number }).n;
}

export interface Heading {
  level: number;
  title: string;
  /** The rendered anchor's slug. */
  id: string;
  line: number;
}

/** A note's headings in document order. */
export function noteHeadings(db: Database, noteId: number): Heading[] {
  return db.query("SELECT level, title, slug AS id, line FROM headings WHERE note_id = ? ORDER BY ord").all(noteId) as Heading[];
}

/**
 * findNote, else the note a wikilink with this text would open: `[[Name]]`, a
 * partial path, an alias (brackets optional). For people at a shell, who type
 * names, not paths.
 */
export function findNoteLikeLink(db: Database, root: string, resolver: { resolve(link: { target: string; kind: "wikilink" }, source: string): string | null }, input: string): NoteRow {
  try {
    return findNote(db, root, input);
  } catch (e) {
    if (!(e instanceof ToolError) || e.kind !== "note-not-found") throw e;
    const target = input.replace(/^\[\[|\]\]$/g, "").replace(/[|#].*$/, "").trim();
    const path = target ? resolver.resolve({ target, kind: "wikilink" }, "") : null;
    const row = path ? noteByPath(db, path) : null;
    if (!row) throw e;
    return row;
  }
}
