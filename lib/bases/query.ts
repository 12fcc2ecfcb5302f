// get_database_schema and query_database over a base: the schema with its
// views, and rows filtered by column value, projected to some fields, paged
// by a cursor that names the last row's path (rows are in path order, so a
// note created or deleted between two pages neither repeats nor hides a row).
import { ToolError } from "../errors";
import { splitFrontmatter } from "../vault/parse";
import { loadBase, resolveBaseId, type BaseView } from "./base-file";
import { rowsOf, type RowNote, type VaultLike } from "./rows";
import { columnsOf, MAX_COLUMNS, type Column, type ColumnReader } from "./schema";
import { readVaultText } from "../vault/read-file";
import { compareAsSql } from "../store/sql-text";

export interface DatabaseSchema {
  name: string;
  schema: Column[];
  /** How many columns the base has, when `schema` leaves some out (more than MAX_COLUMNS). */
  schemaTotal?: number;
  views: Pick<BaseView, "id" | "name" | "config">[];
}

export interface DatabaseRow {
  id: string;
  title: string;
  properties: Record<string, unknown>;
  content?: string;
  contentTruncated?: boolean;
}

export interface QueryInput {
  databaseId: string;
  limit: number;
  filters?: Record<string, unknown>;
  fields?: string[];
  cursor?: string;
}

export interface QueryResult {
  schema: Column[];
  /** As in DatabaseSchema; absent when `fields` picked the columns. */
  schemaTotal?: number;
  rows: DatabaseRow[];
  hasMore: boolean;
  nextCursor?: string;
}

/** A row body longer than this is cut (contentTruncated: true); get_page or read_note reads it whole. */
export const MAX_ROW_CONTENT = 24 * 1024;
/** Once the bodies on a page add up to this, the page ends early (hasMore stays true): an agent pays for every byte. */
export const PAGE_CONTENT_BUDGET = 48 * 1024;

const columnCache = new WeakMap<RowNote[], ColumnReader[]>();

function columns(vault: VaultLike, databaseId: string) {
  const id = resolveBaseId(vault.indexDb, vault.root, databaseId);
  const base = loadBase(vault.root, id);
  const rows = rowsOf(vault, base);
  // rowsOf returns a new array whenever the index or the base changed, so the array is the cache key.
  let cols = columnCache.get(rows);
  if (!cols) {
    cols = columnsOf(base, rows);
    columnCache.set(rows, cols);
  }
  return { base, rows, cols };
}

export function databaseSchema(vault: VaultLike, databaseId: string): DatabaseSchema {
  const { base, cols } = columns(vault, databaseId);
  return {
    name: base.name,
    schema: cols.slice(0, MAX_COLUMNS).map((c) => c.column),
    ...cut(cols),
    views: base.views.map(({ id, name, config }) => ({ id, name, config })),
  };
}

const cut = (cols: ColumnReader[]) => (cols.length > MAX_COLUMNS ? { schemaTotal: cols.length } : {});

/** The column ids an error lists: the schema's, not every key of a vault's notes. */
function columnList(cols: ColumnReader[]): string {
  if (!cols.length) return "(none)";
  const ids = cols.slice(0, MAX_COLUMNS).map((c) => c.id).join(", ");
  return cols.length > MAX_COLUMNS ? `${ids} and ${cols.length - MAX_COLUMNS} more` : ids;
}

function findColumn(cols: ColumnReader[], key: string): ColumnReader | undefined {
  const k = key.toLowerCase();
  // By the reader's id and name: a column left out of the schema is worked out only once it is picked.
  return cols.find((c) => c.id.toLowerCase() === k) ?? cols.find((c) => c.name.toLowerCase() === k);
}

const norm = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v) ?? "").trim().toLowerCase();

/**
 * One filter: a string matches a scalar value case-insensitively or an element
 * of a list; an array needs every one of its values among the row's list
 * (multi-select); a number or boolean matches equal values (an unset checkbox
 * is false); null matches rows without the property.
 */
function matcher(col: ColumnReader, want: unknown): (row: RowNote) => boolean {
  if (want === null) return (row) => isEmpty(col.read(row));
  if (Array.isArray(want)) {
    if (!want.every((w) => ["string", "number", "boolean"].includes(typeof w))) {
      throw new ToolError("invalid-input", `filters.${col.column.id}: a multi-select filter is an array of strings`);
    }
    const need = want.map(norm);
    return (row) => {
      const v = col.read(row);
      const have = new Set((Array.isArray(v) ? v : isEmpty(v) ? [] : [v]).map(norm));
      return need.every((n) => have.has(n));
    };
  }
  if (typeof want === "string" || typeof want === "number") {
    const w = norm(want);
    return (row) => {
      const v = col.read(row);
      if (Array.isArray(v)) return v.some((x) => norm(x) === w);
      return !isEmpty(v) && norm(v) === w;
    };
  }
  if (typeof want === "boolean") return (row) => (col.read(row) === true) === want;
  throw new ToolError("invalid-input", `filters.${col.column.id}: use a string (select, text), an array (multi-select), a number, a boolean or null`);
}

function isEmpty(v: unknown): boolean {
  return v === null || v === undefined || v === "" || (Array.isArray(v) && v.length === 0);
}

function encodeCursor(databaseId: string, after: string): string {
  return Buffer.from(JSON.stringify({ d: databaseId, a: after })).toString("base64url");
}

function decodeCursor(cursor: string, databaseId: string): string {
  let c: unknown;
  try {
    c = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    c = null;
  }
  const o = c as { d?: unknown; a?: unknown } | null;
  if (!o || typeof o.a !== "string" || typeof o.d !== "string") throw new ToolError("invalid-input", "cursor is not one query_database returned");
  if (o.d !== databaseId) throw new ToolError("invalid-input", `cursor belongs to another database (${o.d})`);
  return o.a;
}

function readBody(root: string, path: string): string {
  try {
    return splitFrontmatter(readVaultText(root, path)).body;
  } catch {
    return "";
  }
}

export function queryDatabase(vault: VaultLike, input: QueryInput): QueryResult {
  const { base, rows, cols } = columns(vault, input.databaseId);
  let wanted = cols.slice(0, MAX_COLUMNS);
  let withContent = false;
  if (input.fields) {
    const picked: ColumnReader[] = [];
    for (const f of input.fields) {
      const col = findColumn(cols, f);
      if (col) {
        if (!picked.includes(col)) picked.push(col);
      } else if (f.trim().toLowerCase() === "content") withContent = true;
      else throw new ToolError("invalid-input", `fields: no column ${JSON.stringify(f)} in ${base.id}; its columns: ${columnList(cols)}, plus "content" for row bodies`);
    }
    wanted = picked;
    if (input.fields.some((f) => f.trim().toLowerCase() === "content")) withContent = true;
  }
  const tests: ((r: RowNote) => boolean)[] = [];
  for (const [key, want] of Object.entries(input.filters ?? {})) {
    const col = findColumn(cols, key);
    if (!col) throw new ToolError("invalid-input", `filters: no column ${JSON.stringify(key)} in ${base.id}; its columns: ${columnList(cols)}`);
    tests.push(matcher(col, want));
  }
  const after = input.cursor ? decodeCursor(input.cursor, base.id) : null;
  const out: DatabaseRow[] = [];
  let contentBytes = 0;
  let hasMore = false;
  for (const row of rows) {
    // Rows come in SQLite's path order (code points), so the cursor is compared in that order.
    if (after !== null && compareAsSql(row.path, after) <= 0) continue;
    if (!tests.every((t) => t(row))) continue;
    if (out.length >= input.limit || (withContent && out.length > 0 && contentBytes >= PAGE_CONTENT_BUDGET)) {
      hasMore = true;
      break;
    }
    const properties: Record<string, unknown> = {};
    for (const c of wanted) {
      const v = c.read(row);
      if (!isEmpty(v)) properties[c.column.id] = v;
    }
    const r: DatabaseRow = { id: row.path, title: row.title, properties };
    if (withContent) {
      const body = readBody(vault.root, row.path);
      r.content = body.length > MAX_ROW_CONTENT ? body.slice(0, MAX_ROW_CONTENT) : body;
      if (body.length > MAX_ROW_CONTENT) r.contentTruncated = true;
      contentBytes += r.content.length;
    }
    out.push(r);
  }
  return {
    schema: wanted.map((c) => c.column),
    ...(input.fields ? {} : cut(cols)),
    rows: out,
    hasMore,
    ...(hasMore ? { nextCursor: encodeCursor(base.id, out[out.length - 1]!.id) } : {}),
  };
}
