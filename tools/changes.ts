import { z } from "zod";
import { changesSince } from "../lib/changes/feed";
import { caughtUpJournal } from "../lib/changes/journal";
import { ALL_SCOPES, defineTool, limitField, READ_ONLY } from "./types";

export const getChangesSince = defineTool({
  name: "get_changes_since",
  description: "What was created, updated or deleted since a time or cursor, oldest first: {changes, hasMore, nextCursor}.",
  details: "What changed in the vault since a time or a previous cursor: notes and databases created, edited (by agents or people, in any editor) or deleted, oldest first: {changes: [{id, type, title, changeType, updatedAt, databaseId?}], hasMore, nextCursor}. Keep nextCursor for the next sync; a renamed note is a delete plus a create. Without since/cursor, every item as created. Parameters: since: ISO 8601 time, e.g. \"2026-03-01T00:00:00Z\": changes recorded at or after it. Ignored when cursor is given; cursor: nextCursor from a previous call (or the digest resource's cursor: line); takes priority over since; limit: Maximum changes per page (default 100, max 1000).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    since: z.string().max(100).optional().describe("ISO 8601"),
    cursor: z.string().max(2000).optional().describe("nextCursor, or the digest's cursor:"),
    limit: limitField(100, 1000),
  }),
  async handler({ since, cursor, limit }, { vault }) {
    return changesSince(vault, await caughtUpJournal(vault), { since, cursor, limit });
  },
});

export const changeTools = [getChangesSince];
