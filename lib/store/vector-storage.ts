// Where index.db keeps the vectors. Vectors are ranked in memory
// (lib/semantic/vector-index.ts), so SQLite only stores them: in sqlite-vec
// (vec0) tables when the extension loads, else in plain tables of float32
// BLOBs with the same rowid/embedding columns, so every query reads both alike.
// The kind is chosen when index.db is opened and recorded in its meta table;
// when it changes (a binary without sqlite-vec opens an index a Linux binary
// made, say), the vector rows are dropped and the next reconcile refills them
// from the embeddings cache (.lettuce/embeddings.db): no text is embedded again.
import type { Database } from "bun:sqlite";

export type VectorStorageKind = "sqlite-vec" | "plain";

export interface VectorStorage {
  kind: VectorStorageKind;
  /** sqlite-vec's version when kind is sqlite-vec. */
  vecVersion: string | null;
  /** Why sqlite-vec is not used (null when it is). */
  reason: string | null;
}

export const VECTOR_TABLES: Record<VectorStorageKind, { passages: string; notes: string }> = {
  "sqlite-vec": { passages: "vec_passages", notes: "vec_notes" },
  plain: { passages: "plain_passages", notes: "plain_notes" },
};

/**
 * Test-only switch: LETTUCE_VECTOR_STORAGE=plain stores vectors in plain
 * tables even where sqlite-vec loads, so that Linux CI runs the storage path
 * macOS binaries take (tests/binaries-plain-storage.test.ts).
 */
export function plainStorageForced(env: Record<string, string | undefined> = process.env): boolean {
  return env.LETTUCE_VECTOR_STORAGE === "plain";
}

/** Vectors per sqlite-vec chunk (a multiple of 8). */
export const VEC_CHUNK = 64;

export function hasTable(db: Database, name: string): boolean {
  return db.query("SELECT 1 FROM sqlite_master WHERE name = ?").get(name) !== null;
}

/** Create the vector tables of this kind for `dim`-dimensional vectors (if they are not there). */
export function createVectorTables(db: Database, kind: VectorStorageKind, dim: number): void {
  const t = VECTOR_TABLES[kind];
  for (const name of [t.passages, t.notes]) {
    if (hasTable(db, name)) continue;
    // Chunks of 64 vectors, not sqlite-vec's 1,024: a chunk is allocated whole (2 MB at 512-d, ~5-20 ms in the
    // write that starts it, on the request thread during a background build), and reading every vector back
    // at start-up measured 2.7x faster (50k vectors: 196 against 547 ms); nothing here runs vec0's own KNN.
    if (kind === "sqlite-vec") db.exec(`CREATE VIRTUAL TABLE ${name} USING vec0(embedding float[${dim}] distance_metric=cosine, chunk_size=${VEC_CHUNK})`);
    else db.exec(`CREATE TABLE ${name} (id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)`);
  }
}

export function dropVectorTables(db: Database, kind: VectorStorageKind): void {
  const t = VECTOR_TABLES[kind];
  db.exec(`DROP TABLE IF EXISTS ${t.passages}`);
  db.exec(`DROP TABLE IF EXISTS ${t.notes}`);
}

/** True when vec0 tables exist: a connection without sqlite-vec cannot drop (or read) them. */
export function hasVecTables(db: Database): boolean {
  const t = VECTOR_TABLES["sqlite-vec"];
  return hasTable(db, t.passages) || hasTable(db, t.notes);
}

const META = "vector_storage";

/**
 * Make index.db's vector storage `kind`: a no-op when it already is; otherwise
 * drop the other kind's tables and every note's embedded state (passages are
 * split again and their vectors come back from the cache). The caller has
 * made sure the old tables can be dropped (see hasVecTables).
 */
export function adoptVectorStorage(db: Database, kind: VectorStorageKind): void {
  const recordedNow = () => (db.query("SELECT value FROM meta WHERE key = ?").get(META) as { value: string } | null)?.value;
  if (recordedNow() === kind) return;
  // Under the write lock, read again: two processes opening a new vault at once both found nothing recorded,
  // and the second's read-then-write failed "database is locked" at once (the multi-process audit).
  db.transaction(() => {
    const recorded = recordedNow();
    if (recorded === kind) return;
    const old: VectorStorageKind = kind === "plain" ? "sqlite-vec" : "plain";
    if (recorded !== undefined || hasTable(db, VECTOR_TABLES[old].passages)) {
      dropVectorTables(db, old);
      db.exec("DELETE FROM passages");
      db.exec("DELETE FROM embed_notes");
      db.exec("DELETE FROM meta WHERE key = 'embed_dim'");
      db.exec("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'embed_generation'");
    }
    db.query("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)").run(META, kind);
  }).immediate();
}
