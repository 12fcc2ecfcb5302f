// A base's rows: the vault's notes its base-level filters select, read from
// the index (frontmatter, tags, links) rather than from disk. Row sets are
// cached per index generation, so repeated queries and paging cost one
// evaluation until the vault changes.
import type { Database } from "bun:sqlite";
import { getMeta } from "../store/index-db";
import { loadBase, passes, unsupportedError, type LoadedBase } from "./base-file";
import { evaluationBudget, type EvalBudget, type EvalEnv, type RowFile } from "./evaluate";
import { ToolError } from "../errors";
import { TooCostly, UnsupportedExpression } from "./expr";
import { CostlyVerdicts } from "./verdicts";

/** What lib/bases needs of an open vault (a VaultContext fits). */
export interface VaultLike {
  root: string;
  indexDb: Database;
}

export interface RowNote {
  id: number;
  path: string;
  title: string;
  file: RowFile;
}

interface NoteRowLite {
  id: number;
  path: string;
  folder: string;
  title: string;
  size: number;
  mtime: number;
  ctime: number;
  frontmatter: string;
  tags: string;
}

function parseObject(json: string): Record<string, unknown> {
  try {
    const v = JSON.parse(json);
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

function toRowNote(db: Database, r: NoteRowLite): RowNote {
  let links: string[] | null = null;
  let backlinks: string[] | null = null;
  let embeds: string[] | null = null;
  let tags: string[] | null = null;
  let frontmatter: Record<string, unknown> | null = null;
  // Tags and properties are parsed when a filter or a column first reads them: every note of the vault is
  // made a RowNote again after each change to the index, and a base with no filter, or one on the folder,
  // never reads them (parsing them all was most of the ~15 ms this took per change on obsidian-hub).
  const file: RowFile = {
    path: r.path,
    folder: r.folder,
    size: r.size,
    mtime: r.mtime,
    ctime: r.ctime,
    get tags() {
      tags ??= (JSON.parse(r.tags) as string[]).map((t) => t.toLowerCase());
      return tags;
    },
    get frontmatter() {
      frontmatter ??= parseObject(r.frontmatter);
      return frontmatter;
    },
    links() {
      links ??= (db.query("SELECT coalesce(resolved, target) AS t FROM links WHERE note_id = ? ORDER BY ord").all(r.id) as { t: string }[]).map((x) => x.t);
      return links;
    },
    backlinks() {
      backlinks ??= (
        db.query("SELECT DISTINCT n.path AS p FROM links l JOIN notes n ON n.id = l.note_id WHERE l.resolved = ? AND l.note_id != ? ORDER BY n.path").all(r.path, r.id) as { p: string }[]
      ).map((x) => x.p);
      return backlinks;
    },
    embeds() {
      embeds ??= (db.query("SELECT coalesce(resolved, target) AS t FROM links WHERE note_id = ? AND embed = 1 ORDER BY ord").all(r.id) as { t: string }[]).map((x) => x.t);
      return embeds;
    },
  };
  return { id: r.id, path: r.path, title: r.title, file };
}

const COLS = "id, path, folder, title, size, mtime, ctime, frontmatter, tags";

let allNotesCache: { db: Database; gen: string | null; notes: RowNote[] } | null = null;

/** Every note as the expression language sees it, by path; cached for the current index generation. */
export function allRowNotes(db: Database): RowNote[] {
  const gen = getMeta(db, "gen");
  if (allNotesCache && allNotesCache.db === db && allNotesCache.gen === gen) return allNotesCache.notes;
  const notes = (db.query(`SELECT ${COLS} FROM notes ORDER BY path`).all() as NoteRowLite[]).map((r) => toRowNote(db, r));
  allNotesCache = { db, gen, notes };
  return notes;
}

export function rowNoteByPath(db: Database, path: string): RowNote | null {
  const r = db.query(`SELECT ${COLS} FROM notes WHERE path = ?`).get(path) as NoteRowLite | null;
  return r ? toRowNote(db, r) : null;
}

/** One note's evaluation: its own formula memo, and the pass's budget (a fresh one when none is given). */
export function envFor(base: LoadedBase, file: RowFile, budget: EvalBudget = evaluationBudget()): EvalEnv {
  budget.noteSteps = 0;
  return { file, formulas: base.formulas, memo: new Map(), budget };
}

/** Does one note belong to the base? Throws UnsupportedExpression when the filter cannot be evaluated. */
export function noteInBase(base: LoadedBase, note: RowNote, budget?: EvalBudget): boolean {
  if (base.filterError) throw base.filterError;
  return base.filters === null || passes(base.filters, envFor(base, note.file, budget));
}

// A base whose filters cannot be evaluated is remembered too (for the index generation and the
// version of its file): otherwise every caller that surveys the bases would pay the whole pass again
// before hearing the same error. One that ran past its budget is a verdict of ./verdicts.ts.
const rowCache = new Map<string, { key: string; rows: RowNote[] } | { key: string; error: ToolError }>();
const costlyBases = new CostlyVerdicts<ToolError>();

/** The verdict "too costly" on a base, while it stands: the error to answer, or null. */
export function costlyVerdict(vault: VaultLike, base: LoadedBase): ToolError | null {
  return costlyBases.standing(`${vault.root}\0${base.id}`, base.stamp);
}

/** Remember that evaluating `base` ran past its budget (also found outside rowsOf, e.g. on one note): the error to answer. */
export function rememberCostly(vault: VaultLike, base: LoadedBase, error: ToolError): void {
  costlyBases.overran(`${vault.root}\0${base.id}`, base.stamp, error);
}

/** The base's rows by path. Throws the unsupported-expression ToolError when its filters cannot be evaluated. */
export function rowsOf(vault: VaultLike, base: LoadedBase): RowNote[] {
  const key = `${getMeta(vault.indexDb, "gen")}\0${base.stamp}`;
  const cacheKey = `${vault.root}\0${base.id}`;
  const costly = costlyVerdict(vault, base);
  if (costly) throw costly;
  const hit = rowCache.get(cacheKey);
  if (hit && hit.key === key) {
    if ("error" in hit) throw hit.error;
    return hit.rows;
  }
  let rows: RowNote[];
  try {
    const notes = allRowNotes(vault.indexDb);
    const budget = evaluationBudget(notes.length);
    rows = notes.filter((n) => noteInBase(base, n, budget));
  } catch (e) {
    if (!(e instanceof UnsupportedExpression)) throw e;
    const error = unsupportedError(base, e);
    if (e instanceof TooCostly) {
      rowCache.delete(cacheKey);
      rememberCostly(vault, base, error);
    } else rowCache.set(cacheKey, { key, error });
    throw error;
  }
  rowCache.set(cacheKey, { key, rows });
  costlyBases.clear(cacheKey);
  if (rowCache.size > 200) rowCache.delete(rowCache.keys().next().value!);
  return rows;
}

/** Whether rowsOf has its answer (rows or error) for this base at the current index generation, without working it out. */
export function rowsKnown(vault: VaultLike, base: LoadedBase): boolean {
  if (costlyVerdict(vault, base)) return true;
  const hit = rowCache.get(`${vault.root}\0${base.id}`);
  return hit !== undefined && hit.key === `${getMeta(vault.indexDb, "gen")}\0${base.stamp}`;
}

const basePathsByDb = new WeakMap<Database, { gen: string; paths: readonly string[] }>();

/**
 * Every `.base` file in the vault, by path; kept per index generation. The query reads the whole files table
 * (no index serves a suffix), and classifying one note asks for it: get_pages of 50 notes read it 50 times.
 */
export function basePaths(db: Database): readonly string[] {
  const gen = getMeta(db, "gen");
  const hit = basePathsByDb.get(db);
  if (hit && hit.gen === gen) return hit.paths;
  const paths = (db.query("SELECT path FROM files WHERE path LIKE '%.base' ORDER BY path").all() as { path: string }[]).map((r) => r.path);
  if (gen !== null) basePathsByDb.set(db, { gen, paths });
  return paths;
}

/** Load a base, or null when it is unreadable (bad YAML, gone): for callers that survey every base. */
export function tryLoadBase(root: string, id: string): LoadedBase | null {
  try {
    return loadBase(root, id);
  } catch {
    return null;
  }
}
