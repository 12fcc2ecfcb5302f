import { Database } from "bun:sqlite";
import { join } from "node:path";
import { ensureLettuceDir } from "../store/index-db";
import { unwatchWal, watchWal } from "../store/checkpointer";
import { migrate, newerSchema, NewerSchemaError, schemaVersion } from "../store/migrate";
import { limitWal, useWal } from "../store/wal-limit";
import { cacheWritesOffThread, closeOffThread, pruneOffThread, putOffThread, touchOffThread } from "./cache-writer";

// Vectors by (model, passage hash), in .lettuce/embeddings.db: a store apart
// from index.db, so that deleting index.db (which may happen at any time) or
// renaming notes costs no model calls. It is a cache: deleting it only means
// embedding again.
export const CACHE_MIGRATIONS = [
  `
  CREATE TABLE vectors (
    model TEXT NOT NULL,
    hash TEXT NOT NULL,
    vec BLOB NOT NULL,
    used_at INTEGER NOT NULL,
    PRIMARY KEY (model, hash)
  ) WITHOUT ROWID;
  `,
];

/** The schema version this Lettuce writes (doctor tells a newer one apart). */
export const CACHE_SCHEMA_VERSION = CACHE_MIGRATIONS.length;

/** The cache used when embeddings.db belongs to a newer Lettuce: nothing kept past this process. */
const MEMORY = ":memory:";
const warnedNewer = new Set<string>();

const DAY = 86_400;
/** Unused vectors are kept this long, so that undoing an edit or switching a setting back is free. */
export const KEEP_UNUSED_DAYS = 30;
const now = () => Math.floor(Date.now() / 1000);
const PRUNE_EVERY_MS = 86_400_000;
// Vectors per transaction when a background pass writes on the request thread.
const PUT_CHUNK = 32;

export class EmbeddingCache {
  readonly db: Database;

  constructor(readonly file: string) {
    this.db = new Database(file, { create: true, strict: true });
    // Before the first statement (a connection setting, not a write): another process may hold the file's lock.
    this.db.exec("PRAGMA busy_timeout = 5000");
    // A newer Lettuce's cache is refused before anything here writes to it (journal mode included).
    const found = schemaVersion(this.db);
    if (found > CACHE_MIGRATIONS.length) {
      this.db.close();
      throw newerSchema("embeddings.db", found, CACHE_MIGRATIONS.length);
    }
    useWal(this.db);
    this.db.exec("PRAGMA synchronous = NORMAL");
    limitWal(this.db);
    migrate(this.db, CACHE_MIGRATIONS, "embeddings.db");
    // A serving process checkpoints it off the request thread (a no-op otherwise).
    if (file !== MEMORY) watchWal(this.db, file);
  }

  static open(root: string): EmbeddingCache {
    const dir = ensureLettuceDir(root);
    const file = join(dir, "embeddings.db");
    try {
      return new EmbeddingCache(file);
    } catch (e) {
      if (!(e instanceof NewerSchemaError)) throw e;
      // A cache a newer Lettuce wrote (the person went back a version): left as it is, since deleting it
      // would cost that version every vector again. This process embeds without a cache instead of
      // failing every semantic call as "internal".
      if (!warnedNewer.has(file)) {
        warnedNewer.add(file);
        console.error(`lettuce: ${e.message.replace(/; upgrade Lettuce$/, "")}: left as it is; vectors are kept in memory only (made again at each start)`);
      }
      return new EmbeddingCache(MEMORY);
    }
  }

  /** Cached vectors for these hashes (missing ones are simply absent). */
  get(model: string, hashes: string[]): Map<string, Float32Array> {
    if (!hashes.length) return new Map();
    // The list is bound as one JSON parameter: one statement for any number of hashes.
    const list = JSON.stringify([...new Set(hashes)]);
    const rows = this.db.query("SELECT hash, vec FROM vectors WHERE model = ? AND hash IN (SELECT value FROM json_each(?))").all(model, list) as {
      hash: string;
      vec: Uint8Array;
    }[];
    const out = new Map(rows.map((r) => [r.hash, blobToVector(r.vec)]));
    // Mark what was used (at most once a day per vector, to keep this a read). Nothing found, nothing
    // to mark: a first build finds nothing, and a write transaction per batch held the request thread.
    if (!rows.length) return out;
    const found = rows.map((r) => r.hash);
    // While serving, the writer thread marks them: the request thread's connection only reads (./cache-writer.ts).
    if (!(this.offThread() && touchOffThread(this.file, model, found))) this.markUsed(model, found);
    return out;
  }

  /** While serving, writes go to the writer thread's connection to the same file (none for a cache in memory). */
  private offThread(): boolean {
    return this.file !== MEMORY && cacheWritesOffThread();
  }

  /** Record that these vectors were used now (at most once a day per vector, to keep lookups reads). */
  markUsed(model: string, hashes: string[]): void {
    const t = now();
    this.db.query("UPDATE vectors SET used_at = ? WHERE model = ? AND used_at < ? AND hash IN (SELECT value FROM json_each(?))").run(t, model, t - DAY, JSON.stringify(hashes));
  }

  /** Which of these hashes have a cached vector (no vectors read: for counting what is left to embed). */
  has(model: string, hashes: string[]): Set<string> {
    if (!hashes.length) return new Set();
    const rows = this.db.query("SELECT hash FROM vectors WHERE model = ? AND hash IN (SELECT value FROM json_each(?))").all(model, JSON.stringify(hashes)) as { hash: string }[];
    return new Set(rows.map((r) => r.hash));
  }

  /**
   * put() for a background pass: while serving, on the writer thread in one transaction (resolves once
   * committed); otherwise here, PUT_CHUNK vectors to a transaction with `between` awaited between them
   * (128 vectors in one transaction held the thread ~20 ms).
   */
  async putPaced(model: string, entries: [string, Float32Array][], between?: () => Promise<void>): Promise<void> {
    if (!entries.length) return;
    if (this.offThread()) {
      const off = putOffThread(this.file, model, entries);
      try {
        if (off) return await off;
      } catch {
        // The writer thread stopped (or could not write): the vectors are still wanted, here.
      }
    }
    for (let k = 0; k < entries.length; k += PUT_CHUNK) {
      if (k > 0) await between?.();
      this.put(model, entries.slice(k, k + PUT_CHUNK));
    }
  }

  put(model: string, entries: [string, Float32Array][]): void {
    const ins = this.db.query("INSERT OR REPLACE INTO vectors(model, hash, vec, used_at) VALUES (?, ?, ?, ?)");
    const t = now();
    this.db.transaction(() => {
      for (const [hash, v] of entries) ins.run(model, hash, vectorToBlob(v), t);
    })();
  }

  private prunedAt = -Infinity; // monotonic: after a wall clock that ran ahead was put right, no prune ran again

  /**
   * A serving process prunes (pruneAgainstIndex) on the writer thread, at most once every PRUNE_EVERY_MS:
   * only reindex_embeddings and `lettuce embed` pruned, so under `serve` embeddings.db kept every vector of
   * every text ever written (~4.7 KB a passage; the growth audit of 2026-12-05).
   */
  pruneNowAndThen(model: string, indexFile: string): void {
    if (!cacheWritesOffThread() || performance.now() - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = performance.now();
    pruneOffThread(this.file, model, indexFile)?.catch(() => {
      /* tried again after the next pass a day on */
    });
  }

  /** Forget this model's vectors that no current passage uses and nothing has used for KEEP_UNUSED_DAYS. */
  prune(model: string, keep: Set<string>, keepDays = KEEP_UNUSED_DAYS): number {
    const before = now() - keepDays * DAY;
    return this.forget(model, this.unusedSince(model, before).filter((h) => !keep.has(h)), before);
  }

  /**
   * prune(), with the passages in use read from index.db on a connection of its own: the cache writer's
   * thread does this for a serving process (the request thread would read every passage's hash).
   */
  pruneAgainstIndex(model: string, indexFile: string, keepDays = KEEP_UNUSED_DAYS): number {
    const before = now() - keepDays * DAY;
    const old = this.unusedSince(model, before);
    if (!old.length) return 0;
    // Read-only and never created: an index deleted meanwhile (it is derived) prunes nothing this time.
    const idx = new Database(indexFile, { readonly: true });
    let gone: string[];
    try {
      idx.exec("PRAGMA busy_timeout = 5000");
      // Only against an index whose every note is split and embedded: one being rebuilt (index.db may be
      // deleted at any time) holds part of the passages, and the rest would be embedded again.
      const stale = idx.query("SELECT 1 FROM notes n LEFT JOIN embed_notes e ON e.note_id = n.id WHERE e.hash IS NULL OR e.hash <> n.hash LIMIT 1").get();
      if (stale) return 0;
      idx.exec("CREATE TEMP TABLE candidates (hash TEXT PRIMARY KEY)");
      const ins = idx.query("INSERT OR IGNORE INTO temp.candidates(hash) VALUES (?)");
      idx.transaction(() => {
        for (const h of old) ins.run(h);
      })();
      gone = (idx.query("SELECT hash FROM temp.candidates WHERE hash NOT IN (SELECT hash FROM main.passages)").all() as { hash: string }[]).map((r) => r.hash);
    } finally {
      idx.close();
    }
    return this.forget(model, gone, before);
  }

  private unusedSince(model: string, before: number): string[] {
    return (this.db.query("SELECT hash FROM vectors WHERE model = ? AND used_at < ?").all(model, before) as { hash: string }[]).map((r) => r.hash);
  }

  /** Delete these vectors unless used since `before` (a search may have touched one meanwhile). */
  private forget(model: string, hashes: string[], before: number): number {
    const del = this.db.query("DELETE FROM vectors WHERE model = ? AND hash = ? AND used_at < ?");
    let n = 0;
    this.db.transaction(() => {
      for (const h of hashes) n += del.run(model, h, before).changes;
    })();
    return n;
  }

  /** Forget every vector of a model (its weights changed behind the same name). */
  dropModel(model: string): void {
    this.db.query("DELETE FROM vectors WHERE model = ?").run(model);
  }

  close(): void {
    if (this.file !== MEMORY) closeOffThread(this.file);
    unwatchWal(this.db);
    this.db.close();
  }
}

export function vectorToBlob(v: Float32Array): Uint8Array {
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
}

export function blobToVector(b: Uint8Array): Float32Array {
  // Copy: the blob's buffer may be shared or unaligned.
  const copy = new Uint8Array(b.byteLength);
  copy.set(b);
  return new Float32Array(copy.buffer);
}
