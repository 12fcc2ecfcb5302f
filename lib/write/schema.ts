// state.db tables of the write path: the agent-edits timeline and proposals.
// One entry of STATE_MIGRATIONS (lib/store/state-db.ts); never edit it once shipped.
import type { Database } from "bun:sqlite";

export const WRITE_TABLES_SQL = `
  CREATE TABLE agent_edits (
    id INTEGER PRIMARY KEY,
    group_id INTEGER,            -- the first edit of the same call; NULL on that first edit
    time TEXT NOT NULL,
    tool TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('write', 'move', 'delete')),
    path TEXT NOT NULL,          -- write: the note; move: the destination; delete: the note it was
    from_path TEXT,              -- move: the source
    trash_path TEXT,             -- delete: where the note went under .trash/
    before BLOB,                 -- NULL when the edit created the note
    after BLOB,                  -- NULL when the edit deleted the note
    before_hash TEXT,
    after_hash TEXT,
    agent TEXT NOT NULL,
    token TEXT NOT NULL,
    proposal_id INTEGER,
    reverts INTEGER,             -- the edit this one reverted
    state TEXT NOT NULL CHECK (state IN ('pending', 'applied')),
    tmp TEXT,                    -- pending writes: the temp file being renamed into place
    owner_pid INTEGER            -- pending rows: the process doing the edit (crash recovery skips live ones)
  );
  CREATE INDEX agent_edits_path ON agent_edits(path);
  CREATE INDEX agent_edits_group ON agent_edits(group_id);
  CREATE INDEX agent_edits_pending ON agent_edits(state) WHERE state = 'pending';
  CREATE TABLE proposals (
    id INTEGER PRIMARY KEY,
    created_at TEXT NOT NULL,
    token TEXT NOT NULL,
    agent TEXT NOT NULL,
    tool TEXT NOT NULL,
    path TEXT NOT NULL,
    args TEXT NOT NULL,          -- the validated tool arguments (JSON)
    base TEXT NOT NULL,          -- JSON {path: hash or null}: the notes as the proposal saw them
    summary TEXT NOT NULL,
    diff TEXT NOT NULL,          -- unified diff at proposal time
    status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'withdrawn')),
    decided_at TEXT,
    reason TEXT,
    edit_id INTEGER
  );
  CREATE INDEX proposals_token ON proposals(token, status);
  CREATE INDEX proposals_status ON proposals(status);
`;

// The timeline's texts, each stored once by hash: whole (base NULL) or as the bytes between `prefix` and the
// last `suffix` bytes of its base text (lib/write/edit-texts.ts). Rows of agent_edits written since hold no
// bytes of their own: before_hash and after_hash name their texts here.
export const EDIT_TEXTS_SQL = `
  CREATE TABLE edit_texts (
    id INTEGER PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    base INTEGER,                -- the text this one is a delta of; NULL: stored whole
    depth INTEGER NOT NULL,      -- deltas from here to a whole text
    refs INTEGER NOT NULL,       -- timeline rows naming it as before or after (rows with bytes of their own not counted)
    size INTEGER NOT NULL,       -- bytes of the text
    codec INTEGER NOT NULL,      -- 0 raw, 1 zstd
    prefix INTEGER NOT NULL,     -- a delta: bytes kept from the start of its base
    suffix INTEGER NOT NULL,     -- ...and from its end
    data BLOB NOT NULL           -- the whole text, or a delta's bytes in between
  );
  CREATE INDEX edit_texts_base ON edit_texts(base) WHERE base IS NOT NULL;
`;

/**
 * state.db files written by two commits of 2026-12-05 (f354548, 8bae6f9), before reference counts, have
 * edit_texts without its refs column (their migration's text changed before any release): add it, counted.
 */
export function addTextRefsIfMissing(db: Database): void {
  const cols = db.query("SELECT name FROM pragma_table_info('edit_texts')").all() as { name: string }[];
  if (!cols.length || cols.some((c) => c.name === "refs")) return;
  db.transaction(() => {
    db.exec("ALTER TABLE edit_texts ADD COLUMN refs INTEGER NOT NULL DEFAULT 0");
    db.exec(`UPDATE edit_texts SET refs =
      (SELECT count(*) FROM agent_edits WHERE before IS NULL AND before_hash = edit_texts.hash) +
      (SELECT count(*) FROM agent_edits WHERE after IS NULL AND after_hash = edit_texts.hash)`);
  }).immediate();
}

// A big text's compressed bytes past its first part (lib/write/text-parts.ts): written before the timeline row
// that keeps the text, each part in a transaction of its own. A group's row in edit_text_part_groups stands
// until the transaction that inserts its text; one left over is a crash's, removed by the recovery.
export const TEXT_PARTS_SQL = `
  ALTER TABLE edit_texts ADD COLUMN parts INTEGER;   -- the group of parts that continue data; NULL: data is all of it
  CREATE TABLE IF NOT EXISTS edit_text_part_groups (
    id INTEGER PRIMARY KEY AUTOINCREMENT,            -- never reused: a text names its parts by it
    owner_pid INTEGER NOT NULL                       -- the process writing them
  );
  CREATE TABLE IF NOT EXISTS edit_text_parts (
    grp INTEGER NOT NULL,
    seq INTEGER NOT NULL,                            -- 1, 2, ...: its place after edit_texts.data
    data BLOB NOT NULL,
    PRIMARY KEY (grp, seq)
  );
`;

// Beside each pid that marks work in flight, that process's stamp (lib/platform/pid.ts processStamp: boot and
// start time). After a crash, and above all after the reboot a power cut brings, the pid soon belongs to
// another program, and a pid alone made recovery wait for that program to end: a move half applied stayed
// half applied, and its parts and temp files stayed, for as long as (say) a system daemon ran. NULL: written
// by an older Lettuce, judged by its pid alone.
export const OWNER_STAMPS_SQL = `
  ALTER TABLE agent_edits ADD COLUMN owner_stamp TEXT;
  ALTER TABLE edit_text_part_groups ADD COLUMN owner_stamp TEXT;
  ALTER TABLE proposals ADD COLUMN claimed_stamp TEXT;
`;
