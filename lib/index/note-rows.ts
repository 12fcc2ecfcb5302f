import type { Database, Statement } from "bun:sqlite";
import { mimeTypeOf } from "../vault/mime";
import { noteName, type ParsedNote } from "../vault/parse";
import type { FileEntry } from "../vault/scan";
import type { FtsSink } from "./fts-sink";

/** A link row whose resolution may need redoing. */
export interface LinkRow {
  noteId: number;
  ord: number;
  target: string;
  kind: "wikilink" | "markdown";
  resolved: string | null;
  source: string;
}

/**
 * The rows one note occupies in the index (notes, links, tags, headings,
 * directives, mentions, full text) and the attachment rows, written with
 * prepared statements. The Indexer decides what changes; this writes it.
 */
export class NoteRows {
  private readonly st: {
    insertNote: Statement; updateNote: Statement; touchNote: Statement; deleteNote: Statement;
    insertLink: Statement; insertTag: Statement; insertHeading: Statement; insertDirective: Statement;
    insertMention: Statement; insertFts: Statement; clear: Statement[];
    upsertFile: Statement; deleteFile: Statement; linksByKey: Statement; setResolved: Statement;
  };

  constructor(db: Database) {
    const q = (sql: string) => db.prepare(sql);
    this.st = {
      insertNote: q(`INSERT INTO notes(path, name, folder, title, size, mtime, ctime, hash, frontmatter, tags, aliases)
                     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      updateNote: q(`UPDATE notes SET title = ?, size = ?, mtime = ?, ctime = ?, hash = ?, frontmatter = ?, tags = ?, aliases = ? WHERE id = ?`),
      touchNote: q(`UPDATE notes SET size = ?, mtime = ? WHERE id = ?`),
      deleteNote: q(`DELETE FROM notes WHERE id = ?`),
      insertLink: q(`INSERT INTO links(note_id, ord, target, target_key, display, kind, heading, block, embed, line, resolved)
                     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      insertTag: q(`INSERT INTO tags(note_id, tag, tag_lc) VALUES (?, ?, ?)`),
      insertHeading: q(`INSERT INTO headings(note_id, ord, level, title, slug, line) VALUES (?, ?, ?, ?, ?, ?)`),
      insertDirective: q(`INSERT INTO directives(note_id, ord, line, title, body, done) VALUES (?, ?, ?, ?, ?, ?)`),
      insertMention: q(`INSERT INTO mentions(note_id, line, handle, handle_lc, context) VALUES (?, ?, ?, ?, ?)`),
      insertFts: q(`INSERT INTO fts(rowid, title, body) VALUES (?, ?, ?)`),
      clear: ["links", "tags", "headings", "directives", "mentions"]
        .map((t) => q(`DELETE FROM ${t} WHERE note_id = ?`))
        .concat(q(`DELETE FROM fts WHERE rowid = ?`)),
      upsertFile: q(`INSERT OR REPLACE INTO files(path, size, mtime, mime) VALUES (?, ?, ?, ?)`),
      deleteFile: q(`DELETE FROM files WHERE path = ?`),
      linksByKey: q(`SELECT l.note_id AS noteId, l.ord AS ord, l.target AS target, l.kind AS kind, l.resolved AS resolved, n.path AS source
                     FROM links l JOIN notes n ON n.id = l.note_id WHERE l.target_key = ?`),
      setResolved: q(`UPDATE links SET resolved = ? WHERE note_id = ? AND ord = ?`),
    };
  }

  /**
   * Store a parsed note: a new row (id undefined) or a replacement of note `id`.
   * `resolved` holds each link's resolved path. Full-text rows go to `fts`
   * (the bulk writer thread) when given. Returns the note's id.
   */
  write(id: number | undefined, entry: FileEntry, hash: string, p: ParsedNote, resolved: (string | null)[], fts: FtsSink | null): number {
    const fm = JSON.stringify(p.frontmatter);
    const tags = JSON.stringify(p.tags);
    const aliases = JSON.stringify(p.aliases);
    if (id !== undefined) {
      this.clear(id);
      this.st.updateNote.run(p.title, entry.size, entry.mtimeMs, entry.ctimeMs, hash, fm, tags, aliases, id);
    } else {
      const slash = entry.path.lastIndexOf("/");
      const folder = slash === -1 ? "" : entry.path.slice(0, slash);
      // run() + lastInsertRowid: bun:sqlite's get() on INSERT … RETURNING costs ~0.3 ms a row here.
      id = Number(this.st.insertNote.run(entry.path, noteName(entry.path), folder, p.title, entry.size, entry.mtimeMs, entry.ctimeMs, hash, fm, tags, aliases).lastInsertRowid);
    }
    p.links.forEach((l, i) =>
      this.st.insertLink.run(id, i, l.target, l.targetKey, l.display, l.kind, l.heading, l.block, l.embed ? 1 : 0, l.line, resolved[i] ?? null),
    );
    for (const t of p.tags) this.st.insertTag.run(id, t, t.toLowerCase());
    p.headings.forEach((h, i) => this.st.insertHeading.run(id, i, h.level, h.title, h.id, h.line));
    p.directives.forEach((d, i) => this.st.insertDirective.run(id, i, d.line, d.title, d.body, d.done ? 1 : 0));
    for (const m of p.mentions) this.st.insertMention.run(id, m.line, m.handle, m.handle.toLowerCase(), m.context);
    const titleField = p.aliases.length ? `${p.title} ${p.aliases.join(" ")}` : p.title;
    if (fts) fts.push(id, titleField, p.body);
    else this.st.insertFts.run(id, titleField, p.body);
    return id;
  }

  /** Only the file's size or time moved (same content hash). */
  touch(id: number, entry: FileEntry): void {
    this.st.touchNote.run(entry.size, entry.mtimeMs, id);
  }

  delete(id: number): void {
    this.clear(id);
    this.st.deleteNote.run(id);
  }

  private clear(id: number): void {
    for (const s of this.st.clear) s.run(id);
  }

  upsertFile(a: FileEntry): void {
    this.st.upsertFile.run(a.path, a.size, a.mtimeMs, mimeTypeOf(a.path));
  }

  deleteFile(path: string): void {
    this.st.deleteFile.run(path);
  }

  linksWithKey(key: string): LinkRow[] {
    return this.st.linksByKey.all(key) as LinkRow[];
  }

  setResolved(row: LinkRow, resolved: string | null): void {
    this.st.setResolved.run(resolved, row.noteId, row.ord);
  }
}
