// state.db table of the audit log: one row per tools/call (HTTP and stdio),
// never the arguments' content. One entry of STATE_MIGRATIONS; never edit it once shipped.
export const AUDIT_TABLES_SQL = `
  CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY,
    created_at INTEGER NOT NULL,    -- ms since the epoch
    tool TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('success', 'error')),
    error_kind TEXT,
    target_type TEXT,               -- page, database, attachment, folder, proposal, resource
    target_id TEXT,                 -- the path (or id) the call named; never its content
    agent_name TEXT,
    token_name TEXT NOT NULL
  );
  CREATE INDEX audit_log_time ON audit_log(created_at);
  CREATE INDEX audit_log_tool ON audit_log(tool, created_at);
`;
