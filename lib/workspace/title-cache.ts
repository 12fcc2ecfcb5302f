// Folded titles of every note and database, for substring matching in JS
// (SQLite's LIKE folds ASCII case only, and cannot drop accents). Folding
// 6,500 titles costs ~40 ms, so the list is kept per vault and rebuilt only
// when the index changed (an index pass in this process, or a write from
// another connection), reusing the folded form of titles that did not change.
import type { Database } from "bun:sqlite";
import type { VaultContext } from "../vault-context";
import { databaseTitle } from "./databases";
import { fold } from "./text";

export interface TitleEntry {
  path: string;
  title: string;
  kind: "note" | "database";
  /** fold(title) and fold(file name), joined by a newline (which no query contains). */
  folded: string;
}

interface Cache {
  seq: number;
  builtSeq: number;
  dataVersion: number;
  entries: TitleEntry[];
  memo: Map<string, string>;
}

const caches = new WeakMap<VaultContext, Cache>();

function dataVersion(db: Database): number {
  return (db.query("PRAGMA data_version").get() as { data_version: number }).data_version;
}

export function titleEntries(vault: VaultContext): TitleEntry[] {
  let c = caches.get(vault);
  if (!c) {
    const cache: Cache = { seq: 0, builtSeq: -1, dataVersion: -1, entries: [], memo: new Map() };
    const off = vault.indexer.onChange(() => cache.seq++);
    vault.onClose(off);
    caches.set(vault, cache);
    c = cache;
  }
  const dv = dataVersion(vault.indexDb);
  if (c.builtSeq === c.seq && c.dataVersion === dv) return c.entries;
  const seq = c.seq;
  const memo = new Map<string, string>();
  const folded = (s: string) => {
    let f = c!.memo.get(s) ?? memo.get(s);
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
  c.entries = entries;
  c.memo = memo;
  c.builtSeq = seq;
  c.dataVersion = dv;
  return entries;
}
