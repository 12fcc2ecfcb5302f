// state.db tables of the web UI: one-time login codes, sessions, and the
// daily wiki-health score. One entry of STATE_MIGRATIONS (lib/store/state-db.ts);
// never edit it once shipped.
export const WEB_TABLES_SQL = `
  CREATE TABLE web_login_codes (
    hash TEXT PRIMARY KEY,       -- sha256 of the code; the code itself is only printed
    created_at INTEGER NOT NULL, -- ms since the epoch
    expires_at INTEGER NOT NULL,
    used_at INTEGER
  );
  CREATE TABLE web_sessions (
    hash TEXT PRIMARY KEY,       -- sha256 of the cookie value
    csrf TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL
  );
  CREATE TABLE health_history (
    day TEXT PRIMARY KEY,        -- YYYY-MM-DD on the server's calendar
    score REAL NOT NULL,
    components TEXT NOT NULL     -- the wiki_health answer (JSON)
  );
`;
