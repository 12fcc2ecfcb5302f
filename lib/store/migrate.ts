import type { Database } from "bun:sqlite";

/**
 * Apply schema migrations in order, tracking progress in PRAGMA user_version.
 * Each entry is one version; append new ones, never edit a shipped one.
 */
export function migrate(db: Database, migrations: readonly string[], label: string): void {
  const current = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
  if (current > migrations.length) {
    throw new Error(`${label} schema version ${current} is newer than this Lettuce (${migrations.length}); upgrade Lettuce`);
  }
  for (let v = current; v < migrations.length; v++) {
    db.transaction(() => {
      db.exec(migrations[v]!);
      db.exec(`PRAGMA user_version = ${v + 1}`);
    })();
  }
}
