// Worker entry: writes full-text rows into fts.db on its own thread, while the
// main thread writes everything else into index.db: a cold scan's rows, or a
// batch with a huge note (whose insert would hold the request thread).
import { Database } from "bun:sqlite";
import { FTS_RANK, ftsSchemaSql, setFtsGeneration } from "../store/fts-db";

declare const self: Worker;

type Msg =
  | { open: string; incremental?: boolean }
  | { rows: [number, string | null, string | null][] }
  | { finish: string }
  | { abort: true };

let db: Database | null = null;
let insert: ReturnType<Database["prepare"]> | null = null;
let remove: ReturnType<Database["prepare"]> | null = null;
let incremental = false;

self.onmessage = (ev: MessageEvent<Msg>) => {
  const m = ev.data;
  try {
    if ("open" in m) {
      db = new Database(m.open, { strict: true });
      db.exec("PRAGMA busy_timeout = 5000");
      db.exec("PRAGMA synchronous = NORMAL");
      const fresh = db.query("SELECT 1 FROM sqlite_master WHERE name = 'fts'").get() === null;
      db.exec(ftsSchemaSql("main"));
      if (fresh) db.exec(FTS_RANK);
      db.exec("BEGIN IMMEDIATE");
      incremental = !!m.incremental;
      // A cold scan starts from an empty index: clear whatever a crashed one left.
      if (!incremental) db.exec("DELETE FROM fts");
      insert = db.prepare("INSERT INTO fts(rowid, title, body) VALUES (?, ?, ?)");
      remove = db.prepare("DELETE FROM fts WHERE rowid = ?");
    } else if ("rows" in m) {
      for (const [id, title, body] of m.rows) {
        // An existing index: a row replaces the note's old one (the main thread no longer deletes it).
        if (title === null || incremental) remove!.run(id);
        if (title !== null) insert!.run(id, title, body);
      }
    } else if ("finish" in m) {
      setFtsGeneration(db!, m.finish, "main");
      db!.exec("COMMIT");
      db!.close();
      db = null;
      self.postMessage({ done: true });
    } else {
      if (db?.inTransaction) db.exec("ROLLBACK");
      db?.close();
      db = null;
      self.postMessage({ done: true });
    }
  } catch (e) {
    self.postMessage({ error: (e as Error).message });
  }
};
