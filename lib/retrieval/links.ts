import type { Database } from "bun:sqlite";

export interface OutgoingLink {
  target: string;
  displayText: string | null;
  kind: string;
  heading: string | null;
  block: string | null;
  embed: boolean;
  line: number;
  resolvedPath: string | null;
}

/** A note's links in document order, one page of them, with the total. */
export function outgoingLinks(db: Database, noteId: number, limit = -1, offset = 0): { items: OutgoingLink[]; total: number } {
  const total = (db.query("SELECT count(*) AS n FROM links WHERE note_id = ?").get(noteId) as { n: number }).n;
  const items = db
    .query(
      `SELECT target, display AS displayText, kind, heading, block, embed, line, resolved AS resolvedPath
       FROM links WHERE note_id = ? ORDER BY ord LIMIT ? OFFSET ?`,
    )
    .all(noteId, limit, offset) as (Omit<OutgoingLink, "embed"> & { embed: number | boolean })[];
  for (const it of items) it.embed = it.embed === 1;
  return { items: items as OutgoingLink[], total };
}

export interface Backlink {
  sourcePath: string;
  sourceName: string;
  displayText: string | null;
  /** The heading or block the link points at (`[[Note#Heading]]`), so two links from one line stay distinguishable. */
  heading: string | null;
  block: string | null;
  line: number;
}

/** Links into a note from other notes, by source path and position, one page of them, with the total. */
export function backlinks(db: Database, notePath: string, noteId: number, limit = -1, offset = 0): { items: Backlink[]; total: number } {
  const where = "FROM links l JOIN notes n ON n.id = l.note_id WHERE l.resolved = ? AND l.note_id != ?";
  const total = (db.query(`SELECT count(*) AS n ${where}`).get(notePath, noteId) as { n: number }).n;
  const items = db
    .query(
      `SELECT n.path AS sourcePath, n.name AS sourceName, l.display AS displayText, l.heading AS heading, l.block AS block, l.line AS line
       ${where} ORDER BY n.path, l.ord LIMIT ? OFFSET ?`,
    )
    .all(notePath, noteId, limit, offset) as Backlink[];
  return { items, total };
}

/** How many distinct other notes link to each of these notes (absent = none): a "well-linked" prior. */
export function inboundCounts(db: Database, noteIds: number[]): Map<number, number> {
  if (!noteIds.length) return new Map();
  const rows = db
    .query(
      `SELECT t.id AS id, count(DISTINCT l.note_id) AS n FROM notes t JOIN links l ON l.resolved = t.path
       WHERE t.id IN (SELECT value FROM json_each(?)) AND l.note_id != t.id GROUP BY t.id`,
    )
    .all(JSON.stringify(noteIds)) as { id: number; n: number }[];
  return new Map(rows.map((r) => [r.id, r.n]));
}

/** The notes a note links to (resolved, itself excluded), in the order it first links to them. */
export function linkedNoteIds(db: Database, noteId: number): number[] {
  const rows = db
    .query("SELECT t.id AS id, min(l.ord) AS o FROM links l JOIN notes t ON t.path = l.resolved WHERE l.note_id = ? AND t.id != l.note_id GROUP BY t.id ORDER BY o")
    .all(noteId) as { id: number }[];
  return rows.map((r) => r.id);
}

/** Every link between two different notes, once per pair and direction. */
export function noteLinkPairs(db: Database): { src: number; dst: number }[] {
  return db.query("SELECT DISTINCT l.note_id AS src, t.id AS dst FROM links l JOIN notes t ON t.path = l.resolved WHERE t.id != l.note_id").all() as { src: number; dst: number }[];
}

/** One indexed link: the note it is in, how it was written, and what it resolved to. */
export interface IndexedLink {
  source: string;
  kind: string;
  target: string;
  resolved: string | null;
}

/**
 * The links a render of a note can meet, as the index resolved them: the note's own, and those of the notes
 * it embeds (one level, as the web page renders embeds).
 */
export function renderLinks(db: Database, path: string): IndexedLink[] {
  const q = db.query("SELECT n.path AS source, l.kind, l.target, l.resolved, l.embed FROM links l JOIN notes n ON n.id = l.note_id WHERE n.path = ?");
  const own = q.all(path) as (IndexedLink & { embed: number })[];
  const embedded = new Set(own.filter((l) => l.embed && l.resolved && /\.md$/i.test(l.resolved) && l.resolved !== path).map((l) => l.resolved!));
  return [...own, ...[...embedded].flatMap((p) => q.all(p) as typeof own)];
}
