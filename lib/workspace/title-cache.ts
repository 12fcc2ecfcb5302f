// Folded titles of every note and database, for substring matching in JS
// (SQLite's LIKE folds ASCII case only, and cannot drop accents). Folding
// 6,500 titles costs ~40 ms, so the list is kept per connection and rebuilt
// only when the index's generation moved, reusing the folded form of titles
// that did not change. Even so a rebuild reads every note's title again
// (~0.2–0.3 s at 100k notes), so search_workspace asks a read worker
// (titleMatches runs there; see tools/workspace.ts).
import type { Database } from "bun:sqlite";
import { basePaths } from "../bases";
import type { VaultContext } from "../vault-context";
import { getMeta } from "../store/index-db";
import { databaseTitle } from "./databases";
import { fold } from "./text";
import { indexMemo } from "./vault-cache";

export interface TitleEntry {
  path: string;
  title: string;
  kind: "note" | "database";
  /** fold(title) and fold(file name), joined by a newline (which no query contains). */
  folded: string;
}

export type TitleMatch = Pick<TitleEntry, "path" | "title" | "kind">;

interface Titles {
  gen: string | null;
  entries: TitleEntry[];
  /** title → folded title, reused by the next rebuild for titles that did not change. */
  memo: Map<string, string>;
}

const byConnection = new WeakMap<Database, Titles>();

function titles(db: Database): TitleEntry[] {
  const gen = getMeta(db, "gen");
  const prev = byConnection.get(db);
  if (prev && gen !== null && prev.gen === gen) return prev.entries;
  const memo = new Map<string, string>();
  const folded = (s: string) => {
    let f = memo.get(s) ?? prev?.memo.get(s);
    if (f === undefined) f = fold(s);
    memo.set(s, f);
    return f;
  };
  const entries: TitleEntry[] = [];
  for (const r of db.query("SELECT path, name, title FROM notes ORDER BY path").all() as { path: string; name: string; title: string }[]) {
    entries.push({ path: r.path, title: r.title, kind: "note", folded: `${folded(r.title)}\n${folded(r.name)}` });
  }
  entries.push(...baseEntries(db, folded));
  byConnection.set(db, { gen, entries, memo });
  return entries;
}

/** Notes and databases whose title or file name holds `query` (case and accents folded): a title starting with it first, then shorter titles. */
export function titleMatches(db: Database, query: string, limit: number): TitleMatch[] {
  const fq = fold(query);
  return titles(db)
    .filter((e) => e.folded.includes(fq))
    .sort((a, b) => Number(!fold(a.title).startsWith(fq)) - Number(!fold(b.title).startsWith(fq)) || a.title.length - b.title.length)
    .slice(0, limit)
    .map(({ path, title, kind }) => ({ path, title, kind }));
}

const DATABASES = {};

/**
 * The `.base` files only, kept apart from the notes' titles: search_workspace asks for them on every call, and
 * building every note's entry again after each change to get them cost ~20 ms on obsidian-hub (~0.3 s at 100k).
 */
export function databaseEntries(vault: VaultContext): TitleEntry[] {
  return indexMemo<TitleEntry[]>(vault, DATABASES, () => baseEntries(vault.indexDb, fold));
}

function baseEntries(db: Database, folded: (s: string) => string): TitleEntry[] {
  return basePaths(db).map((path) => {
    const title = databaseTitle(path);
    return { path, title, kind: "database", folded: folded(title) };
  });
}
