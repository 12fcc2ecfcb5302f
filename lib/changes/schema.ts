// state.db table of the change feed (get_changes_since): one row per item
// (note or base) with the last change reported about it. In state.db, not
// index.db, so that deleting or rebuilding the index keeps every cursor valid
// and, since a row remembers the content hash it last reported, a rebuild
// re-reports nothing. One entry of STATE_MIGRATIONS; never edit it once shipped.
export const CHANGES_TABLES_SQL = `
  CREATE TABLE change_journal (
    id TEXT PRIMARY KEY,            -- vault-relative path of the note or .base file
    kind TEXT NOT NULL CHECK (kind IN ('note', 'base')),
    seq INTEGER NOT NULL UNIQUE,    -- order of the last change: cursors are positions in it
    change TEXT NOT NULL CHECK (change IN ('created', 'updated', 'deleted')),
    title TEXT NOT NULL,            -- kept on a tombstone: the last known title
    hash TEXT,                      -- content hash last reported; NULL on a tombstone
    database_id TEXT,               -- for a note: the base it was a row of when last recorded
    updated_at INTEGER NOT NULL,    -- ms: when the change happened (file mtime; detection time for a delete)
    seen_at INTEGER NOT NULL,       -- ms: when Lettuce recorded it (what since= compares)
    created_seq INTEGER NOT NULL    -- seq at which the item last came into existence
  );
  CREATE INDEX change_journal_seen ON change_journal(seen_at);
`;
