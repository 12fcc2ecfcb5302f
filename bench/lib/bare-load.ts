// The floors the benchmark compares Lettuce against, run as a child process
// (so each run is cold and its peak RSS is measurable like Lettuce's):
//
//   bun bench/lib/bare-load.ts load <vault> <db>   read every note, insert title + body into
//                                                   one FTS5 table, nothing else
//   bun bench/lib/bare-load.ts walk <vault>        walk the vault and stat every note: the
//                                                   least an index restart must do
//
// Deliberately independent of Lettuce's code: same tokenizer and pragmas
// (WAL, synchronous NORMAL), one transaction, no parsing at all.
import { Database } from "bun:sqlite";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

// The same folders Lettuce skips: anything dot-named, and node_modules.
function notePaths(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const d of readdirSync(dir, { withFileTypes: true })) {
      if (d.name.startsWith(".") || d.name === "node_modules") continue;
      const abs = join(dir, d.name);
      if (d.isDirectory()) walk(abs);
      else if (d.isFile() && /\.md$/i.test(d.name)) out.push(abs);
    }
  };
  walk(root);
  return out;
}

const [mode, vault, dbPath] = process.argv.slice(2);
const t0 = performance.now();
if (mode === "walk" && vault) {
  let bytes = 0;
  const files = notePaths(vault);
  for (const f of files) bytes += statSync(f).size;
  console.log(JSON.stringify({ files: files.length, bytes, ms: performance.now() - t0 }));
} else if (mode === "load" && vault && dbPath) {
  const db = new Database(dbPath, { create: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("CREATE VIRTUAL TABLE fts USING fts5(title, body, tokenize = 'unicode61 remove_diacritics 2')");
  const insert = db.prepare("INSERT INTO fts(title, body) VALUES (?, ?)");
  const files = notePaths(vault);
  let bytes = 0;
  db.exec("BEGIN");
  for (const f of files) {
    const buf = readFileSync(f);
    bytes += buf.length;
    insert.run(f.slice(f.lastIndexOf("/") + 1, -3), buf.toString("utf8"));
  }
  db.exec("COMMIT");
  const ms = performance.now() - t0;
  db.close();
  console.log(JSON.stringify({ files: files.length, bytes, ms }));
} else {
  console.error("usage: bare-load.ts load <vault> <db> | walk <vault>");
  process.exit(2);
}
