import { z } from "zod";
import { offloaded } from "../lib/offload/offloaded";
import { ALL_SCOPES, defineTool, limitField, READ_ONLY } from "./types";

const databaseIdField = z
  .string()
  .min(1)
  .max(1000)
  .describe('Path of the .base file, e.g. "Tasks.base"');

export const getDatabaseSchema = defineTool({
  name: "get_database_schema",
  description: "A database's (.base file's) columns and views. Call before query_database.",
  details: "Columns and saved views of a database (an Obsidian .base file), without rows: {name, schema: [{id, name, type, options?}], views: [{id, name, config}]}. Types: text, number, checkbox, date, select, multi_select. Call before query_database to learn column ids. Errors: database-not-found, invalid-base, unsupported-expression. Parameters: databaseId: Database ID: the vault-relative path of an Obsidian .base file, e.g. \"Tasks.base\" (from list_workspace or search_workspace).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({ databaseId: databaseIdField }),
  async handler({ databaseId }, { vault, signal }) {
    // Off the event loop, as query_database: its columns come from every row, a pass over every note.
    return offloaded.databaseSchema(vault, databaseId, signal);
  },
});

export const queryDatabaseTool = defineTool({
  name: "query_database",
  description: "A database's rows (the notes its .base selects): {schema, rows: [{id, title, properties}], hasMore, nextCursor}.",
  details: "Rows of a database (the notes its .base filters select) with their properties: {schema, rows: [{id, title, properties}], hasMore, nextCursor?}. filters: {columnId: \"Done\"} for select/text, {columnId: [\"a\",\"b\"]} for multi-select. fields trims columns; add \"content\" for row bodies. Rows are in path order; pass nextCursor for the next page. Parameters: databaseId: Database ID: the vault-relative path of an Obsidian .base file, e.g. \"Tasks.base\" (from list_workspace or search_workspace); limit: Rows per page (default 50, max 500); filters: Match rows by property value, keyed by column id (or name): a string for select/text columns (case-insensitive), an array for multi-select (the row must have every value), a number, a boolean, or null for \"not set\"; fields: Only these columns (by id or name, case-insensitive); row titles are always included. Add \"content\" to include row Markdown bodies; cursor: nextCursor from the previous page.",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    databaseId: databaseIdField,
    limit: limitField(50, 500),
    filters: z
      .record(z.string().max(200), z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.union([z.string(), z.number(), z.boolean()])).max(200)]))
      .refine((f) => Object.keys(f).length <= 200, "at most 200 filters")
      .optional()
      .describe("{columnId: value}; an array for multi-select"),
    fields: z
      .array(z.string().min(1).max(200))
      .max(200)
      .optional()
      .describe('Columns to keep (id or name); "content" adds row bodies'),
    cursor: z.string().max(4000).optional(),
  }),
  async handler(args, { vault, signal }) {
    // Off the event loop (lib/offload): a base's first query evaluates it over every note.
    return offloaded.queryDatabase(vault, args, signal);
  },
});

export const databaseTools = [getDatabaseSchema, queryDatabaseTool];
