import type { Database } from "bun:sqlite";
import { join } from "node:path";
import { limitWal, useWal } from "./wal-limit";

// The full-text index lives in its own file, .lettuce/fts.db, attached to the
// index connection as `ftsdb`: queries name `fts` unqualified as before. Its
// own file lets a cold scan write it from a second thread, in parallel with
// the notes, links and tags going into index.db (one SQLite file takes one
// writer at a time). A generation number, written in both files by every
// index transaction, tells at open whether a crash left them out of step.

export const FTS_FILE = "fts.db";

export function ftsPath(root: string): string {
  return join(root, ".lettuce", FTS_FILE);
}

/** The schema, for a connection where the FTS file is `schema` ("main" in the writer thread). */
export function ftsSchemaSql(schema: string): string {
  return `
  CREATE TABLE IF NOT EXISTS ${schema}.fts_meta (key TEXT PRIMARY KEY, value TEXT);
  CREATE VIRTUAL TABLE IF NOT EXISTS ${schema}.fts USING fts5(title, body, title_ng, body_ng, tokenize = 'unicode61 remove_diacritics 2');
  `;
}

// title_ng and body_ng: the title's and body's text of scripts written without spaces as n-grams, NULL for a
// note without such text (lib/vault/ngram.ts). A query word holding such text is matched there only, any other
// word in title and body (the n-gram columns hold it only where it is glued to such text), so no word is counted
// in two columns. Title (and alias) matches weigh ten times body matches, in both forms; stored in the table so
// ORDER BY rank uses it.
export const FTS_WEIGHTS = "10.0, 1.0, 10.0, 1.0";
export const FTS_RANK = `INSERT INTO fts(fts, rank) VALUES ('rank', 'bm25(${FTS_WEIGHTS})')`;

/** Attach fts.db (creating it) to an open index connection. */
export function attachFts(db: Database, root: string): void {
  db.query("ATTACH DATABASE ? AS ftsdb").run(ftsPath(root));
  useWal(db, "ftsdb");
  db.exec("PRAGMA ftsdb.synchronous = NORMAL");
  limitWal(db, "ftsdb");
  const missing = () => db.query("SELECT 1 FROM ftsdb.sqlite_master WHERE name = 'fts'").get() === null;
  if (!missing()) return;
  // Created under the write lock, looked for again once it is held: two processes opening a new vault both
  // found it missing, and the second's read-then-write failed "database is locked" at once (no busy wait).
  db.transaction(() => {
    if (!missing()) return;
    db.exec(ftsSchemaSql("ftsdb"));
    db.exec(FTS_RANK);
  }).immediate();
}

export function ftsGeneration(db: Database, schema = "ftsdb"): string | null {
  return (db.query(`SELECT value FROM ${schema}.fts_meta WHERE key = 'gen'`).get() as { value: string } | null)?.value ?? null;
}

export function setFtsGeneration(db: Database, gen: string, schema = "ftsdb"): void {
  db.query(`INSERT OR REPLACE INTO ${schema}.fts_meta(key, value) VALUES ('gen', ?)`).run(gen);
}
