// Databases are Obsidian Bases: the API the workspace tools, the change feed
// and the digest use to know databases and their rows. Ids are vault-relative
// paths: a base "Tasks.base", a row "Projects/Fix login.md".
import { ToolError } from "../errors";
import { loadBase as loadBaseFile, resolveBaseId, type LoadedBase } from "./base-file";
import type { EvalBudget } from "./evaluate";
import { TooCostly, UnsupportedExpression } from "./expr";
import { basePaths, costlyVerdict, noteInBase, rowNoteByPath, rowsKnown, rowsOf, tryLoadBase, type RowNote, type VaultLike } from "./rows";

export { baseName, isBasePath, MAX_BASE_BYTES, type LoadedBase } from "./base-file";
export { databaseSchema, queryDatabase, type DatabaseRow, type DatabaseSchema, type QueryResult } from "./query";
export { basePaths, type VaultLike } from "./rows";

export interface DatabaseRef {
  id: string;
  title: string;
}

/** Every database (.base file) in the vault, by path. Unreadable ones are listed too: get_database_schema says what is wrong. */
export function listBases(vault: VaultLike): DatabaseRef[] {
  return basePaths(vault.indexDb).map((id) => ({ id, title: tryLoadBase(vault.root, id)?.name ?? id.slice(id.lastIndexOf("/") + 1).replace(/\.base$/i, "") }));
}

/** One database by an agent-supplied id (validated; .base may be left off). Throws database-not-found / invalid-base / path-invalid. */
export function loadBase(vault: VaultLike, databaseId: string): LoadedBase {
  return loadBaseFile(vault.root, resolveBaseId(vault.indexDb, vault.root, databaseId));
}

/** A database's rows ({id, title}) by path. Throws unsupported-expression when its filters cannot be evaluated. */
export function baseRows(vault: VaultLike, base: LoadedBase): DatabaseRef[] {
  return rowsOf(vault, base).map((r) => ({ id: r.path, title: r.title }));
}

/** Every base of the vault that loads, by path (an unreadable one selects nothing). */
function loadedBases(vault: VaultLike): LoadedBase[] {
  return basePaths(vault.indexDb).flatMap((id) => tryLoadBase(vault.root, id) ?? []);
}

/** Up to this many notes (list_workspace's largest page) are classified one by one when the bases' rows are not at hand (see databasesOf). */
const FEW_NOTES = 500;
/** What classifying them one by one may take in all; past it the bases' rows are worked out instead. */
const FEW_NOTES_MS = 10;
const fewNotesBudget = (): EvalBudget => ({ steps: 0, noteSteps: 0, deadline: performance.now() + FEW_NOTES_MS });

/**
 * The databases a note is a row of, by base path. Bases whose filters Lettuce
 * cannot evaluate, or that do not parse, are left out (their own tools report why).
 */
export function basesContainingNote(vault: VaultLike, notePath: string): DatabaseRef[] {
  const note = rowNoteByPath(vault.indexDb, notePath);
  if (!note) return [];
  const out: DatabaseRef[] = [];
  for (const id of basePaths(vault.indexDb)) {
    const base = tryLoadBase(vault.root, id);
    if (!base || costlyVerdict(vault, base)) continue;
    try {
      if (noteInBase(base, note, fewNotesBudget())) out.push({ id, title: base.name });
    } catch (e) {
      if (!(e instanceof UnsupportedExpression || e instanceof ToolError)) throw e;
      // Past the few notes' budget: the base's rows answer. Their pass over the vault has its own budget and
      // leaves a verdict when it runs past it, which the next call (the change journal asks on every write)
      // skips the base on; and a note that only looked slow (the thread was not scheduled) is still answered.
      if (e instanceof TooCostly) {
        try {
          if (rowsOf(vault, base).some((r) => r.path === notePath)) out.push({ id, title: base.name });
        } catch (err) {
          if (!(err instanceof ToolError)) throw err;
        }
      }
    }
  }
  return out;
}

/**
 * For get_page / get_related_pages / list_workspace: a note's database (the
 * first base containing it, by path), and up to `limit` sibling rows.
 * null when the note is a plain page.
 */
export function databaseRowInfo(vault: VaultLike, notePath: string, limit = 10): { databaseId: string; databaseTitle: string; siblings: { total: number; items: DatabaseRef[] } } | null {
  const first = basesContainingNote(vault, notePath)[0];
  if (!first) return null;
  const base = tryLoadBase(vault.root, first.id);
  if (!base) return null;
  const others = rowsOf(vault, base).filter((r) => r.path !== notePath);
  return { databaseId: first.id, databaseTitle: first.title, siblings: { total: others.length, items: others.slice(0, limit).map((r) => ({ id: r.path, title: r.title })) } };
}

/**
 * The database each of `paths` is a row of (the first base by path that selects it); notes that are no row are
 * left out. A few notes are asked about one by one while the bases' rows for the current index are not known
 * yet: working those out reads every note back from the index (~160 ms on a 100k-note vault, on the request
 * thread, after each change), where one note takes microseconds. A base whose filter fails on the note, or has
 * failed over the vault, selects nothing, as in databaseOfNotes.
 *
 * The few notes share one small time budget (a real filter takes microseconds a note). Past it the rows answer:
 * their pass over the vault has a budget of its own and leaves the verdict "too costly" when it runs past it,
 * which later calls skip the base on. One note of a hostile base could otherwise take up to the pass's whole
 * budget (a second) on every call and every write (the change journal asks through basesContainingNote).
 */
export function databasesOf(vault: VaultLike, paths: string[]): ReadonlyMap<string, DatabaseRef> {
  const bases = loadedBases(vault);
  if (bases.length === 0) return new Map();
  if (paths.length > FEW_NOTES || bases.every((b) => rowsKnown(vault, b))) return databaseOfNotes(vault, bases);
  const budget = fewNotesBudget();
  const out = new Map<string, DatabaseRef>();
  for (const path of paths) {
    const note = rowNoteByPath(vault.indexDb, path);
    if (!note) continue;
    for (const base of bases) {
      if (costlyVerdict(vault, base)) continue;
      try {
        if (noteInBase(base, note, budget)) {
          out.set(path, { id: base.id, title: base.name });
          break;
        }
      } catch (e) {
        if (e instanceof TooCostly) return databaseOfNotes(vault, bases);
        if (!(e instanceof UnsupportedExpression || e instanceof ToolError)) throw e;
      }
    }
  }
  return out;
}

/**
 * Which database each row note belongs to (the first base by path that
 * selects it), for classifying many notes at once. Bases that do not parse or
 * whose filters cannot be evaluated select nothing here.
 */
export function databaseOfNotes(vault: VaultLike, bases: LoadedBase[] = loadedBases(vault)): ReadonlyMap<string, DatabaseRef> {
  const parts: BasePart[] = [];
  for (const base of bases) {
    let rows: RowNote[] | null;
    try {
      rows = rowsOf(vault, base);
    } catch (e) {
      if (!(e instanceof ToolError)) throw e;
      rows = null;
    }
    parts.push({ id: base.id, title: base.name, rows });
  }
  // rowsOf hands back the same array until the index or the base changes, so equal arrays mean an
  // equal map: get_page and list_workspace ask for it on every call, and with a base over every
  // note of a big vault building it again cost ~0.6 ms a call.
  const last = lastMap;
  if (last && last.db === vault.indexDb && last.root === vault.root && sameParts(last.parts, parts)) return last.map;
  const map = new Map<string, DatabaseRef>();
  for (const { id, title, rows } of parts) for (const r of rows ?? []) if (!map.has(r.path)) map.set(r.path, { id, title });
  lastMap = { db: vault.indexDb, root: vault.root, parts, map };
  return map;
}

interface BasePart {
  id: string;
  title: string;
  /** null when the base's filters cannot be evaluated. */
  rows: RowNote[] | null;
}

let lastMap: { db: VaultLike["indexDb"]; root: string; parts: BasePart[]; map: Map<string, DatabaseRef> } | null = null;

function sameParts(a: BasePart[], b: BasePart[]): boolean {
  return a.length === b.length && a.every((x, i) => {
    const y = b[i]!;
    return x.id === y.id && x.title === y.title && x.rows === y.rows;
  });
}
