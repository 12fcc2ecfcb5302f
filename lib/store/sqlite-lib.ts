// Which SQLite library this process uses. Bun links SQLite into itself on
// Linux and Windows; on macOS it uses Apple's system SQLite, which refuses
// extensions (so no sqlite-vec). LETTUCE_SQLITE_LIB names another SQLite
// (e.g. Homebrew's libsqlite3.dylib) for Database.setCustomSQLite, which must
// run before the first database is opened: main.ts calls this first thing.
import { Database } from "bun:sqlite";

let configured = false;
let custom: { path: string; error: string | null } | null = null;

export function configureSqlite(env: Record<string, string | undefined> = process.env): void {
  if (configured) return;
  configured = true;
  const lib = env.LETTUCE_SQLITE_LIB?.trim();
  if (!lib) return;
  try {
    Database.setCustomSQLite(lib);
    custom = { path: lib, error: null };
  } catch (e) {
    custom = { path: lib, error: (e as Error).message };
  }
}

export interface SqliteInfo {
  version: string;
  /** "bundled with Bun", "Apple's system SQLite", or the LETTUCE_SQLITE_LIB path. */
  library: string;
  /** Why LETTUCE_SQLITE_LIB was not used, when it was set and failed. */
  error: string | null;
}

let version: string | null = null;

export function sqliteInfo(): SqliteInfo {
  configureSqlite();
  if (!version) {
    const db = new Database(":memory:");
    version = (db.query("SELECT sqlite_version() AS v").get() as { v: string }).v;
    db.close();
  }
  const builtIn = process.platform === "darwin" ? "Apple's system SQLite" : "bundled with Bun";
  if (custom && !custom.error) {
    // Only macOS loads another library; elsewhere Bun's own SQLite is linked in and the setting has no effect.
    const library = process.platform === "darwin" ? custom.path : `${builtIn} (LETTUCE_SQLITE_LIB applies only on macOS)`;
    return { version, library, error: null };
  }
  return { version, library: builtIn, error: custom?.error ?? null };
}
