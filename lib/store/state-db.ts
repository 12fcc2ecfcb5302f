import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { migrate } from "./migrate";
import { lettuceDir } from "./index-db";
import { WRITE_TABLES_SQL } from "../write/schema";
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
];

export function openStateDb(root: string): Database {
  const dir = lettuceDir(root);
  mkdirSync(dir, { recursive: true });
  const db = new Database(join(dir, "state.db"), { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = FULL");
  db.exec("PRAGMA busy_timeout = 5000");
  migrate(db, STATE_MIGRATIONS, "state.db");
  return db;
}

export function getSetting(db: Database, key: string): string | null {
  return (db.query("SELECT value FROM settings WHERE key = ?").get(key) as { value: string } | null)?.value ?? null;
}

export function setSetting(db: Database, key: string, value: string): void {
  db.query("INSERT OR REPLACE INTO settings(key, value) VALUES (?, ?)").run(key, value);
}
