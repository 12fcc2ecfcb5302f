// Reading an Obsidian Bases file (`*.base`, YAML): its filters compiled into
// predicates, its formulas, its property settings and its views. A base's id
// is its vault-relative path ("Tasks.base"); its name is the file name.
import type { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import { ToolError } from "../errors";
import { normalizeVaultPath, safeAbsPath } from "../vault/paths";
import { readVaultText } from "../vault/read-file";
import { parseBaseYaml } from "./base-yaml";
import { evaluate, truthy, type EvalEnv } from "./evaluate";
import { formulaRefs, parseExpr, UnsupportedExpression, type Expr } from "./expr";

export type FilterNode = { op: "and" | "or" | "not"; items: FilterNode[] } | { op: "expr"; src: string; expr: Expr };

export interface BaseView {
  /** Unique within the base: the view's name (a repeated name gets "-2", "-3"). */
  id: string;
  name: string;
  /** The view as written in the file (type, order, sort, filters, limit, groupBy, …). */
  config: Record<string, unknown>;
}

export interface LoadedBase {
  id: string;
  name: string;
  /** The base-level filters; null = every note. Compiled lazily: an unsupported one is `error`. */
  filters: FilterNode | null;
  /** Why the base-level filters cannot be evaluated, when they cannot. */
  filterError: UnsupportedExpression | null;
  formulas: Map<string, Expr | UnsupportedExpression>;
  formulaSources: Map<string, string>;
  /** `properties:` as written, keyed by column id (note.x is written x). */
  properties: Map<string, { displayName?: string }>;
  views: BaseView[];
  /** Columns the views name in `order`, in order (ids as in `properties`). */
  viewColumns: string[];
  /** size:mtime of the file this was read from (cache key). */
  stamp: string;
}

// A real base is a few KB of YAML. Past this it is no database definition, and parsing it runs where
// requests wait (base-yaml.ts: Bun's parser takes under 30 ms for 32 KB of any shape tried).
/** A base past this size is invalid and never read. */
export const MAX_BASE_BYTES = 32 * 1024;

export function isBasePath(path: string): boolean {
  return /\.base$/i.test(path);
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1).replace(/\.base$/i, "");
}

/** A column id as Bases writes it, normalised: `note.status` and `status` are the same column. */
export function columnId(key: string): string {
  return key.startsWith("note.") ? key.slice(5) : key;
}

function compileFilter(node: unknown, where: string): FilterNode {
  if (typeof node === "string") {
    return { op: "expr", src: node, expr: parseExpr(node) };
  }
  if (typeof node === "number" || typeof node === "boolean") {
    return { op: "expr", src: String(node), expr: parseExpr(String(node)) };
  }
  if (node && typeof node === "object" && !Array.isArray(node)) {
    const keys = Object.keys(node);
    if (keys.length !== 1 || !["and", "or", "not"].includes(keys[0]!)) {
      throw new UnsupportedExpression(JSON.stringify(node).slice(0, 200), `a filter object in ${where} must have exactly one of and, or, not (found ${keys.join(", ") || "nothing"})`);
    }
    const op = keys[0] as "and" | "or" | "not";
    const raw = (node as Record<string, unknown>)[op];
    const list = Array.isArray(raw) ? raw : raw == null ? [] : [raw];
    return { op, items: list.map((x) => compileFilter(x, where)) };
  }
  throw new UnsupportedExpression(JSON.stringify(node)?.slice(0, 200) ?? String(node), `a filter in ${where} must be a string or an and/or/not object`);
}

/** Does the note in `env` pass the filter? (`not` = none of its items is true, as Obsidian's "None of the following".) */
export function passes(f: FilterNode, env: EvalEnv): boolean {
  switch (f.op) {
    case "expr":
      return truthy(evaluate(f.expr, env));
    case "and":
      return f.items.every((x) => passes(x, env));
    case "or":
      return f.items.some((x) => passes(x, env));
    case "not":
      return !f.items.some((x) => passes(x, env));
  }
}

const cache = new Map<string, LoadedBase>();
const broken = new Map<string, { stamp: string; error: ToolError }>();
/** Bytes of the files behind `cache`'s entries. */
let cachedBytes = 0;
/**
 * Compiled bases kept: every survey (get_page, list_workspace, the change feed) loads every base in
 * turn, and with 500 entries evicted first-in-first-out a vault of 501 bases missed on each one, every
 * time. Bounded by the files' bytes instead: ~8,000 real bases of a few KB, or 512 at the size limit.
 */
const MAX_CACHED_BYTES = 16 * 1024 * 1024;
const MAX_CACHED = 20_000;

function remember(key: string, base: LoadedBase, size: number): void {
  const old = cache.get(key);
  if (old) {
    cache.delete(key);
    cachedBytes -= sizeOf(old);
  }
  cache.set(key, base);
  cachedBytes += size;
  while (cache.size > MAX_CACHED || cachedBytes > MAX_CACHED_BYTES) {
    const [k, v] = cache.entries().next().value!;
    cache.delete(k);
    cachedBytes -= sizeOf(v);
  }
}

const sizeOf = (b: LoadedBase) => Number(b.stamp.slice(0, b.stamp.indexOf(":")));

function invalid(id: string, why: string): never {
  throw new ToolError("invalid-base", `${id} is not a valid base: ${why}`, { databaseId: id });
}

/** Vault-relative path of a database id, refused unless it is an existing `.base` file inside the vault. */
export function resolveBaseId(db: Database, root: string, input: string): string {
  if (typeof input !== "string" || !input.trim()) throw new ToolError("invalid-input", "databaseId must be a non-empty string");
  const rel = normalizeVaultPath(input);
  if (!isBasePath(rel)) {
    const guess = rel + ".base";
    if (db.query("SELECT 1 FROM files WHERE path = ?").get(guess)) return resolveBaseId(db, root, guess);
    throw new ToolError("database-not-found", `Not a database: ${rel} (a database is an Obsidian .base file; list them with list_workspace or search_workspace)`, { databaseId: input });
  }
  safeAbsPath(root, rel);
  const row = db.query("SELECT path FROM files WHERE path = ?").get(rel) as { path: string } | null;
  const found = row ?? (db.query("SELECT path FROM files WHERE path = ? COLLATE NOCASE").get(rel) as { path: string } | null);
  if (!found) throw new ToolError("database-not-found", `Database not found: ${rel}`, { databaseId: input });
  return found.path;
}

/**
 * Read and compile one base. Cached by size and mtime, so a base is read once
 * until it changes. A YAML error is `invalid-base`; an unsupported base-level
 * filter is kept as `filterError` (reported when rows are asked for).
 */
export function loadBase(root: string, id: string): LoadedBase {
  const abs = safeAbsPath(root, id);
  let st;
  try {
    st = statSync(abs);
  } catch {
    throw new ToolError("database-not-found", `Database not found: ${id}`, { databaseId: id });
  }
  if (!st.isFile()) throw new ToolError("database-not-found", `Database not found: ${id}`, { databaseId: id });
  // The status change time and inode too: a sync client or `cp -p` puts back the mtime, and a same-sized
  // replacement then kept the old compiled base until a restart (the sync audit of 2026-12-05).
  const stamp = `${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}`;
  const key = `${root}\0${id}`;
  const hit = cache.get(key);
  if (hit && hit.stamp === stamp) {
    // Least recently used goes first.
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  // A broken base is remembered as such: every survey of the bases (get_page, list_workspace,
  // the change feed) would otherwise parse up to a megabyte of YAML again to hear the same error.
  const failed = broken.get(key);
  if (failed && failed.stamp === stamp) throw failed.error;
  try {
    return compile(root, id, stamp, st.size);
  } catch (e) {
    if (e instanceof ToolError && e.kind === "invalid-base") {
      broken.set(key, { stamp, error: e });
      if (broken.size > MAX_CACHED) broken.delete(broken.keys().next().value!);
    }
    throw e;
  }
}

function compile(root: string, id: string, stamp: string, size: number): LoadedBase {
  if (size > MAX_BASE_BYTES) invalid(id, `the file is larger than ${MAX_BASE_BYTES} bytes`);
  let text: string;
  try {
    text = readVaultText(root, id);
  } catch {
    throw new ToolError("database-not-found", `Database not found: ${id}`, { databaseId: id });
  }
  let doc: unknown;
  try {
    doc = parseBaseYaml(text);
  } catch (e) {
    invalid(id, `its YAML does not parse (${(e as Error).message.split("\n")[0]})`);
  }
  if (doc == null) doc = {};
  if (typeof doc !== "object" || Array.isArray(doc)) invalid(id, "the top level must be a mapping (filters, properties, views, …)");
  const d = doc as Record<string, unknown>;

  let filters: FilterNode | null = null;
  let filterError: UnsupportedExpression | null = null;
  if (d.filters != null) {
    try {
      filters = compileFilter(d.filters, "filters");
    } catch (e) {
      if (!(e instanceof UnsupportedExpression)) throw e;
      filterError = e;
    }
  }

  const formulas = new Map<string, Expr | UnsupportedExpression>();
  const formulaSources = new Map<string, string>();
  if (d.formulas && typeof d.formulas === "object" && !Array.isArray(d.formulas)) {
    for (const [name, src] of Object.entries(d.formulas as Record<string, unknown>)) {
      const text = String(src ?? "");
      formulaSources.set(name, text);
      try {
        formulas.set(name, parseExpr(text));
      } catch (e) {
        if (!(e instanceof UnsupportedExpression)) throw e;
        formulas.set(name, e);
      }
    }
  }

  // A formula the base does not define was null, so `formula.nope == null` selected every note.
  const unknownFormula = (src: string, e: Expr): UnsupportedExpression | null => {
    const name = formulaRefs(e).find((n) => !formulas.has(n));
    return name === undefined ? null : new UnsupportedExpression(src, `formula.${name} (no formula named ${JSON.stringify(name)} in this base)`);
  };
  for (const [name, f] of formulas) {
    if (f instanceof UnsupportedExpression) continue;
    const err = unknownFormula(formulaSources.get(name)!, f);
    if (err) formulas.set(name, err);
  }
  const firstUnknown = (f: FilterNode): UnsupportedExpression | null => {
    if (f.op === "expr") return unknownFormula(f.src, f.expr);
    for (const x of f.items) {
      const err = firstUnknown(x);
      if (err) return err;
    }
    return null;
  };
  if (filters) filterError ??= firstUnknown(filters);

  const properties = new Map<string, { displayName?: string }>();
  if (d.properties && typeof d.properties === "object" && !Array.isArray(d.properties)) {
    for (const [key, conf] of Object.entries(d.properties as Record<string, unknown>)) {
      const dn = conf && typeof conf === "object" ? (conf as Record<string, unknown>).displayName : undefined;
      properties.set(columnId(key), typeof dn === "string" || typeof dn === "number" ? { displayName: String(dn) } : {});
    }
  }

  const views: BaseView[] = [];
  const viewColumns: string[] = [];
  const used = new Map<string, number>();
  const rawViews = Array.isArray(d.views) ? d.views : [];
  rawViews.forEach((v, i) => {
    const config = v && typeof v === "object" && !Array.isArray(v) ? { ...(v as Record<string, unknown>) } : {};
    const name = typeof config.name === "string" && config.name.trim() ? config.name : `View ${i + 1}`;
    const n = (used.get(name) ?? 0) + 1;
    used.set(name, n);
    views.push({ id: n === 1 ? name : `${name}-${n}`, name, config });
    if (Array.isArray(config.order)) for (const c of config.order) if (typeof c === "string" && !viewColumns.includes(columnId(c))) viewColumns.push(columnId(c));
  });
  if (!views.length) views.push({ id: "Table", name: "Table", config: { type: "table" } });

  const base: LoadedBase = { id, name: baseName(id), filters, filterError, formulas, formulaSources, properties, views, viewColumns, stamp };
  remember(`${root}\0${id}`, base, size);
  return base;
}

/** The base's own filters as a clear error when they cannot be evaluated. */
export function unsupportedError(base: LoadedBase, e: UnsupportedExpression): ToolError {
  return new ToolError(
    "unsupported-expression",
    `${base.id}: Lettuce cannot evaluate this base's filter ${JSON.stringify(e.expression)}: ${e.what}. See docs/workspace.md for the supported subset.`,
    { databaseId: base.id, expression: e.expression, unsupported: e.what },
  );
}
