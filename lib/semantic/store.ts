// The semantic tables of index.db: passages (text, heading, ordinal, hash),
// embed_notes (which content of each note is embedded), and two vector tables
// holding the vectors: one per passage (rowid = passage id) and one per note
// (rowid = note id, the note-level vector). They are sqlite-vec tables, or
// plain BLOB tables where sqlite-vec cannot load (lib/store/vector-storage.ts);
// both have rowid and embedding columns. The tables are made for one model's
// dimension; meta records the model id and dimension, and a model change wipes
// all of it (vectors of two models never mix).
import type { Database } from "bun:sqlite";
import { getMeta, setMeta, vectorStorage } from "../store/index-db";
import { createVectorTables, dropVectorTables, hasTable, VECTOR_TABLES } from "../store/vector-storage";
import { blobToVector, vectorToBlob } from "./cache";
import type { Passage } from "./passages";
import { writingTransaction } from "../store/write-lock";

export interface EmbeddedModel {
  id: string;
  dim: number | null;
}

export interface NoteText {
  id: number;
  path: string;
  title: string;
  hash: string;
  size: number;
  body: string;
}

export function embeddedModel(db: Database): EmbeddedModel | null {
  const id = getMeta(db, "embed_model");
  if (!id) return null;
  const dim = Number(getMeta(db, "embed_dim"));
  return { id, dim: Number.isInteger(dim) && dim > 0 ? dim : null };
}

/**
 * `column IN (…)` over a list bound as one parameter, JSON.stringify(list): one
 * statement whatever the list's length. bun:sqlite keeps only the last 20
 * prepared statements of a connection, and every IN-list length would be a new
 * one, pushing out the statements the rest of Lettuce reuses.
 */
export function inList(column: string): string {
  return `${column} IN (SELECT value FROM json_each(?))`;
}

export interface NoteRef {
  id: number;
  path: string;
  title: string;
}

/** Path and title of these notes by id (a note deleted meanwhile is absent). */
export function notesByIds(db: Database, ids: number[]): Map<number, NoteRef> {
  if (!ids.length) return new Map();
  const rows = db.query(`SELECT id, path, title FROM notes WHERE ${inList("id")}`).all(JSON.stringify(ids)) as NoteRef[];
  return new Map(rows.map((r) => [r.id, r]));
}

/** This connection's vector table names. */
function tables(db: Database): { passages: string; notes: string } {
  return VECTOR_TABLES[vectorStorage(db).kind];
}

/** Start over for a model: every note becomes unembedded. */
export function resetForModel(db: Database, modelId: string): void {
  writingTransaction(db, () => {
    dropVectorTables(db, vectorStorage(db).kind);
    db.exec("DELETE FROM passages");
    db.exec("DELETE FROM embed_notes");
    setMeta(db, "embed_model", modelId);
    setMeta(db, "embed_dim", null);
    bumpGeneration(db);
  });
}

/** Create the vector tables for this dimension (once the first vectors show what it is). */
export function ensureVecTables(db: Database, dim: number): void {
  createVectorTables(db, vectorStorage(db).kind, dim);
  setMeta(db, "embed_dim", String(dim));
}

/** The distinct dimensions of the stored passage vectors (one, or none, unless something is wrong). */
export function storedDimensions(db: Database): number[] {
  const t = tables(db);
  if (!hasTable(db, t.passages)) return [];
  return (db.query(`SELECT DISTINCT length(embedding) / 4 AS n FROM ${t.passages}`).all() as { n: number }[]).map((r) => r.n);
}

/** A counter bumped on every change to the vectors, so that another process's in-memory copy knows to reload. */
export function bumpGeneration(db: Database): void {
  setMeta(db, "embed_generation", String(Number(getMeta(db, "embed_generation") ?? 0) + 1));
}

export function generation(db: Database): number {
  return Number(getMeta(db, "embed_generation") ?? 0);
}

/** Notes whose current content is not what is embedded (new, changed, or never embedded). */
export function staleNoteIds(db: Database): { id: number; size: number }[] {
  return db
    .query("SELECT n.id AS id, n.size AS size FROM notes n LEFT JOIN embed_notes e ON e.note_id = n.id WHERE e.hash IS NULL OR e.hash <> n.hash ORDER BY n.id")
    .all() as { id: number; size: number }[];
}

/** Embedded notes that are gone from the index. */
export function goneNoteIds(db: Database): number[] {
  return (db.query("SELECT note_id AS id FROM embed_notes WHERE note_id NOT IN (SELECT id FROM notes)").all() as { id: number }[]).map((r) => r.id);
}

export function countEmbedded(db: Database): number {
  return (db.query("SELECT count(*) AS n FROM embed_notes e JOIN notes n ON n.id = e.note_id AND n.hash = e.hash").get() as { n: number }).n;
}

export function noteTexts(db: Database, ids: number[]): NoteText[] {
  if (!ids.length) return [];
  return db
    .query(
      `SELECT n.id AS id, n.path AS path, n.title AS title, n.hash AS hash, n.size AS size, f.body AS body
       FROM notes n JOIN fts f ON f.rowid = n.id WHERE ${inList("n.id")}`,
    )
    .all(JSON.stringify(ids)) as NoteText[];
}

export interface StoredNote {
  noteId: number;
  hash: string;
  passages: Passage[];
  vectors: Float32Array[];
  noteVector: Float32Array | null;
}

export interface WrittenPassage {
  id: number;
  noteId: number;
  vector: Float32Array;
}

/**
 * Replace the embedded state of some notes in one transaction (the caller makes
 * sure no other transaction is open on this connection). Returns the new
 * passage rows so the in-memory index can follow.
 */
export function writeNotes(db: Database, notes: StoredNote[], removed: number[]): { added: WrittenPassage[]; removedPassages: number[] } {
  const added: WrittenPassage[] = [];
  const removedPassages: number[] = [];
  const oldIds = db.query("SELECT id FROM passages WHERE note_id = ?");
  const delPassages = db.query("DELETE FROM passages WHERE note_id = ?");
  const delState = db.query("DELETE FROM embed_notes WHERE note_id = ?");
  const insPassage = db.query("INSERT INTO passages(note_id, ord, heading, text, hash) VALUES (?, ?, ?, ?, ?) RETURNING id");
  const setState = db.query("INSERT OR REPLACE INTO embed_notes(note_id, hash) VALUES (?, ?)");
  // The vector tables exist once the first vectors told the dimension; before that no note has passages.
  const t = tables(db);
  const vec = hasTable(db, t.passages)
    ? {
        delP: db.query(`DELETE FROM ${t.passages} WHERE rowid = ?`),
        delN: db.query(`DELETE FROM ${t.notes} WHERE rowid = ?`),
        insP: db.query(`INSERT INTO ${t.passages}(rowid, embedding) VALUES (?, ?)`),
        insN: db.query(`INSERT INTO ${t.notes}(rowid, embedding) VALUES (?, ?)`),
      }
    : null;
  const clear = (noteId: number) => {
    const old = oldIds.all(noteId) as { id: number }[];
    // A note with no passages has no note vector either (it is their mean): a first build deletes nothing.
    if (!old.length) return;
    for (const r of old) {
      removedPassages.push(r.id);
      vec?.delP.run(r.id);
    }
    delPassages.run(noteId);
    vec?.delN.run(noteId);
  };
  writingTransaction(db, () => {
    for (const id of removed) {
      clear(id);
      delState.run(id);
    }
    for (const n of notes) {
      clear(n.noteId);
      if (n.passages.length && !vec) throw new Error("passages to store before the vector tables exist");
      n.passages.forEach((p, i) => {
        const row = insPassage.get(n.noteId, p.ord, p.heading, p.text, p.hash) as { id: number };
        vec!.insP.run(row.id, vectorToBlob(n.vectors[i]!));
        added.push({ id: row.id, noteId: n.noteId, vector: n.vectors[i]! });
      });
      if (n.noteVector && vec) vec.insN.run(n.noteId, vectorToBlob(n.noteVector));
      setState.run(n.noteId, n.hash);
    }
    bumpGeneration(db);
  });
  return { added, removedPassages };
}

/** How many passages have a stored vector: the in-memory index is sized once from it. */
export function passageVectorCount(db: Database): number {
  const t = tables(db);
  if (!hasTable(db, t.passages)) return 0;
  return (db.query(`SELECT count(*) AS n FROM passages p JOIN ${t.passages} v ON v.rowid = p.id`).get() as { n: number }).n;
}

/** Below every rowid SQLite assigns: where a slice-by-slice read starts. */
export const BEFORE_FIRST_ID = -Number.MAX_SAFE_INTEGER;

/**
 * Up to `limit` stored passage vectors with ids past `afterId`, in id order: a slice that holds no statement
 * open, so the in-memory index can load between other work (writes included) on the same connection.
 */
export function passageVectorsAfter(db: Database, afterId: number, limit: number): WrittenPassage[] {
  const t = tables(db);
  if (!hasTable(db, t.passages)) return [];
  const rows = db
    .query(`SELECT p.id AS id, p.note_id AS noteId, v.embedding AS embedding FROM passages p JOIN ${t.passages} v ON v.rowid = p.id WHERE p.id > ? ORDER BY p.id LIMIT ?`)
    .all(afterId, limit) as { id: number; noteId: number; embedding: Uint8Array }[];
  return rows.map((r) => ({ id: r.id, noteId: r.noteId, vector: blobToVector(r.embedding) }));
}

/**
 * Up to `limit` stored note-level vectors with note ids past `afterId`, in id order (as passageVectorsAfter).
 * Driven by embed_notes (every note vector has its row there): a rowid range on a vec0 table scans it whole.
 */
export function noteVectorsAfter(db: Database, afterId: number, limit: number): { noteId: number; vector: Float32Array }[] {
  const t = tables(db);
  if (!hasTable(db, t.notes)) return [];
  const rows = db
    .query(`SELECT e.note_id AS noteId, v.embedding AS embedding FROM embed_notes e JOIN ${t.notes} v ON v.rowid = e.note_id WHERE e.note_id > ? ORDER BY e.note_id LIMIT ?`)
    .all(afterId, limit) as { noteId: number; embedding: Uint8Array }[];
  return rows.map((r) => ({ noteId: r.noteId, vector: blobToVector(r.embedding) }));
}

/** Every stored passage vector (benchmarks; the server loads them slice by slice, ./loaded-indexes.ts). */
export function* allPassageVectors(db: Database): Generator<WrittenPassage> {
  for (let after = BEFORE_FIRST_ID, rows: WrittenPassage[]; (rows = passageVectorsAfter(db, after, 4096)).length; after = rows.at(-1)!.id) yield* rows;
}

/** Every stored note-level vector. */
export function* allNoteVectors(db: Database): Generator<{ noteId: number; vector: Float32Array }> {
  for (let after = BEFORE_FIRST_ID, rows: { noteId: number; vector: Float32Array }[]; (rows = noteVectorsAfter(db, after, 4096)).length; after = rows.at(-1)!.noteId) yield* rows;
}

export function noteVector(db: Database, noteId: number): Float32Array | null {
  const t = tables(db);
  if (!hasTable(db, t.notes)) return null;
  const r = db.query(`SELECT embedding FROM ${t.notes} WHERE rowid = ?`).get(noteId) as { embedding: Uint8Array } | null;
  return r ? blobToVector(r.embedding) : null;
}

export interface PassageRow {
  id: number;
  noteId: number;
  ord: number;
  heading: string;
  text: string;
}

export function passagesByIds(db: Database, ids: number[]): Map<number, PassageRow> {
  const out = new Map<number, PassageRow>();
  if (!ids.length) return out;
  const rows = db.query(`SELECT id, note_id AS noteId, ord, heading, text FROM passages WHERE ${inList("id")}`).all(JSON.stringify(ids)) as PassageRow[];
  for (const r of rows) out.set(r.id, r);
  return out;
}

export function passageHashes(db: Database): Set<string> {
  return new Set((db.query("SELECT DISTINCT hash FROM passages").all() as { hash: string }[]).map((r) => r.hash));
}
