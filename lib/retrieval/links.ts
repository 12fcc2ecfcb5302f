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
