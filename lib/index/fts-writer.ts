// Worker entry: writes full-text rows into fts.db on its own thread, while the
// main thread writes everything else into index.db: a cold scan's rows, or a
// batch with a huge note (whose insert would hold the request thread).
import { Database } from "bun:sqlite";
import { coldTrace } from "./cold-trace";
import { FTS_RANK, ftsSchemaSql, setFtsGeneration } from "../store/fts-db";
import { limitWal } from "../store/wal-limit";
import { ngramText } from "../vault/ngram";

declare const self: Worker;

// [id, title, body] from the main thread (FtsSink.push: the n-grams are made here, off the request thread), or
// with the title's and body's n-grams from a parse worker (parse-job.ts FtsRow) or with a big note's UTF-8 body.
export type Row = [number, string | null, string | Uint8Array | null, (string | null)?, (string | null)?];
type Msg =
  | { open: string; incremental?: boolean }
  | { rows: Row[] }
  | { port: MessagePort }
  | { finish: string; expect: number }
  | { abort: true };

let db: Database | null = null;
let insert: ReturnType<Database["prepare"]> | null = null;
let remove: ReturnType<Database["prepare"]> | null = null;
// A body given as the note's UTF-8 bytes (from a parse worker): bound as a blob, stored as text, no decoding here.
let insertBytes: ReturnType<Database["prepare"]> | null = null;
let incremental = false;
// Rows that came through parse workers' ports, and a finish waiting for the rest of them.
let viaPorts = 0;
let pendingFinish: { finish: string; expect: number } | null = null;
let failed = false;

function writeRows(rows: Row[]): void {
  for (const row of rows) {
    const [id, title, body] = row;
    // An existing index: a row replaces the note's old one (the main thread no longer deletes it).
    if (title === null || incremental) remove!.run(id);
    if (title === null) continue;
    const made = row.length < 5;
    const titleNg = made ? ngramText(title) : (row[3] ?? null);
    const bodyNg = made && typeof body === "string" ? ngramText(body) : (row[4] ?? null);
    if (typeof body === "string") insert!.run(id, title, body, titleNg, bodyNg);
    else insertBytes!.run(id, title, body, titleNg, bodyNg);
  }
}

function finish(gen: string): void {
  coldTrace("finish start", "fts");
  setFtsGeneration(db!, gen, "main");
  db!.exec("COMMIT");
  coldTrace("committed", "fts");
  db!.close();
  db = null;
  coldTrace("closed", "fts");
  self.postMessage({ done: true });
}

function fail(e: unknown): void {
  failed = true;
  self.postMessage({ error: (e as Error).message });
}

/** Rows from a parse worker. */
function onPortRows(rows: Row[]): void {
  if (failed || !db) return;
  try {
    writeRows(rows);
    viaPorts += rows.length;
    if (pendingFinish && viaPorts >= pendingFinish.expect) {
      const gen = pendingFinish.finish;
      pendingFinish = null;
      finish(gen);
    }
  } catch (e) {
    fail(e);
  }
}

self.onmessage = (ev: MessageEvent<Msg>) => {
  const m = ev.data;
  try {
    if ("open" in m) {
      coldTrace("open", "fts");
      db = new Database(m.open, { strict: true });
      db.exec("PRAGMA busy_timeout = 5000");
      db.exec("PRAGMA synchronous = NORMAL");
      limitWal(db);
      const fresh = db.query("SELECT 1 FROM sqlite_master WHERE name = 'fts'").get() === null;
      db.exec(ftsSchemaSql("main"));
      if (fresh) db.exec(FTS_RANK);
      db.exec("BEGIN IMMEDIATE");
      incremental = !!m.incremental;
      // A cold scan starts from an empty index: clear whatever a crashed one left.
      if (!incremental) db.exec("DELETE FROM fts");
      insert = db.prepare("INSERT INTO fts(rowid, title, body, title_ng, body_ng) VALUES (?, ?, ?, ?, ?)");
      insertBytes = db.prepare("INSERT INTO fts(rowid, title, body, title_ng, body_ng) VALUES (?, ?, CAST(? AS TEXT), ?, ?)");
      remove = db.prepare("DELETE FROM fts WHERE rowid = ?");
    } else if ("rows" in m) {
      writeRows(m.rows);
    } else if ("port" in m) {
      m.port.onmessage = (ev) => onPortRows((ev.data as { rows: Row[] }).rows);
    } else if ("finish" in m) {
      // Port messages and this one travel on different channels: wait for every row the workers sent.
      if (failed) self.postMessage({ error: "an earlier full-text write failed" });
      else if (viaPorts >= m.expect) finish(m.finish);
      else pendingFinish = m;
    } else {
      if (db?.inTransaction) db.exec("ROLLBACK");
      db?.close();
      db = null;
      self.postMessage({ done: true });
    }
  } catch (e) {
    fail(e);
  }
};
