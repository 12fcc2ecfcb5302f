// Where sqlite-vec cannot load (macOS binaries: Apple's SQLite refuses
// extensions), vectors live in plain BLOB tables and every semantic tool still
// works. LETTUCE_VECTOR_STORAGE=plain (a test-only switch) forces that path on
// Linux: here for the storage switch itself, and for a second run of the whole
// semantic test suite.
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { withEnv } from "./helpers/env";
import { startModelServer } from "./helpers/model-server";
import { copyVault, REPO, startTestServer } from "./helpers/server";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const sqliteVersion = () => {
  const db = new Database(":memory:");
  const v = (db.query("SELECT sqlite_version() AS v").get() as { v: string }).v;
  db.close();
  return v;
};

function tables(db: Database): string[] {
  return (db.query("SELECT name FROM sqlite_master WHERE name IN ('vec_passages', 'vec_notes', 'plain_passages', 'plain_notes') ORDER BY name").all() as { name: string }[]).map((r) => r.name);
}

test("switching between sqlite-vec and plain tables refills the vectors from the embeddings cache: no text is embedded again", async () => {
  const root = copyVault();
  dirs.push(root);
  const remote = startModelServer({ dim: 48, models: ["nomic-embed-text:latest"] });
  const OLLAMA = { LETTUCE_EMBED_PROVIDER: "ollama", OLLAMA_HOST: remote.url, LETTUCE_LLM_PROVIDER: "none" };
  const embedCalls = () => remote.state.requests.filter((r) => r.path === "/api/embed").length;
  try {
    // 1. sqlite-vec, as on Linux.
    let s = await withEnv({ ...OLLAMA, LETTUCE_VECTOR_STORAGE: undefined }, () => startTestServer({ root }));
    const first = await withEnv(OLLAMA, () => s.call("reindex_embeddings"));
    expect(first.embedded).toBeGreaterThan(0);
    expect(tables(s.vault.indexDb)).toEqual(["vec_notes", "vec_passages"]);
    expect((await withEnv(OLLAMA, () => s.call("get_vault_info"))).storage).toEqual({ vectors: "sqlite-vec", sqliteVec: "v0.1.9", sqlite: sqliteVersion() });
    await s.close();
    let calls = embedCalls();

    // 2. The same vault where sqlite-vec cannot load: its vec0 tables can be neither read nor dropped, so the
    //    derived index is rebuilt; the vectors come back from embeddings.db.
    await withEnv({ ...OLLAMA, LETTUCE_VECTOR_STORAGE: "plain" }, async () => {
      s = await startTestServer({ root });
      const info = await s.call("get_vault_info");
      expect(info.storage.vectors).toBe("plain");
      expect(info.storage.sqliteVec).toBeNull();
      expect(info.storage.note).toContain("every tool works");
      expect(info.capabilities.embeddings).toBe(true);
      const moved = await s.call("reindex_embeddings");
      expect(moved).toMatchObject({ notes: first.notes, passages: first.passages, embedded: 0 });
      expect(embedCalls()).toBe(calls);
      const db = s.vault.indexDb;
      expect(tables(db)).toEqual(["plain_notes", "plain_passages"]);
      // One 48-d float32 vector per passage, and one per note that has passages.
      const p = db.query("SELECT count(*) AS n, min(length(embedding)) AS lo, max(length(embedding)) AS hi FROM plain_passages").get() as { n: number; lo: number; hi: number };
      expect(p).toEqual({ n: first.passages, lo: 48 * 4, hi: 48 * 4 });
      expect((db.query("SELECT value FROM meta WHERE key = 'vector_storage'").get() as { value: string }).value).toBe("plain");
      const hit = await s.call("semantic_search", { query: "frost dates for planting tomatoes", limit: 3 });
      expect(hit.items.map((i: { path: string }) => i.path)).toContain("Garden/Frost Dates.md");
      calls = embedCalls(); // the query's own vector
      await s.close();
    });

    // 3. Back where sqlite-vec loads: the plain tables are dropped and the vectors move back, again from the cache.
    s = await withEnv({ ...OLLAMA, LETTUCE_VECTOR_STORAGE: undefined }, () => startTestServer({ root }));
    try {
      const back = await withEnv(OLLAMA, () => s.call("reindex_embeddings"));
      expect(back).toMatchObject({ notes: first.notes, passages: first.passages, embedded: 0 });
      expect(embedCalls()).toBe(calls);
      expect(tables(s.vault.indexDb)).toEqual(["vec_notes", "vec_passages"]);
      expect((s.vault.indexDb.query("SELECT count(*) AS n FROM vec_passages").get() as { n: number }).n).toBe(first.passages);
    } finally {
      await s.close();
    }
  } finally {
    await remote.stop();
  }
}, 180_000);

// The semantic tests that store, search and page vectors. The rest of tests/semantic-*.test.ts (background
// scheduling, providers' wire formats, keyword mode, passage splitting, the pair search's memory) never
// reads the vector tables' storage, and running it a second time cost the suite ~130 s of a 20-minute CI.
const VECTOR_FILES = [
  "tests/semantic-anchors.test.ts",
  "tests/semantic-embed-served.test.ts",
  "tests/semantic-hostile-paging.test.ts",
  "tests/semantic-lifecycle.test.ts",
  "tests/semantic-tools.test.ts",
];

test("the semantic tests that read and write vectors pass with vectors in plain tables", async () => {
  // A separate `bun test` process: the switch is read from the environment, and this keeps it out of every other file.
  const files = VECTOR_FILES.filter((f) => Bun.file(join(REPO, f)).size > 0);
  expect(files).toEqual(VECTOR_FILES);
  const p = Bun.spawn([process.execPath, "test", "--timeout", "120000", ...files], {
    cwd: REPO,
    env: { ...process.env, LETTUCE_VECTOR_STORAGE: "plain" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  const text = out + err;
  const passed = Number(text.match(/^\s*(\d+) pass$/m)?.[1] ?? 0);
  const failed = Number(text.match(/^\s*(\d+) fail$/m)?.[1] ?? 0);
  if (code !== 0 || failed) console.log(text.split("\n").filter((l) => /\(fail\)|error:|Expected|Received/.test(l)).join("\n"));
  console.log(`semantic suite with vectors in plain tables (${files.length} files): ${passed} pass, ${failed} fail`);
  expect(failed).toBe(0);
  expect(passed).toBeGreaterThan(20);
  expect(code).toBe(0);
  // binaries-targets.test.ts runs the compiled binary's semantic search with plain storage too.
}, 1_500_000);
