// Where the workspace tools meet Obsidian Bases. A `.base` file is an item of
// type `database` (id = its path, title = its file name without `.base`).
// Which notes are rows of which database is lib/bases' business (another
// branch): until it is wired in, every note is a plain `page`. Wiring it is a
// change to the two functions marked WIRE below and nothing else: every
// workspace tool classifies items through classifyNotes() and finds a row's
// siblings through databaseSiblings().
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
 * search pages classify up to a few hundred notes per call).
 * WIRE: ask lib/bases which `.base` files select each note; a note several
 * databases select is a row of the first by path.
 */
export function classifyNotes(_vault: VaultContext, paths: string[]): Map<string, NoteClass> {
  return new Map(paths.map((p) => [p, { type: "page" as const }]));
}

export function classifyNote(vault: VaultContext, path: string): NoteClass {
  return classifyNotes(vault, [path]).get(path)!;
}

/**
 * Other rows of the database a note is a row of (first `limit`, with the
 * total), for get_related_pages' `siblings`; null when the note is no row.
 * WIRE: lib/bases' rows of `databaseId`, minus the note itself.
 */
export function databaseSiblings(
  _vault: VaultContext,
  _notePath: string,
  cls: NoteClass,
  _limit: number,
): { total: number; items: { id: string; title: string }[] } | null {
  if (cls.type !== "database_row" || !cls.databaseId) return null;
  return { total: 0, items: [] };
}
