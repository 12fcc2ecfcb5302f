// The bulk path of a cold scan (big vaults: indexes rebuilt at the end, the
// full-text rows written by a second thread into fts.db) must build exactly
// the index the ordinary path builds; and a crash between the two files'
// commits must be noticed at the next open.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { searchNotes } from "../lib/retrieval/search";
import { VaultContext } from "../lib/vault-context";
import { withEnv } from "./helpers/env";
import { copyVault, OBSIDIAN_HELP, tempDir } from "./helpers/server";
import { describeWithCorpus } from "./helpers/corpora";

setDefaultTimeout(60_000);

describeWithCorpus("obsidian-help/en", "bulk cold scan of Obsidian Help", () => {
  const roots: string[] = [];
  afterAll(() => {
    for (const r of roots) rmSync(r, { recursive: true, force: true });
  });

  /** Everything the index holds, in a comparable form. */
  function dump(v: VaultContext) {
    const db = v.indexDb;
    const all = (sql: string) => db.query(sql).all();
    return {
      notes: all("SELECT path, title, hash, tags, aliases, frontmatter FROM notes ORDER BY path"),
      links: all("SELECT n.path, l.ord, l.target, l.kind, l.heading, l.resolved FROM links l JOIN notes n ON n.id = l.note_id ORDER BY n.path, l.ord"),
      tags: all("SELECT n.path, t.tag FROM tags t JOIN notes n ON n.id = t.note_id ORDER BY n.path, t.tag"),
      headings: all("SELECT n.path, h.ord, h.title, h.slug FROM headings h JOIN notes n ON n.id = h.note_id ORDER BY n.path, h.ord"),
      fts: all("SELECT n.path, f.title, f.body, f.title_ng, f.body_ng FROM fts f JOIN notes n ON n.id = f.rowid ORDER BY n.path"),
      ftsCount: all("SELECT count(*) AS n FROM fts"),
    };
  }

  async function build(bulkThreshold: string) {
    const root = copyVault(OBSIDIAN_HELP);
    roots.push(root);
    // Text of scripts written without spaces, whose n-grams the parse workers make on the bulk path.
    writeFileSync(join(root, "多语言 notes.md"), "---\naliases: [多语言]\n---\n# 多语言\n\nWe keep 我们使用Python编写服务 and 東京のコーヒー,\nand ข้าวผัด.\n\nAn English paragraph.\n");
    return withEnv({ LETTUCE_BULK_THRESHOLD: bulkThreshold }, async () => {
      const v = VaultContext.open(root);
      await v.indexer.fullScan();
      return { root, v };
    });
  }

  let plain: Awaited<ReturnType<typeof build>>;
  let bulk: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    plain = await build("1000000");
    bulk = await build("1");
  });
  afterAll(() => {
    plain?.v.close();
    bulk?.v.close();
  });

  describe("bulk cold scan", () => {
    test("builds the same index as the ordinary path, full-text rows included", () => {
      const a = dump(plain.v);
      const b = dump(bulk.v);
      expect(b.notes.length).toBeGreaterThan(150);
      expect((b.ftsCount[0] as { n: number }).n).toBe(b.notes.length);
      expect(b).toEqual(a);
      expect(b.fts.filter((r) => (r as { body_ng: string | null }).body_ng !== null).length).toBeGreaterThan(0);
      for (const q of ["使用", "python编写", "コーヒー", "语言"]) expect(searchNotes(bulk.v.indexDb, q, 5).total, q).toBe(1);
      for (const q of ["canvas", "\"internal links\"", "sync OR publish", "plugin -community", "使用", "python", "コーヒー -x", "语言"]) {
        expect(searchNotes(bulk.v.indexDb, q, 20)).toEqual(searchNotes(plain.v.indexDb, q, 20));
      }
    });

    test("both paths leave the case-insensitive path index, and the lookups by path and by sources/ read it, not every note", () => {
      for (const v of [plain.v, bulk.v]) {
        const plan = (sql: string) => (v.indexDb.query(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((r) => r.detail).join(" | ");
        expect(plan("SELECT path FROM notes WHERE path = 'LOG.md' COLLATE NOCASE")).toContain("USING COVERING INDEX notes_path_nocase");
        expect(plan("SELECT path FROM notes WHERE path LIKE 'sources/%'")).toContain("notes_path_nocase (path>? AND path<?)");
        const row = v.indexDb.query("SELECT path FROM notes WHERE path = ? COLLATE NOCASE").get("linking NOTES and files/INTERNAL LINKS.MD") as { path: string } | null;
        expect(row?.path).toBe("Linking notes and files/Internal links.md");
      }
    });

    test("later edits go through the ordinary path into the same files", async () => {
      const before = searchNotes(bulk.v.indexDb, "zanzibarquux", 5).total;
      expect(before).toBe(0);
      await Bun.write(join(bulk.root, "New note.md"), "# New\n\nzanzibarquux\n");
      const change = await bulk.v.indexer.update(["New note.md"]);
      expect(change.changed).toEqual(["New note.md"]);
      expect(bulk.v.indexDb.query("SELECT count(*) AS n FROM fts WHERE rowid = (SELECT id FROM notes WHERE path = 'New note.md')").get()).toEqual({ n: 1 });
      expect(searchNotes(bulk.v.indexDb, "zanzibarquux", 5).items.map((i) => i.path)).toEqual(["New note.md"]);
    });

    test("a crash between the commits of index.db and fts.db is caught at the next open: the index is rebuilt", async () => {
      const root = copyVault();
      roots.push(root);
      const v = VaultContext.open(root);
      await v.indexer.fullScan();
      v.close();
      // Simulate fts.db committing a generation that index.db never did.
      const fts = new Database(join(root, ".lettuce/fts.db"));
      fts.query("UPDATE fts_meta SET value = 'lost' WHERE key = 'gen'").run();
      fts.close();
      const again = VaultContext.open(root);
      try {
        expect((again.indexDb.query("SELECT count(*) AS n FROM notes").get() as { n: number }).n).toBe(0);
        const change = await again.indexer.fullScan();
        expect(change.changed.length).toBe(21);
        expect(searchNotes(again.indexDb, "cozum", 5).total).toBe(3);
      } finally {
        again.close();
      }
    });
  });
});

test("a cold index resolves links to aliases, on both paths, and an update re-resolves them when the alias goes", async () => {
  // Links are resolved while notes are parsed, when every note's name is known but no alias yet; the
  // unresolved ones are retried at the end of a cold index (lib/index/indexer.ts reresolve).
  for (const threshold of ["1", "1000000"]) {
    const root = tempDir();
    try {
      mkdirSync(join(root, "a"));
      mkdirSync(join(root, "z"));
      // The linking notes sort (and parse, in batches) before the notes whose aliases they name.
      const N = 600;
      for (let i = 0; i < N; i++) writeFileSync(join(root, "a", `Asker ${i}.md`), `# Asker ${i}\n\nSee [[Nick ${i}]], [[Target ${i}]] and [[Nobody ${i}]].\n`);
      for (let i = 0; i < N; i++) writeFileSync(join(root, "z", `Target ${i}.md`), `---\naliases: [Nick ${i}]\n---\n# Target ${i}\n`);
      await withEnv({ LETTUCE_BULK_THRESHOLD: threshold }, async () => {
        const v = VaultContext.open(root);
        try {
          await v.indexer.fullScan();
          const links = (path: string) =>
            v.indexDb.query("SELECT l.target AS target, l.resolved AS resolved FROM links l JOIN notes n ON n.id = l.note_id WHERE n.path = ? ORDER BY l.ord").all(path);
          const counts = (path: string) => v.indexDb.query("SELECT unresolved, out_notes AS outNotes FROM notes WHERE path = ?").get(path);
          for (const i of [0, 17, N - 1]) {
            expect(links(`a/Asker ${i}.md`)).toEqual([
              { target: `Nick ${i}`, resolved: `z/Target ${i}.md` },
              { target: `Target ${i}`, resolved: `z/Target ${i}.md` },
              { target: `Nobody ${i}`, resolved: null },
            ]);
            expect(counts(`a/Asker ${i}.md`)).toEqual({ unresolved: 1, outNotes: 2 });
          }
          // The alias goes: the link through it points nowhere again.
          writeFileSync(join(root, "z", "Target 17.md"), "# Target 17\n");
          await v.indexer.fullScan();
          expect(links("a/Asker 17.md")[0]).toEqual({ target: "Nick 17", resolved: null });
          expect(counts("a/Asker 17.md")).toEqual({ unresolved: 2, outNotes: 1 });
        } finally {
          v.close();
        }
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
});
