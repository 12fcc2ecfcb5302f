import type { Database } from "bun:sqlite";
import { startsWith } from "../store/sql-text";

export interface AttachmentRow {
  path: string;
  size: number;
  mimeType: string;
}

/** Non-Markdown files under a folder ("" = the whole vault), by path. */
export function listAttachmentsIn(db: Database, folder: string, limit: number, offset: number): { items: AttachmentRow[]; total: number } {
  const under = folder ? startsWith("path", folder + "/") : null;
  const where = under ? `WHERE ${under.sql}` : "";
  const params = under ? under.params : [];
  const total = (db.query(`SELECT count(*) AS n FROM files ${where}`).get(...params) as { n: number }).n;
  const items = db.query(`SELECT path, size, mime AS mimeType FROM files ${where} ORDER BY path LIMIT ? OFFSET ?`).all(...params, limit, offset) as AttachmentRow[];
  return { items, total };
}
