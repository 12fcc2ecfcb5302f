// Where the workspace tools meet Obsidian Bases. A `.base` file is an item of
// type `database` (id = its path, title = its file name without `.base`).
// Which notes are rows of which database is lib/bases' business: every
// workspace tool classifies items through classifyNotes() and finds a row's
// siblings through databaseSiblings().
import { databasesOf, loadBase, baseRows, type VaultLike } from "../bases";
import { ToolError } from "../errors";
import type { VaultContext } from "../vault-context";

export type ItemType = "page" | "database" | "database_row" | "folder";

export function isDatabasePath(path: string): boolean {
  return /\.base$/i.test(path);
}

/** A database's title: its file name without `.base`. */
export function databaseTitle(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1).replace(/\.base$/i, "");
}

export interface NoteClass {
  type: "page" | "database_row";
  /** The database (`.base` path) the note is a row of, for database_row. */
  databaseId?: string;
}

/**
 * Classify notes as plain pages or database rows, in one batch (list and
 * search pages classify up to a few hundred notes per call). A note several
 * databases select is a row of the first by path.
 */
export function classifyNotes(vault: VaultContext, paths: string[]): Map<string, NoteClass> {
  const of = databasesOf(vault, paths);
  return new Map(
    paths.map((p): [string, NoteClass] => {
      const db = of.get(p);
      return [p, db ? { type: "database_row", databaseId: db.id } : { type: "page" }];
    }),
  );
}

export function classifyNote(vault: VaultContext, path: string): NoteClass {
  return classifyNotes(vault, [path]).get(path)!;
}

export type Siblings = { total: number; items: { id: string; title: string }[] } | null;

/**
 * Other rows of the database a note is a row of (first `limit`, with the
 * total), for get_related_pages' `siblings`; null when the note is no row.
 */
export function databaseSiblings(
  vault: VaultLike,
  notePath: string,
  cls: NoteClass,
  limit: number,
): Siblings {
  if (cls.type !== "database_row" || !cls.databaseId) return null;
  let rows;
  try {
    rows = baseRows(vault, loadBase(vault, cls.databaseId));
  } catch (e) {
    // The base changed or broke since the note was classified: no siblings to show.
    if (e instanceof ToolError) return { total: 0, items: [] };
    throw e;
  }
  const others = rows.filter((r) => r.id !== notePath);
  return { total: others.length, items: others.slice(0, limit) };
}
