import { z } from "zod";
import { SUMMARY_COLUMNS, summarize, type NoteRow } from "../lib/retrieval/notes";
import { normalizeTag } from "../lib/vault/parse";
import { ALL_SCOPES, defineTool, limitField, offsetField, READ_ONLY } from "./types";

export const listTags = defineTool({
  name: "list_tags",
  description:
    "Every tag in the vault (frontmatter tags and inline #tags, case-insensitive) with how many notes carry it, most used first, paginated: {items: [{tag, count}], total, offset, limit}.",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({ limit: limitField(100, 5000), offset: offsetField }),
  handler({ limit, offset }, { vault }) {
    const db = vault.indexDb;
    const total = (db.query("SELECT count(DISTINCT tag_lc) AS n FROM tags").get() as { n: number }).n;
    const items = db
      .query("SELECT min(tag) AS tag, count(DISTINCT note_id) AS count FROM tags GROUP BY tag_lc ORDER BY count DESC, tag_lc LIMIT ? OFFSET ?")
      .all(limit, offset);
    return { items, total, offset, limit };
  },
});

export const notesByTag = defineTool({
  name: "notes_by_tag",
  description:
    'Notes carrying a tag or any nested descendant of it ("project" also returns notes tagged "project/web"), paginated note summaries {path, name, title, tags, modified, size}. A leading # is optional.',
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({ tag: z.string().min(1).describe('The tag, e.g. "project" or "#area/garden"'), limit: limitField(50), offset: offsetField }),
  handler({ tag, limit, offset }, { vault }) {
    const t = normalizeTag(tag.trim()).toLowerCase();
    const db = vault.indexDb;
    const where = "WHERE id IN (SELECT note_id FROM tags WHERE tag_lc = ? OR substr(tag_lc, 1, ?) = ?)";
    const params = [t, t.length + 1, t + "/"] as const;
    const total = (db.query(`SELECT count(*) AS n FROM notes ${where}`).get(...params) as { n: number }).n;
    const rows = db.query(`SELECT ${SUMMARY_COLUMNS} FROM notes ${where} ORDER BY path LIMIT ? OFFSET ?`).all(...params, limit, offset) as NoteRow[];
    return { items: rows.map(summarize), total, offset, limit };
  },
});

export const tagTools = [listTags, notesByTag];
