import type { Database, Statement } from "bun:sqlite";
import { mimeTypeOf } from "../vault/mime";
import { nameKey } from "../vault/fold";
import { noteName, type ParsedNote } from "../vault/parse";
import type { FileEntry } from "../vault/scan";
import type { FtsSink } from "./fts-sink";
import { ftsTitle, type HugeBody } from "./parse-job";
import { ngramText } from "../vault/ngram";

/** A link row whose resolution may need redoing. */
export interface LinkRow {
  noteId: number;
  ord: number;
  target: string;
  kind: "wikilink" | "markdown";
  resolved: string | null;
  source: string;
}
// A LinkRow's columns and the join that gives its source path; the statements add their WHERE.
const LINK_ROW = `l.note_id AS noteId, l.ord AS ord, l.target AS target, l.kind AS kind, l.resolved AS resolved, n.path AS source
                  FROM links l JOIN notes n ON n.id = l.note_id`;

/**
 * The rows one note occupies in the index (notes, links, tags, headings,
 * directives, mentions, full text) and the attachment rows, written with
 * prepared statements. The Indexer decides what changes; this writes it.
 */
export class NoteRows {
  private readonly st: {
    insertNote: Statement; updateNote: Statement; touchNote: Statement; deleteNote: Statement;
    insertLink: Statement; insertTag: Statement; insertHeading: Statement; insertDirective: Statement;
    insertMention: Statement; insertFts: Statement; insertKey: Statement; clear: Statement[]; deleteFts: Statement;
    upsertFile: Statement; deleteFile: Statement; linksByKey: Statement; unresolvedLinks: Statement; setResolved: Statement; recount: Statement;
  };

  constructor(db: Database) {
    const q = (sql: string) => db.prepare(sql);
    this.st = {
      insertNote: q(`INSERT INTO notes(id, path, name, folder, title, size, mtime, ctime, chg, hash, frontmatter, tags, aliases, unresolved, out_notes)
                     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      // ctime is when the note came into being: an editor's or an agent's save by rename makes a new file (a new
      // birth time) of the same note, so the earlier time stays.
      updateNote: q(`UPDATE notes SET title = ?1, size = ?2, mtime = ?3, ctime = CASE WHEN ctime IS NOT NULL AND ctime < ?4 THEN ctime ELSE ?4 END, chg = ?5, hash = ?6, frontmatter = ?7, tags = ?8, aliases = ?9, unresolved = ?10, out_notes = ?11 WHERE id = ?12`),
      touchNote: q(`UPDATE notes SET size = ?, mtime = ?, chg = ? WHERE id = ?`),
      deleteNote: q(`DELETE FROM notes WHERE id = ?`),
      insertLink: q(`INSERT INTO links(note_id, ord, target, target_key, display, kind, heading, block, embed, line, resolved)
                     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      insertTag: q(`INSERT INTO tags(note_id, tag, tag_lc) VALUES (?, ?, ?)`),
      insertHeading: q(`INSERT INTO headings(note_id, ord, level, title, slug, line) VALUES (?, ?, ?, ?, ?, ?)`),
      insertDirective: q(`INSERT INTO directives(note_id, ord, line, title, body, done) VALUES (?, ?, ?, ?, ?, ?)`),
      insertMention: q(`INSERT INTO mentions(note_id, line, handle, handle_lc, context) VALUES (?, ?, ?, ?, ?)`),
      insertFts: q(`INSERT INTO fts(rowid, title, body, title_ng, body_ng) VALUES (?, ?, ?, ?, ?)`),
      insertKey: q(`INSERT OR IGNORE INTO name_keys(note_id, key) VALUES (?, ?)`),
      clear: ["links", "tags", "headings", "directives", "mentions", "name_keys"].map((t) => q(`DELETE FROM ${t} WHERE note_id = ?`)),
      deleteFts: q(`DELETE FROM fts WHERE rowid = ?`),
      upsertFile: q(`INSERT OR REPLACE INTO files(path, size, mtime, chg, mime) VALUES (?, ?, ?, ?, ?)`),
      deleteFile: q(`DELETE FROM files WHERE path = ?`),
      linksByKey: q(`SELECT ${LINK_ROW} WHERE l.target_key = ?`),
      unresolvedLinks: q(`SELECT l.target_key AS key, ${LINK_ROW} WHERE l.resolved IS NULL`),
      setResolved: q(`UPDATE links SET resolved = ? WHERE note_id = ? AND ord = ?`),
      // The same counts write() makes in memory, from the rows (after links were re-resolved).
      recount: q(`UPDATE notes SET
                    unresolved = (SELECT count(*) FROM (SELECT DISTINCT target, kind FROM links WHERE note_id = ?1 AND resolved IS NULL)),
                    out_notes = (SELECT count(*) FROM links WHERE note_id = ?1 AND resolved IS NOT NULL AND resolved != notes.path AND resolved LIKE '%.md')
                  WHERE id = ?1`),
    };
  }

  /**
   * Store a parsed note: a new row (id undefined) or a replacement of note `id`.
   * `resolved` holds each link's resolved path. Full-text rows go to `fts`
   * (the writer thread: a cold scan, or a batch with a huge note) when given. Returns the note's id.
   */
  write(
    id: number | undefined,
    entry: FileEntry,
    hash: string,
    p: ParsedNote,
    resolved: (string | null)[],
    fts: FtsSink | null,
    /** A new note's id when chosen beforehand (a bulk load); otherwise SQLite picks one. */
    newId?: number,
    /** Its full-text row is already with the writer thread (sent by a parse worker); or a big note's body as UTF-8, for it. */
    fullText: "sent" | HugeBody | undefined = undefined,
  ): number {
    const fm = JSON.stringify(p.frontmatter);
    const tags = JSON.stringify(p.tags);
    const aliases = JSON.stringify(p.aliases);
    const { unresolved, outNotes } = linkCounts(entry.path, p, resolved);
    if (id !== undefined) {
      this.clear(id, fts);
      this.st.updateNote.run(p.title, entry.size, entry.mtimeMs, entry.ctimeMs, entry.changeMs, hash, fm, tags, aliases, unresolved, outNotes, id);
    } else {
      const slash = entry.path.lastIndexOf("/");
      const folder = slash === -1 ? "" : entry.path.slice(0, slash);
      // run() + lastInsertRowid: bun:sqlite's get() on INSERT … RETURNING costs ~0.3 ms a row here.
      id = Number(
        this.st.insertNote.run(newId ?? null, entry.path, noteName(entry.path), folder, p.title, entry.size, entry.mtimeMs, entry.ctimeMs, entry.changeMs, hash, fm, tags, aliases, unresolved, outNotes)
          .lastInsertRowid,
      );
    }
    for (const key of nameKeys(entry.path, p)) this.st.insertKey.run(id, key);
    p.links.forEach((l, i) =>
      this.st.insertLink.run(id, i, l.target, l.targetKey, l.display, l.kind, l.heading, l.block, l.embed ? 1 : 0, l.line, resolved[i] ?? null),
    );
    for (const t of p.tags) this.st.insertTag.run(id, t, t.toLowerCase());
    p.headings.forEach((h, i) => this.st.insertHeading.run(id, i, h.level, h.title, h.id, h.line));
    p.directives.forEach((d, i) => this.st.insertDirective.run(id, i, d.line, d.title, d.body, d.done ? 1 : 0));
    for (const m of p.mentions) this.st.insertMention.run(id, m.line, m.handle, m.handle.toLowerCase(), m.context);
    if (fullText === "sent") return id;
    // The writer thread makes the n-grams of what it is given (a huge note's are not made on this thread).
    const title = ftsTitle(p);
    if (fts) fts.push(id, title, fullText ?? p.body);
    else {
      // A note that grew past BIG_NOTE_BYTES after the pass listed it (its batch then has no writer thread):
      // its body came as bytes. ignoreBOM: a body may start with U+FEFF, which the default decoder drops.
      const body = fullText ? new TextDecoder("utf-8", { ignoreBOM: true }).decode(fullText.utf8) : p.body;
      this.st.insertFts.run(id, title, body, ngramText(title), ngramText(body));
    }
    return id;
  }

  /** Only the file's size or time moved (same content hash). */
  touch(id: number, entry: FileEntry): void {
    this.st.touchNote.run(entry.size, entry.mtimeMs, entry.changeMs, id);
  }

  delete(id: number, fts: FtsSink | null = null): void {
    this.clear(id, fts);
    this.st.deleteNote.run(id);
  }

  /** A note's derived rows; its full-text row through the writer thread when one is in use (it holds fts.db's write lock). */
  private clear(id: number, fts: FtsSink | null): void {
    for (const s of this.st.clear) s.run(id);
    if (fts) fts.remove(id);
    else this.st.deleteFts.run(id);
  }

  upsertFile(a: FileEntry): void {
    this.st.upsertFile.run(a.path, a.size, a.mtimeMs, a.changeMs, mimeTypeOf(a.path));
  }

  deleteFile(path: string): void {
    this.st.deleteFile.run(path);
  }

  linksWithKey(key: string): LinkRow[] {
    return this.st.linksByKey.all(key) as LinkRow[];
  }

  /** Every link that points nowhere yet, with its target key. */
  unresolvedLinks(): (LinkRow & { key: string })[] {
    return this.st.unresolvedLinks.all() as (LinkRow & { key: string })[];
  }

  setResolved(row: LinkRow, resolved: string | null): void {
    this.st.setResolved.run(resolved, row.noteId, row.ord);
  }

  /** Recompute a note's link counts after setResolved changed some of its links. */
  recount(noteId: number): void {
    this.st.recount.run(noteId);
  }
}

/**
 * A note's link counts as lint reads them: distinct unresolved (target, kind)
 * pairs (one finding each), and links resolved to another note (a note with
 * none is an orphan rather than just missing backlinks). recount() is the SQL twin.
 */
export function linkCounts(path: string, p: ParsedNote, resolved: (string | null)[]): { unresolved: number; outNotes: number } {
  let outNotes = 0;
  // One set per kind rather than a joined "kind\0target" key: no string built per unresolved link.
  let wiki: Set<string> | null = null;
  let md: Set<string> | null = null;
  const links = p.links;
  for (let i = 0; i < links.length; i++) {
    const r = resolved[i] ?? null;
    const l = links[i]!;
    if (r === null) (l.kind === "wikilink" ? (wiki ??= new Set()) : (md ??= new Set())).add(l.target);
    else if (r !== path && endsWithMd(r)) outNotes++;
  }
  return { unresolved: (wiki?.size ?? 0) + (md?.size ?? 0), outNotes };
}

/** isNotePath without its case-insensitive regex: called for every resolved link of a cold index (~180k at 10k notes). */
function endsWithMd(p: string): boolean {
  const n = p.length;
  return n >= 3 && p.charCodeAt(n - 3) === 46 /* . */ && (p.charCodeAt(n - 2) | 0x20) === 109 /* m */ && (p.charCodeAt(n - 1) | 0x20) === 100 /* d */;
}

/** The folded names a search can hit exactly: title, file name and aliases (lib/retrieval/search.ts). */
function nameKeys(path: string, p: ParsedNote): Set<string> {
  const keys = new Set<string>();
  for (const s of [p.title, noteName(path), ...p.aliases]) {
    const k = nameKey(s);
    if (k) keys.add(k);
  }
  return keys;
}
