// Folded titles of every note and database, for substring matching in JS
// (SQLite's LIKE folds ASCII case only, and cannot drop accents). Folding
// 6,500 titles costs ~40 ms, so the list is kept per vault and rebuilt only
// when the index changed (an index pass in this process, or a write from
// another connection), reusing the folded form of titles that did not change.
import type { VaultContext } from "../vault-context";
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

interface Titles {
  entries: TitleEntry[];
  /** title → folded title, reused by the next rebuild for titles that did not change. */
  memo: Map<string, string>;
}

const KEY = {};

function titles(vault: VaultContext): Titles {
  return indexMemo<Titles>(vault, KEY, (prev) => {
    const memo = new Map<string, string>();
    const folded = (s: string) => {
      let f = memo.get(s) ?? prev?.memo.get(s);
      if (f === undefined) f = fold(s);
      memo.set(s, f);
      return f;
    };
    const entries: TitleEntry[] = [];
    for (const r of vault.indexDb.query("SELECT path, name, title FROM notes ORDER BY path").all() as { path: string; name: string; title: string }[]) {
      entries.push({ path: r.path, title: r.title, kind: "note", folded: `${folded(r.title)}\n${folded(r.name)}` });
    }
    for (const r of vault.indexDb.query("SELECT path FROM files WHERE lower(path) LIKE '%.base' ORDER BY path").all() as { path: string }[]) {
      const t = databaseTitle(r.path);
      entries.push({ path: r.path, title: t, kind: "database", folded: folded(t) });
    }
    return { entries, memo };
  });
}

export function titleEntries(vault: VaultContext): TitleEntry[] {
  return titles(vault).entries;
}

const DATABASES = {};

/**
 * The `.base` files only, kept apart from the notes' titles: search_workspace asks for them on every call, and
 * building every note's entry again after each change to get them cost ~20 ms on obsidian-hub (~0.3 s at 100k).
 */
export function databaseEntries(vault: VaultContext): TitleEntry[] {
  return indexMemo<TitleEntry[]>(vault, DATABASES, () =>
    (vault.indexDb.query("SELECT path FROM files WHERE lower(path) LIKE '%.base' ORDER BY path").all() as { path: string }[]).map((r) => {
      const t = databaseTitle(r.path);
      return { path: r.path, title: t, kind: "database" as const, folded: fold(t) };
    }),
  );
}
