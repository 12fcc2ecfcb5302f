import type { Database } from "bun:sqlite";

export interface Mention {
  path: string;
  handle: string;
  line: number;
  context: string;
}

/** @handle mentions from the index (extracted at parse time, code and emails skipped), in path and line order. */
export function queryMentions(db: Database, opts: { handle?: string; limit: number; offset?: number }): Mention[] {
  const handle = opts.handle?.trim().replace(/^@+/, "").toLowerCase();
  const where = handle ? "WHERE m.handle_lc = ?" : "";
  const params: (string | number)[] = handle ? [handle] : [];
  return db
    .query(
      `SELECT n.path AS path, m.handle AS handle, m.line AS line, m.context AS context
       FROM mentions m JOIN notes n ON n.id = m.note_id ${where}
       ORDER BY n.path, m.line LIMIT ? OFFSET ?`,
    )
    .all(...params, opts.limit, opts.offset ?? 0) as Mention[];
}
