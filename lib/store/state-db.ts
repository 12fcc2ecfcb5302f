import { Database } from "bun:sqlite";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { migrate } from "./migrate";
import { limitWal, useWal } from "./wal-limit";
import { ensureLettuceDir, lettuceDir } from "./index-db";
import { addTextRefsIfMissing, EDIT_TEXTS_SQL, OWNER_STAMPS_SQL, TEXT_PARTS_SQL, WRITE_TABLES_SQL } from "../write/schema";
import { CHANGES_TABLES_SQL } from "../changes/schema";
import { AUDIT_TABLES_SQL } from "../audit/schema";
import { REVIEWS_TABLE_SQL } from "./reviews";
import { WEB_TABLES_SQL } from "../web/schema";

// state.db holds what cannot be rebuilt from the vault (tokens, and later the
// edits timeline, proposals, reviews, audit). Append migrations; never edit one.
export const STATE_MIGRATIONS: string[] = [
  `
  CREATE TABLE tokens (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    scope TEXT NOT NULL CHECK (scope IN ('read', 'propose', 'write')),
    hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    last_used_at TEXT,
    revoked_at TEXT
  );
  CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  `,
  WRITE_TABLES_SQL, // agent-edits timeline and proposals (lib/write)
  CHANGES_TABLES_SQL, // the change feed's journal (lib/changes)
  AUDIT_TABLES_SQL, // the audit log (lib/audit)
  REVIEWS_TABLE_SQL, // human reviews bound to a note's content hash (lib/store/reviews.ts)
  WEB_TABLES_SQL, // web UI login codes, sessions, daily health scores (lib/web)
  // Which edit undid which: "already undone by #N" and the timeline's "reverted by" look this up.
  `CREATE INDEX agent_edits_reverts ON agent_edits(reverts) WHERE reverts IS NOT NULL;`,
  // The process applying an approved proposal, until its edit is recorded: a crash in between is found at the next start.
  `ALTER TABLE proposals ADD COLUMN claimed_by INTEGER;`,
  // When an item of the change feed last came into being (ms, as seen): a since= sync tells created from updated by it.
  `ALTER TABLE change_journal ADD COLUMN created_seen_at INTEGER;`,
  // Approvals recorded before claims named their process (0: "a process from before"): an older Lettuce
  // killed mid-approval left such a row "approved" with no edit; lib/write/recover.ts settles them once.
  `UPDATE proposals SET claimed_by = 0 WHERE status = 'approved' AND edit_id IS NULL AND claimed_by IS NULL;`,
  EDIT_TEXTS_SQL, // the timeline's texts, each stored once (lib/write/edit-texts.ts)
  // The change journal dates each pass after its latest change, and a since= sync finds the first creation
  // after it: each read every row without these (~5-13 ms a call at 100k notes, on the request thread).
  `CREATE INDEX IF NOT EXISTS change_journal_updated ON change_journal(updated_at);
   CREATE INDEX IF NOT EXISTS change_journal_created ON change_journal(created_seen_at, created_seq);`,
  TEXT_PARTS_SQL, // a big timeline text's bytes in parts, each written in a transaction of its own (lib/write/text-parts.ts)
  OWNER_STAMPS_SQL, // the stamp of the process beside each pid marking work in flight (lib/write/schema.ts)
];

export function stateDbPath(root: string): string {
  return join(lettuceDir(root), "state.db");
}

function connect(root: string, synchronous: "FULL" | "NORMAL"): Database {
  const db = new Database(stateDbPath(root), { create: true, strict: true });
  // The busy timeout first: switching a new file to WAL takes a lock another process opening it may hold.
  db.exec("PRAGMA busy_timeout = 5000");
  useWal(db);
  db.exec(`PRAGMA synchronous = ${synchronous}`);
  limitWal(db);
  return db;
}

export function openStateDb(root: string): Database {
  ensureLettuceDir(root);
  const db = connect(root, "FULL");
  migrate(db, STATE_MIGRATIONS, "state.db");
  addTextRefsIfMissing(db);
  return db;
}

/**
 * A second connection to state.db for rows a server writes as it goes (the edits timeline, the audit
 * log, the change journal, a token's last use, the health score), with synchronous = NORMAL: in WAL mode a commit then reaches the OS but is not fsynced, so a
 * process crash loses nothing while a write costs no disk flush on the event loop (an audit flush's
 * fsync took 9-49 ms now and then on this machine's disk, and a request arriving then waited for it).
 * A power cut may drop the last few rows, never a note's content (a note's temp file and folder are
 * fsynced). Open it after openStateDb, which creates the tables.
 */
export function openStateDbNoSync(root: string): Database {
  return connect(root, "NORMAL");
}

/**
 * Make what the no-sync connection has committed durable: an fsync of state.db's WAL on the file system's
 * thread pool. A call whose row must survive a power cut (a proposal) awaits this instead of committing
 * through the fsyncing connection, whose fsync holds the thread answering every caller (on a slow disk,
 * each proposal held every other caller for the whole flush).
 */
export async function syncStateWal(root: string): Promise<void> {
  const wal = await open(`${stateDbPath(root)}-wal`, "r").catch(() => null);
  // No WAL file: nothing is waiting in one (a checkpoint that emptied it fsynced the database first).
  if (!wal) return;
  try {
    await wal.sync();
  } catch (e) {
    // The row is committed (in the OS's cache): a failure said now would have the agent propose it again.
    console.error(`lettuce: could not flush state.db to the disk (${(e as Error).message}); the last proposals may not survive a power cut`);
  } finally {
    await wal.close();
  }
}

export function getSetting(db: Database, key: string): string | null {
  return (db.query("SELECT value FROM settings WHERE key = ?").get(key) as { value: string } | null)?.value ?? null;
}

export function setSetting(db: Database, key: string, value: string): void {
  db.query("INSERT OR REPLACE INTO settings(key, value) VALUES (?, ?)").run(key, value);
}
