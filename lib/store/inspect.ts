// A read-only look at a vault's index.db for `lettuce doctor`: opening it the
// normal way (openIndexDb) would migrate, switch storage or rebuild it, and a
// doctor must not change what it examines.
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { INDEX_FORMAT, indexDbPath } from "./index-db";

export interface IndexSummary {
  exists: boolean;
  /** Why it cannot be read (damaged, locked), when it cannot. */
  error: string | null;
  format: string | null;
  currentFormat: string;
  notes: number;
  vectorStorage: string | null;
  embedModel: string | null;
  embedDim: number | null;
  embeddedNotes: number;
}

export function inspectIndex(root: string): IndexSummary {
  const file = indexDbPath(root);
  const out: IndexSummary = { exists: existsSync(file), error: null, format: null, currentFormat: INDEX_FORMAT, notes: 0, vectorStorage: null, embedModel: null, embedDim: null, embeddedNotes: 0 };
  if (!out.exists) return out;
  let db: Database | null = null;
  try {
    db = new Database(file, { readonly: true });
    db.exec("PRAGMA busy_timeout = 2000");
    const meta = new Map((db.query("SELECT key, value FROM meta").all() as { key: string; value: string }[]).map((r) => [r.key, r.value]));
    out.format = meta.get("format") ?? null;
    out.vectorStorage = meta.get("vector_storage") ?? null;
    out.embedModel = meta.get("embed_model") ?? null;
    const dim = Number(meta.get("embed_dim"));
    out.embedDim = Number.isInteger(dim) && dim > 0 ? dim : null;
    out.notes = (db.query("SELECT count(*) AS n FROM notes").get() as { n: number }).n;
    out.embeddedNotes = (db.query("SELECT count(*) AS n FROM embed_notes e JOIN notes n ON n.id = e.note_id AND n.hash = e.hash").get() as { n: number }).n;
  } catch (e) {
    out.error = (e as Error).message;
  } finally {
    db?.close();
  }
  return out;
}
