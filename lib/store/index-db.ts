import { Database } from "bun:sqlite";
import { chmodSync, existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { attachFts, FTS_FILE, ftsGeneration, ftsPath } from "./fts-db";
import { migrate, schemaVersion } from "./migrate";
import { otherIndexUsers } from "./index-users";
import { liveServer } from "./presence";
import { pidsHoldingFile } from "../platform/pid";
import { configureSqlite } from "./sqlite-lib";
import { limitWal, useWal } from "./wal-limit";
import { loadSqliteVec } from "./sqlite-vec";
import { adoptVectorStorage, hasVecTables, plainStorageForced, type VectorStorage } from "./vector-storage";

// index.db is derived from the vault: deleting it costs only a rebuild.
// Bump INDEX_FORMAT when a parser change means old rows are wrong; the
// database is then dropped and rebuilt rather than migrated.
export const INDEX_FORMAT = "14"; // 14: `<!-->` and `<!--->` are whole (empty) HTML comments, not openers that hid the rest of the note; 13: the full-text table's title_ng and body_ng columns, the n-grams of text in scripts written without spaces (lib/vault/ngram.ts); 12: wikilinks in properties are links; no links, tags or headings inside %% / <!-- --> comments or $$ math (nor a title from such a heading), words in hex letters (#cafe), frontmatter tags like fff and emoji (#🍎) are tags, a Markdown link's #fragment percent-decoded; 11: a name several notes share resolves to the one in the linking note's folder first; 10: tags stored composed (NFC); 9: link keys in NFC (a link typed composed finds a note written decomposed), tags keep their combining marks; 8: no @mentions in the text of links to web addresses; 7: titles, headings, tags and aliases bounded

/**
 * The most links, tags, headings, @mentions and directives of one note the index keeps (each kind). Their
 * rows are written on the thread answering every caller: a 2 MiB note of 340,000 links held it 0.9 s a
 * write, so a write token saving such notes in a loop stalled everyone. The largest real note here has
 * 2,920 links (obsidian-hub). Notes at the cap: notesAtLinkCap().
 */
export const MAX_INDEXED_ROWS = 20_000;

/** Notes whose links the index holds only up to MAX_INDEXED_ROWS (or that have exactly that many). */
export function notesAtLinkCap(db: Database): string[] {
  return (db.query(`SELECT n.path AS path FROM links l JOIN notes n ON n.id = l.note_id WHERE l.ord = ${MAX_INDEXED_ROWS - 1} ORDER BY n.path`).all() as { path: string }[]).map((r) => r.path);
}

const MIGRATIONS = [
  `
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
  CREATE TABLE notes (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    folder TEXT NOT NULL,
    title TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime REAL NOT NULL,
    ctime REAL NOT NULL,
    hash TEXT NOT NULL,
    frontmatter TEXT NOT NULL,
    tags TEXT NOT NULL,
    aliases TEXT NOT NULL
  );
  CREATE INDEX notes_folder ON notes(folder);
  CREATE TABLE links (
    note_id INTEGER NOT NULL,
    ord INTEGER NOT NULL,
    target TEXT NOT NULL,
    target_key TEXT NOT NULL,
    display TEXT,
    kind TEXT NOT NULL,
    heading TEXT,
    block TEXT,
    embed INTEGER NOT NULL,
    line INTEGER NOT NULL,
    resolved TEXT,
    PRIMARY KEY (note_id, ord)
  ) WITHOUT ROWID;
  CREATE INDEX links_key ON links(target_key);
  CREATE INDEX links_resolved ON links(resolved);
  CREATE TABLE tags (note_id INTEGER NOT NULL, tag TEXT NOT NULL, tag_lc TEXT NOT NULL);
  CREATE INDEX tags_note ON tags(note_id);
  CREATE INDEX tags_lc ON tags(tag_lc);
  CREATE TABLE headings (note_id INTEGER NOT NULL, ord INTEGER NOT NULL, level INTEGER NOT NULL, title TEXT NOT NULL, slug TEXT NOT NULL, line INTEGER NOT NULL);
  CREATE INDEX headings_note ON headings(note_id, ord);
  CREATE TABLE files (path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime REAL NOT NULL, mime TEXT NOT NULL);
  -- The full-text table is in fts.db, attached as ftsdb (lib/store/fts-db.ts).
  `,
  // Work left for agents: > [!ai] callouts (done = [!ai-done]) and @handle mentions.
  `
  CREATE TABLE directives (note_id INTEGER NOT NULL, ord INTEGER NOT NULL, line INTEGER NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL, done INTEGER NOT NULL);
  CREATE INDEX directives_note ON directives(note_id, ord);
  CREATE TABLE mentions (note_id INTEGER NOT NULL, line INTEGER NOT NULL, handle TEXT NOT NULL, handle_lc TEXT NOT NULL, context TEXT NOT NULL);
  CREATE INDEX mentions_note ON mentions(note_id);
  CREATE INDEX mentions_handle ON mentions(handle_lc);
  `,
  // Semantic layer (lib/semantic/store.ts): passages and what was embedded; the vec0 tables are made per model dimension.
  // fts_stem: a Porter-stemmed copy of fts for hybrid retrieval's keyword side, kept in step by lib/semantic/keyword.ts.
  `
  CREATE TABLE embed_notes (note_id INTEGER PRIMARY KEY, hash TEXT NOT NULL);
  CREATE TABLE passages (id INTEGER PRIMARY KEY, note_id INTEGER NOT NULL, ord INTEGER NOT NULL, heading TEXT NOT NULL, text TEXT NOT NULL, hash TEXT NOT NULL);
  CREATE INDEX passages_note ON passages(note_id, ord);
  CREATE VIRTUAL TABLE fts_stem USING fts5(title, body, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2');
  CREATE TABLE fts_stem_notes (note_id INTEGER PRIMARY KEY, hash TEXT NOT NULL);
  `,
  // What lint and search need at 100k notes without a pass over every link or title (format 6):
  // per note, its distinct unresolved (target, kind) pairs and its links to other notes, kept by
  // the indexer; each note's folded names (title, file name, aliases) for search's exact-title
  // rule; tags indexed with their spelling and note so that tag statistics read the index only.
  `
  ALTER TABLE notes ADD COLUMN unresolved INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE notes ADD COLUMN out_notes INTEGER NOT NULL DEFAULT 0;
  CREATE TABLE name_keys (note_id INTEGER NOT NULL, key TEXT NOT NULL, PRIMARY KEY (note_id, key)) WITHOUT ROWID;
  CREATE INDEX name_keys_key ON name_keys(key);
  DROP INDEX tags_lc;
  CREATE INDEX tags_lc ON tags(tag_lc, tag, note_id);
  `,
  // Paths looked up the way the file system of a Mac or Windows user would (path = ? COLLATE NOCASE: a write's
  // twin check, log.md, index.md) and the sources/ prefix (LIKE is case-insensitive): without it each was a pass
  // over every note, ~6 ms at 100k notes.
  `
  CREATE INDEX notes_path_nocase ON notes(path COLLATE NOCASE);
  `,
  // Each note's and attachment's status change time (st_ctime), compared with size and mtime by the scan: an edit
  // that keeps both (a tool restoring the mtime, a same-length edit within the clock's step) moves it. NULL on rows
  // from before: such a file is read once more (its hash decides) and gets one.
  `
  ALTER TABLE notes ADD COLUMN chg REAL;
  ALTER TABLE files ADD COLUMN chg REAL;
  `,
  // The notes the index keeps only their first MAX_INDEXED_ROWS links of (the row at ord 19,999 marks them; the
  // literal must match the query's for SQLite to use a partial index): move_note reads them whole as well,
  // since a later link of theirs to the moved note is not a backlink row. A new cap needs a new migration.
  `
  CREATE INDEX links_at_cap ON links(note_id) WHERE ord = 19999;
  `,
];

/**
 * Secondary indexes that a bulk load is faster without: dropped before a cold
 * scan of a large vault and rebuilt once at the end (one sort instead of a
 * B-tree insert per row).
 */
export const BULK_LOAD_INDEXES: Record<string, string> = {
  links_key: "CREATE INDEX IF NOT EXISTS links_key ON links(target_key)",
  links_resolved: "CREATE INDEX IF NOT EXISTS links_resolved ON links(resolved)",
  tags_note: "CREATE INDEX IF NOT EXISTS tags_note ON tags(note_id)",
  tags_lc: "CREATE INDEX IF NOT EXISTS tags_lc ON tags(tag_lc, tag, note_id)",
  name_keys_key: "CREATE INDEX IF NOT EXISTS name_keys_key ON name_keys(key)",
  headings_note: "CREATE INDEX IF NOT EXISTS headings_note ON headings(note_id, ord)",
  notes_path_nocase: "CREATE INDEX IF NOT EXISTS notes_path_nocase ON notes(path COLLATE NOCASE)",
};

export function lettuceDir(root: string): string {
  return join(root, ".lettuce");
}

/**
 * Make .lettuce/ (once) and keep it closed to other users. It holds every note's text (the full-text index,
 * the timeline) and the token and session hashes: under the usual umask 022 it was world-readable, so a note
 * a person kept private (chmod 600) could be read there by any local user (the lifecycle audit of
 * 2026-12-05). The group keeps what it has on the vault folder, so that a vault shared through a group
 * stays shared.
 */
export function ensureLettuceDir(root: string): string {
  const dir = lettuceDir(root);
  let vaultMode = 0o700;
  try {
    vaultMode = statSync(root).mode;
  } catch {
    /* the open that follows says what is wrong with the vault */
  }
  // The setgid bit too: files made inside keep the shared group.
  const mode = 0o700 | (vaultMode & 0o2070);
  if (!existsSync(dir)) {
    try {
      mkdirSync(dir, { mode });
    } catch (e) {
      // Another process made it in between (two opening a new vault at once): it is there; go on.
      if ((e as { code?: string }).code !== "EEXIST") throw e;
      return dir;
    }
    try {
      chmodSync(dir, mode); // mkdir's mode went through the umask
    } catch {
      /* a file system that refuses it (vfat, exFAT): its own rules apply */
    }
    return dir;
  }
  try {
    const st = statSync(dir);
    if (st.mode & 0o007 && typeof process.getuid === "function" && st.uid === process.getuid()) chmodSync(dir, st.mode & 0o7770);
  } catch {
    /* not ours to change (another user's, a read-only file system): left as it is */
  }
  return dir;
}

export function indexDbPath(root: string): string {
  return join(lettuceDir(root), "index.db");
}

function applyPragmas(db: Database): void {
  // The busy timeout first: switching a new file to WAL takes a lock another process opening it may hold.
  db.exec("PRAGMA busy_timeout = 5000");
  useWal(db);
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA cache_size = -32000");
  db.exec("PRAGMA temp_store = MEMORY");
  limitWal(db);
}

function removeIndexFiles(dir: string): void {
  for (const name of ["index.db", FTS_FILE]) for (const suffix of ["", "-wal", "-shm"]) rmSync(join(dir, name + suffix), { force: true });
}

/**
 * Whether index.db and fts.db carry the same generation. Their commits are two (WAL mode makes a
 * transaction over attached files atomic per file only), so another process's commit can fall between
 * the two reads: a difference is read again for a second before it is taken for a crash between them.
 */
function sameGeneration(db: Database): boolean {
  for (let i = 0; i < 20; i++) {
    if (getMeta(db, "gen") === ftsGeneration(db)) return true;
    Bun.sleepSync(50);
  }
  return false;
}

/**
 * When each note first appeared (read_note's stat.created) is known only to the index: the file's birth
 * time moves with every save by rename. An index of another format is rebuilt from the notes, so those
 * times are read from it first and handed to the first scan of the new one (CARRIED_CTIMES), which keeps
 * the earlier of the two (lib/index/indexer.ts).
 */
export const CARRIED_CTIMES = "carried_ctime";

function firstSeenTimes(db: Database): { path: string; ctime: number }[] {
  try {
    return db.query("SELECT path, ctime FROM notes WHERE ctime > 0").all() as { path: string; ctime: number }[];
  } catch {
    return []; // an index too old (or too damaged) to say
  }
}

function keepFirstSeenTimes(db: Database, rows: { path: string; ctime: number }[]): void {
  db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS ${CARRIED_CTIMES} (path TEXT PRIMARY KEY, ctime REAL NOT NULL)`);
    const put = db.query(`INSERT OR REPLACE INTO ${CARRIED_CTIMES}(path, ctime) VALUES (?, ?)`);
    for (const r of rows) put.run(r.path, r.ctime);
  })();
}

/** Open (or create) the index: index.db with fts.db attached. Anything unusable is rebuilt from the vault. */
export function openIndexDb(root: string): Database {
  const dir = ensureLettuceDir(root);
  const file = indexDbPath(root);
  configureSqlite();
  let carried: { path: string; ctime: number }[] = [];
  for (let attempt = 0; ; attempt++) {
    let db = new Database(file, { create: true, strict: true });
    let usable = false;
    let failure: Error | null = null;
    try {
      // Inside the try: on a damaged file the first statement (a pragma) already throws SQLITE_NOTADB.
      applyPragmas(db);
      migrate(db, MIGRATIONS, "index.db");
      const format = (db.query("SELECT value FROM meta WHERE key = 'format'").get() as { value: string } | null)?.value;
      attachFts(db, root);
      // Another format, or a crash between the two files' commits: derived data, so start again.
      usable = (format === undefined || format === INDEX_FORMAT) && sameGeneration(db);
    } catch (e) {
      failure = e as Error;
      usable = false;
    }
    const storage = usable ? chooseVectorStorage(db) : null;
    // vec0 tables on a connection without sqlite-vec can be neither read nor dropped: start the
    // (derived) index afresh, as for a damaged one; the vectors come back from embeddings.db.
    if (storage?.kind === "plain" && hasVecTables(db)) usable = false;
    if (!usable) {
      if (attempt === 0 && !failure) carried = firstSeenTimes(db);
      db.close();
      if (attempt > 0) throw new Error(`cannot create the index in ${dir}`);
      // A running serve has these files open and keeps them current: deleting them under it left it
      // writing into unlinked files (its WAL then grew without end) and every other process an empty index.
      // Every process with the index open holds a file in .lettuce/users/ (a serve, a stdio, a CLI command).
      const users = otherIndexUsers(root);
      if (users.length) throw new Error(`the index in ${dir} is in use by another Lettuce process (pid ${users.join(", ")}) and cannot be opened here (${failure?.message ?? "it is being written"}); try again when it has finished`);
      // A Lettuce from before that registry, still running after an upgrade (its format is then the old one, so
      // this one wants a rebuild): its serve announced itself in serve.json only, its stdio and CLI not at all.
      // On Linux the file's holders are the whole answer (a serve.json left by a crash may name a pid since reused
      // by an unrelated program, which would block every rebuild for as long as it runs); elsewhere serve.json.
      const older = process.platform === "linux" ? pidsHoldingFile(file) : [liveServer(root)?.pid].filter((p): p is number => p !== undefined);
      if (older.length) {
        throw new Error(
          `the index in ${dir} is open in another Lettuce process (pid ${older.join(", ")}), perhaps an older version still running: stop it, or start it again with this version (${failure?.message ?? "this version cannot use the index as it is"})`,
        );
      }
      removeIndexFiles(dir);
      continue;
    }
    // Only when it is not already so: a write on every open waited for the lock a serve holds through a long
    // pass, and a `lettuce stdio` or CLI command started then failed "database is locked" (multi-process audit).
    if (getMeta(db, "format") !== INDEX_FORMAT) db.query("INSERT OR REPLACE INTO meta(key, value) VALUES ('format', ?)").run(INDEX_FORMAT);
    if (carried.length) keepFirstSeenTimes(db, carried);
    // A bulk load interrupted by a crash leaves its indexes dropped; put them back.
    for (const sql of Object.values(BULK_LOAD_INDEXES)) db.exec(sql);
    adoptVectorStorage(db, storage!.kind);
    storages.set(db, storage!);
    return db;
  }
}

/**
 * Open an existing, current index to query it, changing nothing (a CLI search): no
 * sqlite-vec, no schema or meta writes. null when there is none or when it needs
 * anything openIndexDb would do (a migration, another format, a crash between the two
 * files' commits, a bulk load's dropped indexes): the caller then uses openIndexDb.
 */
export function openIndexIfCurrent(root: string): Database | null {
  const file = indexDbPath(root);
  if (!existsSync(file) || !existsSync(ftsPath(root))) return null;
  configureSqlite();
  let db: Database | null = null;
  try {
    db = new Database(file, { readwrite: true, create: false, strict: true });
    db.exec("PRAGMA busy_timeout = 5000");
    db.exec("PRAGMA cache_size = -32000");
    const version = schemaVersion(db);
    const indexes = Object.keys(BULK_LOAD_INDEXES);
    const present = (db.query(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'index' AND name IN (${indexes.map(() => "?").join(",")})`).get(...indexes) as { n: number }).n;
    if (version !== MIGRATIONS.length || getMeta(db, "format") !== INDEX_FORMAT || present !== indexes.length) throw new Error("not current");
    db.query("ATTACH DATABASE ? AS ftsdb").run(ftsPath(root));
    limitWal(db);
    limitWal(db, "ftsdb");
    if (!sameGeneration(db)) throw new Error("generations differ");
    return db;
  } catch {
    db?.close();
    return null;
  }
}

export function getMeta(db: Database, key: string): string | null {
  return (db.query("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | null)?.value ?? null;
}

export function setMeta(db: Database, key: string, value: string | null): void {
  if (value === null) db.query("DELETE FROM meta WHERE key = ?").run(key);
  else db.query("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)").run(key, value);
}

const storages = new WeakMap<Database, VectorStorage>();

/** sqlite-vec when it loads into this connection (unless a test forces plain tables), else plain tables. */
function chooseVectorStorage(db: Database): VectorStorage {
  if (plainStorageForced()) return { kind: "plain", vecVersion: null, reason: "plain tables forced by LETTUCE_VECTOR_STORAGE=plain (a test switch)" };
  const v = loadSqliteVec.load(db);
  return v ? { kind: "sqlite-vec", vecVersion: v, reason: null } : { kind: "plain", vecVersion: null, reason: loadSqliteVec.error() ?? "sqlite-vec did not load" };
}

/** How this connection stores vectors (see lib/store/vector-storage.ts). */
export function vectorStorage(db: Database): VectorStorage {
  return storages.get(db) ?? { kind: "plain", vecVersion: null, reason: "not an index connection" };
}

/** sqlite-vec's version in this connection, or null when vectors are in plain tables. */
export function vecVersion(db: Database): string | null {
  return storages.get(db)?.vecVersion ?? null;
}
