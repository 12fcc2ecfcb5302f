// The size a database's write-ahead log is cut back to once a checkpoint has emptied it. SQLite otherwise
// keeps the file at its largest for good: a burst of writes left state.db-wal at 119 MB, and index.db's and
// fts.db's at ~370 MB (audits of 2026-12-05). Set on every connection that writes the file: the writer that
// starts the log over is the one that cuts it.
import type { Database } from "bun:sqlite";
import { isBusy } from "./write-lock";

export const WAL_SIZE_LIMIT = 16 * 1024 * 1024;

export function limitWal(db: Database, schema = "main"): void {
  db.exec(`PRAGMA ${schema}.journal_size_limit = ${WAL_SIZE_LIMIT}`);
}

/**
 * Put a database in WAL mode. Switching a new file takes a lock that SQLite does not wait for through the
 * busy timeout: two processes opening a new vault at once (two clients starting `lettuce stdio` at login)
 * saw "database is locked" from the pragma itself (the multi-process audit of 2026-12-05). Tried again for
 * up to 5 s, as the busy timeout would.
 */
export function useWal(db: Database, schema = "main"): void {
  for (let waited = 0; ; waited += 10) {
    try {
      db.exec(`PRAGMA ${schema}.journal_mode = WAL`);
      return;
    } catch (e) {
      if (!isBusy(e) || waited >= 5000) throw e;
      Bun.sleepSync(10);
    }
  }
}
