import type { Database } from "bun:sqlite";

/** The schema version a database file is at (PRAGMA user_version: how many migrations it has had). */
export function schemaVersion(db: Database): number {
  return (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
}

/** A database file written by a newer Lettuce: this one must not touch its schema. */
export class NewerSchemaError extends Error {}

export function newerSchema(label: string, found: number, known: number): NewerSchemaError {
  return new NewerSchemaError(`${label} schema version ${found} is newer than this Lettuce (${known}); upgrade Lettuce`);
}

/**
 * Apply schema migrations in order, tracking progress in PRAGMA user_version.
 * Each entry is one version; append new ones, never edit a shipped one.
 */
export function migrate(db: Database, migrations: readonly string[], label: string): void {
  const current = schemaVersion(db);
  if (current > migrations.length) throw newerSchema(label, current, migrations.length);
  if (current === migrations.length) return;
  // Each step under the write lock, the version read again once it is held: two processes opening a new
  // vault (or one just upgraded) both read the old version, and the second ran a step the first had done
  // ("table audit_log already exists"; 14 of 20 rounds in the multi-process audit).
  for (;;) {
    const done = db
      .transaction(() => {
        const v = schemaVersion(db);
        if (v > migrations.length) throw newerSchema(label, v, migrations.length);
        if (v === migrations.length) return true;
        db.exec(migrations[v]!);
        db.exec(`PRAGMA user_version = ${v + 1}`);
        return false;
      })
      .immediate();
    if (done) return;
  }
}
