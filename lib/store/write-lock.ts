import type { Database } from "bun:sqlite";

// index.db is written by every Lettuce process on a vault (a `serve`, a desktop client's `lettuce stdio`,
// CLI commands). A deferred transaction whose first statements read takes the write lock only at its first
// write, and when another process has committed in between, SQLite fails that write at once ("database is
// locked", no busy wait): 45 of 19,273 vector writes beside a process committing in a loop (2026-12-05).

/**
 * Open a write transaction holding index.db's write lock from its first statement. A write to index.db
 * alone: BEGIN IMMEDIATE would lock the attached fts.db too, which a cold scan's full-text writer thread is
 * filling.
 */
export function beginWriting(db: Database, noWait = false): void {
  db.exec("BEGIN");
  // noWait: SQLITE_BUSY at once when another process holds the lock, rather than block this thread up to
  // the 5 s busy timeout (a read that only wants to freshen the index can do without).
  if (noWait) db.exec("PRAGMA busy_timeout = 0");
  try {
    db.exec("UPDATE meta SET value = value WHERE key = 'format'");
  } catch (e) {
    db.exec("ROLLBACK");
    throw e;
  } finally {
    if (noWait) db.exec("PRAGMA busy_timeout = 5000");
  }
}

/**
 * Run `fn` in a transaction on index.db that holds the write lock from the start (see beginWriting).
 * Inside a transaction the caller already holds, `fn` runs in a savepoint of it.
 */
export function writingTransaction<T>(db: Database, fn: () => T): T {
  if (db.inTransaction) return db.transaction(fn)();
  beginWriting(db);
  try {
    const out = fn();
    db.exec("COMMIT");
    return out;
  } catch (e) {
    if (db.inTransaction) db.exec("ROLLBACK");
    throw e;
  }
}

/** SQLITE_BUSY (and its extended codes): another connection holds a lock this one needs. */
export function isBusy(e: unknown): boolean {
  return String((e as { code?: unknown })?.code ?? "").startsWith("SQLITE_BUSY");
}

/**
 * How long to wait before each new try of work SQLite refused with SQLITE_BUSY at once, without its busy
 * wait (a transaction whose read went stale cannot wait it out; one started again can): 1.55 s in all.
 */
export const BUSY_RETRY_WAITS_MS = [50, 100, 200, 400, 800];
