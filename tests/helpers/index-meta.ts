import { Database } from "bun:sqlite";
import { join } from "node:path";

/** A meta value of a vault's index.db, read in a connection of its own: `gen` is stamped by every index transaction, `indexedAt` by every scan that wrote. */
export function indexMeta(vault: string, key: string): string | null {
  const db = new Database(join(vault, ".lettuce", "index.db"), { readonly: true });
  try {
    return (db.query("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | null)?.value ?? null;
  } finally {
    db.close();
  }
}
