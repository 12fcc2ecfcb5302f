// A cold bulk load (issue 15 part 3) hands each note's full-text row from the
// parse worker straight to the full-text writer thread, as the file's own UTF-8
// bytes from where the body starts (text when CRs or invalid UTF-8 make the
// bytes differ from the body). Whatever the encoding, the index must hold
// exactly the body the parser sees, as text, and the same index the ordinary
// path builds; searches through the real server find every note.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { cpSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { runLettuce } from "./helpers/cli";
import { withEnv } from "./helpers/env";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";

setDefaultTimeout(120_000);

// More notes than parse-pool's inline limit (256), so that parse workers run.
const NOTES = 330;
const enc = (s: string) => Buffer.from(s, "utf8");

/** Each kind of file: its bytes, and the body (text after BOM and frontmatter, LF line ends) the index must hold. */
function noteFile(i: number): { bytes: Buffer; body: string; word: string } {
  const word = `uniq${String(i).padStart(4, "0")}word`;
  const tail = `Body of ${i} with ${word} [[Link ${i % 5}]] #tag${i % 3}\n`;
  switch (i % 8) {
    case 0: // byte-order mark, frontmatter with non-ASCII, body with emoji
      return { bytes: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), enc(`---\ntitle: Böm 😀 ${i}\naliases: [al${i}]\n---\n# Head\n😀 ${tail}`)]), body: `# Head\n😀 ${tail}`, word };
    case 1: // byte-order mark, no frontmatter
      return { bytes: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), enc(`# Title ${i}\n${tail}`)]), body: `# Title ${i}\n${tail}`, word };
    case 2: // CRLF line ends: the body is normalised to LF
      return { bytes: enc(`---\r\ntitle: crlf ${i}\r\n---\r\n# H\r\n${tail.replace(/\n/g, "\r\n")}`), body: `# H\n${tail}`, word };
    case 3: // an invalid byte in the frontmatter
      return { bytes: Buffer.concat([enc("---\ntitle: bad "), Buffer.from([0xff, 0xfe]), enc(` ${i}\n---\n${tail}`)]), body: tail, word };
    case 4: // an invalid sequence in the body: replaced by U+FFFD as the parser reads it
      return { bytes: Buffer.concat([enc(`---\ntitle: ok ${i}\n---\nbad `), Buffer.from([0xc3]), enc(` byte ${tail}`)]), body: `bad \uFFFD byte ${tail}`, word };
    case 5: // a literal U+FFFD and CJK text
      return { bytes: enc(`中文 \uFFFD ${tail}`), body: `中文 \uFFFD ${tail}`, word };
    case 6: // empty frontmatter block
      return { bytes: enc(`---\n---\n${tail}`), body: tail, word };
    default: // plain
      return { bytes: enc(`plain ${tail}`), body: `plain ${tail}`, word };
  }
}

describe("cold bulk load: full-text rows straight from the parse workers", () => {
  let src: string;
  const roots: string[] = [];
  const expected = new Map<string, { body: string; word: string }>();
  let bulk: TestServer;
  let plain: TestServer;

  const copy = () => {
    const dir = tempDir("lettuce-cold-");
    cpSync(src, dir, { recursive: true });
    roots.push(dir);
    return dir;
  };

  beforeAll(async () => {
    src = tempDir("lettuce-cold-src-");
    for (let i = 0; i < NOTES; i++) {
      const folder = join(src, `f${i % 6}`);
      mkdirSync(folder, { recursive: true });
      const n = noteFile(i);
      writeFileSync(join(folder, `n${i}.md`), n.bytes);
      expected.set(`f${i % 6}/n${i}.md`, { body: n.body, word: n.word });
    }
    // Two parse workers: two ports into the writer, whose rows finish() must wait for.
    bulk = await withEnv({ LETTUCE_BULK_THRESHOLD: "1", LETTUCE_PARSE_WORKERS: "2" }, () => startTestServer({ root: copy() }));
    plain = await withEnv({ LETTUCE_BULK_THRESHOLD: "1000000", LETTUCE_PARSE_WORKERS: "2" }, () => startTestServer({ root: copy() }));
  });

  afterAll(async () => {
    await bulk?.close();
    await plain?.close();
    for (const r of [src, ...roots]) if (r) rmSync(r, { recursive: true, force: true });
  });

  test("every body is stored as text, exactly as the parser reads the file (BOM, CRLF, invalid UTF-8, U+FFFD)", () => {
    const rows = bulk.vault.indexDb
      .query("SELECT n.path AS path, f.body AS body, typeof(f.body) AS type FROM fts f JOIN notes n ON n.id = f.rowid")
      .all() as { path: string; body: string; type: string }[];
    expect(rows.length).toBe(NOTES);
    for (const r of rows) {
      expect(r.type).toBe("text");
      expect({ path: r.path, body: r.body }).toEqual({ path: r.path, body: expected.get(r.path)!.body });
    }
  });

  test("the index is the one the ordinary path builds (notes, links, tags, headings, full text)", () => {
    const dump = (s: TestServer) => {
      const all = (sql: string) => s.vault.indexDb.query(sql).all();
      return {
        notes: all("SELECT path, name, folder, title, size, hash, frontmatter, tags, aliases, unresolved, out_notes FROM notes ORDER BY path"),
        links: all("SELECT n.path, l.ord, l.target, l.target_key, l.kind, l.line, l.resolved FROM links l JOIN notes n ON n.id = l.note_id ORDER BY n.path, l.ord"),
        tags: all("SELECT n.path, t.tag FROM tags t JOIN notes n ON n.id = t.note_id ORDER BY n.path, t.tag"),
        headings: all("SELECT n.path, h.ord, h.title, h.slug, h.line FROM headings h JOIN notes n ON n.id = h.note_id ORDER BY n.path, h.ord"),
        keys: all("SELECT n.path, k.key FROM name_keys k JOIN notes n ON n.id = k.note_id ORDER BY n.path, k.key"),
        fts: all("SELECT n.path, f.title, f.body, typeof(f.body) AS t FROM fts f JOIN notes n ON n.id = f.rowid ORDER BY n.path"),
      };
    };
    const a = dump(plain);
    expect(a.notes.length).toBe(NOTES);
    expect(dump(bulk)).toEqual(a);
  });

  test("search through the server finds each kind of note by a word of its body", async () => {
    for (let i = 0; i < 8; i++) {
      const path = `f${i % 6}/n${i}.md`;
      const res = await bulk.call("search", { query: expected.get(path)!.word, limit: 5 }, "read");
      expect(res.items.map((h: { path: string }) => h.path)).toEqual([path]);
    }
    // A word in a frontmatter-only field (title) is searchable too; a word of the raw frontmatter text is not body.
    const byAlias = await bulk.call("search", { query: "al0", limit: 5 }, "read");
    expect(byAlias.items.map((h: { path: string }) => h.path)).toContain("f0/n0.md");
  });
});

// A first `lettuce index` of a vault starts again with mimalloc's purging
// turned off and JSC's FTL tier off (lib/index/bulk-relaunch.ts: in place by
// execve, or in a child where that cannot be done). mimalloc's verbose mode and
// JSC's dumpOptions print the options each process image starts with, which
// shows which one ran with what.
describe("a first `lettuce index` starts again with the bulk-load allocator setting", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const vaultOf = (n: number) => {
    const dir = tempDir("lettuce-relaunch-");
    dirs.push(dir);
    for (let i = 0; i < n; i++) writeFileSync(join(dir, `n${i}.md`), `# Note ${i}\nword${i} [[n${(i + 1) % n}]]\n`);
    return dir;
  };
  const purgeDelays = (stderr: string) => [...stderr.matchAll(/option 'purge_delay': (-?\d+)/g)].map((m) => Number(m[1]));
  const ftlOff = (stderr: string) => stderr.match(/useFTLJIT=false/g)?.length ?? 0;

  test("cold: the indexing process has purge_delay -1, and the result and exit code come through", async () => {
    const dir = vaultOf(40);
    const cold = await runLettuce(["index", dir, "--json"], { env: { MIMALLOC_VERBOSE: "1", BUN_JSC_dumpOptions: "1" }, timeoutMs: 60_000 });
    expect(cold.code).toBe(0);
    expect(JSON.parse(cold.stdout.trim().split("\n").pop()!)).toMatchObject({ notes: 40, changed: 40 });
    const delays = purgeDelays(cold.stderr);
    expect(delays).toContain(-1); // the indexing run
    expect(delays.filter((d) => d !== -1).length).toBe(1); // the first start, with the default
    expect(ftlOff(cold.stderr)).toBe(1); // the indexing run only
    const db = new Database(join(dir, ".lettuce", "index.db"), { readonly: true });
    try {
      expect((db.query("SELECT count(*) AS n FROM links WHERE resolved IS NOT NULL").get() as { n: number }).n).toBe(40);
    } finally {
      db.close();
    }
    // The index exists now: an update runs in the one process, with the default.
    const warm = await runLettuce(["index", dir, "--json"], { env: { MIMALLOC_VERBOSE: "1", BUN_JSC_dumpOptions: "1" } });
    expect(warm.code).toBe(0);
    expect(JSON.parse(warm.stdout.trim().split("\n").pop()!)).toMatchObject({ notes: 40, changed: 0 });
    expect(purgeDelays(warm.stderr)).not.toContain(-1);
    expect(purgeDelays(warm.stderr).length).toBe(1);
    expect(ftlOff(warm.stderr)).toBe(0);
  });

  test("a failure after the restart is the command's failure: its exit code and one message", async () => {
    const dir = vaultOf(1);
    const file = join(dir, "n0.md");
    const r = await runLettuce(["index", file, "--json"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr.match(/lettuce index:/g)?.length).toBe(1);
    // A usage mistake is answered by the command itself, without a relaunch.
    const u = await runLettuce(["index", dir, dir], { env: { MIMALLOC_VERBOSE: "1" } });
    expect(u.code).toBe(2);
    expect(purgeDelays(u.stderr)).not.toContain(-1);
  });
});
