// Background work and the request thread (issue 15 part 1): a background pass's
// steps leave the event loop between them, so a request that arrives during
// one step is taken in before the next (and the pass then waits for it); and a
// served vault's write-ahead logs are checkpointed by a thread of their own, so
// the thread that answers requests never copies pages back and fsyncs. Asserted
// on order and on what the connections and files show, never on time.
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { requestStarted, whenQuiet } from "../lib/offload/activity";
import { BuiltinEmbedder } from "../lib/providers/builtin";
import { OllamaEmbedder } from "../lib/providers/ollama";
import { EmbeddingCache } from "../lib/semantic/cache";
import { reconcile } from "../lib/semantic/reconcile";
import { SemanticService } from "../lib/semantic/service";
import { useBuiltinModel } from "./helpers/builtin-model";
import { checkpointNow } from "../lib/store/checkpointer";
import { WAL_SIZE_LIMIT } from "../lib/store/wal-limit";
import { VaultContext } from "../lib/vault-context";
import { withEnv } from "./helpers/env";
import { ringVault, startTestServer, waitFor } from "./helpers/server";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const vault = (notes: number) => ringVault(notes, dirs);

const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

test("a request sent while a background pass runs its steps is answered before the pass ends", async () => {
  await withEnv({ LETTUCE_BACKGROUND_IDLE_MS: "30" }, async () => {
    const s = await startTestServer({ root: vault(3) });
    try {
      await s.call("get_vault_info"); // connected and warm
      await Bun.sleep(100); // past the quiet period: the pass starts on a quiet server
      const order: string[] = [];
      // Each step holds the thread as a batch's write does; between them, whenQuiet() (every background pass's hook).
      const pass = (async () => {
        for (let i = 0; i < 40; i++) {
          busy(10);
          order.push("step");
          await whenQuiet();
        }
        order.push("pass done");
      })();
      const answered = s.call("get_vault_info").then(() => order.push("answered"));
      await Promise.all([pass, answered]);
      // Steps ran before and after the answer: it was let in between them, not made to wait for the pass.
      const at = order.indexOf("answered");
      expect(at).toBeGreaterThan(0);
      expect(order.slice(at + 1)).toContain("step");
    } finally {
      await s.close();
    }
  });
});

test("a served vault's index and embedding cache are checkpointed off the request thread", async () => {
  const root = vault(50);
  const s = await startTestServer({ root, watch: true });
  try {
    const autocheckpoint = (db: { query: (sql: string) => { get: () => unknown } }) => (db.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint;
    // The request thread's connection never checkpoints by itself...
    expect(autocheckpoint(s.vault.indexDb)).toBe(0);
    const cache = EmbeddingCache.open(root);
    expect(autocheckpoint(cache.db)).toBe(0);
    cache.close();
    // ...and what it writes still reaches the database file: the WAL is copied back by the checkpoint thread,
    // every 30 s or once it has grown by ~1,000 frames (SQLite's own threshold), not at every change: a WAL
    // copied back restarts at the next commit, which fsyncs its header on the committing thread.
    const indexFile = join(root, ".lettuce", "index.db");
    checkpointNow();
    // It runs on the checkpoint thread: wait until index.db has stopped changing (100 ms was not always
    // enough on a loaded machine, and the checkpoint's last writes then counted as a change below).
    let before = statSync(indexFile).mtimeMs;
    for (let still = 0; still < 3; ) {
      await Bun.sleep(100);
      const m = statSync(indexFile).mtimeMs;
      still = m === before ? still + 1 : 0;
      before = m;
    }
    let n = 0;
    const addNotes = async (count: number) => {
      const paths = Array.from({ length: count }, () => `Notes/New ${n++}.md`);
      for (const p of paths) writeFileSync(join(root, p), `# ${p}\n\n${"words ".repeat(200)}\n`);
      await s.vault.indexer.update(paths);
    };
    await addNotes(2);
    await Bun.sleep(1200); // two rounds of the checkpoint thread
    expect(statSync(indexFile).mtimeMs).toBe(before);
    const walSize = () => statSync(indexFile + "-wal").size;
    const start = walSize();
    while (walSize() - start < 4.5 * 1024 * 1024) await addNotes(50);
    await waitFor(() => statSync(indexFile).mtimeMs > before, { what: "index.db to take the checkpointed pages", timeoutMs: 5000 });
    expect(await s.call("search", { query: "words", limit: 1 })).toMatchObject({ total: n });
  } finally {
    await s.close();
  }
});

// A burst of writes while a reader held an old snapshot grew fts.db-wal past 300 MB, and SQLite keeps a
// WAL file at its largest unless told otherwise (the growth audit of 2026-12-05).
test("a write-ahead log grown by a burst is cut back once a checkpoint has emptied it", async () => {
  const root = vault(10);
  const s = await startTestServer({ root, watch: true });
  try {
    for (const schema of ["main", "ftsdb"]) {
      expect(s.vault.indexDb.query(`PRAGMA ${schema}.journal_size_limit`).get()).toEqual({ journal_size_limit: WAL_SIZE_LIMIT });
    }
    const ftsWal = join(root, ".lettuce", "fts.db-wal");
    // Another reader's open transaction keeps every frame in the log.
    const reader = new Database(join(root, ".lettuce", "fts.db"), { readonly: true });
    reader.exec("BEGIN");
    reader.query("SELECT count(*) FROM fts").get();
    let n = 0;
    while (statSync(ftsWal).size < WAL_SIZE_LIMIT * 1.5) {
      const paths = Array.from({ length: 20 }, () => `Notes/Burst ${n++}.md`);
      for (const p of paths) writeFileSync(join(root, p), `# ${p}\n\n${Array.from({ length: 12_000 }, (_, i) => `w${(i * 7919 + n) % 50_000}`).join(" ")}\n`);
      await s.vault.indexer.update(paths);
    }
    reader.exec("COMMIT");
    reader.close();
    // The checkpoint thread empties the log; the next write starts it over, cut back to the limit.
    let after = 0;
    await waitFor(
      async () => {
        checkpointNow();
        await Bun.sleep(200);
        writeFileSync(join(root, `Notes/After ${after}.md`), "# After\n\nthe burst is over\n");
        await s.vault.indexer.update([`Notes/After ${after++}.md`]);
        return statSync(ftsWal).size <= WAL_SIZE_LIMIT;
      },
      { what: "fts.db-wal to be cut back", timeoutMs: 20_000 },
    );
    expect(await s.call("search", { query: "over", limit: 1 })).toMatchObject({ total: after });
  } finally {
    await s.close();
  }
}, 60_000);

test("a one-shot command (no watcher) and LETTUCE_CHECKPOINT_THREAD=0 keep SQLite's own checkpoints", async () => {
  const plain = VaultContext.open(vault(3));
  try {
    expect((plain.indexDb.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint).toBe(1000);
  } finally {
    plain.close();
  }
  await withEnv({ LETTUCE_CHECKPOINT_THREAD: "0" }, async () => {
    const s = await startTestServer({ root: vault(3), watch: true });
    try {
      expect((s.vault.indexDb.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint).toBe(1000);
    } finally {
      await s.close();
    }
  });
});

test("an embedding-cache lookup that finds nothing takes no write lock; one that finds vectors marks only those as used", async () => {
  // The cache's own thread (no writer thread: a one-shot command; a served vault's is the test below).
  await withEnv({ LETTUCE_CACHE_WRITER: "0" }, async () => lookupMarksInThread());
});

function lookupMarksInThread(): void {
  const root = vault(1);
  const cache = EmbeddingCache.open(root);
  const other = new Database(join(root, ".lettuce", "embeddings.db"));
  try {
    cache.put("m", [["a", new Float32Array([1, 2])]]);
    cache.db.query("UPDATE vectors SET used_at = 0").run();
    // Another connection holds the write lock (as a background write would): a lookup of a first build's
    // new passages must not wait for it (it used to run an UPDATE, and wait out busy_timeout).
    other.exec("PRAGMA busy_timeout = 0");
    other.exec("BEGIN IMMEDIATE");
    cache.db.exec("PRAGMA busy_timeout = 0");
    expect(cache.get("m", ["new-1", "new-2"]).size).toBe(0);
    other.exec("ROLLBACK");
    const before = (cache.db.query("SELECT total_changes() AS n").get() as { n: number }).n;
    expect([...cache.get("m", ["a", "new-1"]).keys()]).toEqual(["a"]);
    expect((cache.db.query("SELECT total_changes() AS n").get() as { n: number }).n - before).toBe(1);
    expect((cache.db.query("SELECT used_at FROM vectors WHERE hash = 'a'").get() as { used_at: number }).used_at).toBeGreaterThan(0);
  } finally {
    other.close();
    cache.close();
  }
}

test("a served vault's embedding cache is written by a thread of its own: the request thread's connection only reads it", async () => {
  const restore = useBuiltinModel();
  const root = vault(12);
  const s = await startTestServer({ root, watch: true });
  try {
    const svc = SemanticService.for(s.vault);
    const result = await svc.reconcileNow();
    expect(result.embedded).toBeGreaterThan(0);
    const changes = (db: Database) => (db.query("SELECT total_changes() AS n").get() as { n: number }).n;
    // Every vector of the pass is in the cache (another connection sees it), and none was written by the request thread's.
    const other = new Database(join(root, ".lettuce", "embeddings.db"), { readonly: true });
    try {
      expect((other.query("SELECT count(*) AS n FROM vectors").get() as { n: number }).n).toBe(result.embedded);
    } finally {
      other.close();
    }
    expect(changes(svc.cache.db)).toBe(0);
    // A lookup that finds vectors has them marked as used by the writer thread too.
    const model = (svc.cache.db.query("SELECT model FROM vectors LIMIT 1").get() as { model: string }).model;
    svc.cache.db.exec("PRAGMA busy_timeout = 5000");
    const hash = (svc.cache.db.query("SELECT hash FROM vectors LIMIT 1").get() as { hash: string }).hash;
    const stale = new Database(join(root, ".lettuce", "embeddings.db"));
    stale.query("UPDATE vectors SET used_at = 0 WHERE hash = ?").run(hash);
    stale.close();
    expect(svc.cache.get(model, [hash]).size).toBe(1);
    await waitFor(() => (svc.cache.db.query("SELECT used_at FROM vectors WHERE hash = ?").get(hash) as { used_at: number }).used_at > 0, { what: "the writer thread to mark the vector as used" });
    expect(changes(svc.cache.db)).toBe(0);
    // And semantic search answers from what it wrote.
    const hit = await s.call("semantic_search", { query: "a note that links to another", limit: 3 });
    expect(hit.items).toHaveLength(3);
  } finally {
    await s.close();
    restore();
  }
});

test("the count before an embedding pass yields while it splits, not once per 64 notes", async () => {
  // Sixteen long notes: splitting each takes longer than a step may hold the request thread, so the
  // count must yield between notes. It used to split 64 notes per step (11-40 ms on a 10k vault).
  const root = vault(0);
  mkdirSync(join(root, "Long"), { recursive: true });
  const para = (n: number) => `Paragraph ${n} tells of rivers, glaciers and the valleys they carve over long ages of ice and water.\n\n`;
  const notes = 16;
  for (let i = 0; i < notes; i++) {
    let body = `# Long ${i}\n\n`;
    for (let h = 0; h < 200; h++) body += `## Part ${h}\n\n${para(h).repeat(12)}`;
    writeFileSync(join(root, "Long", `L${i}.md`), body);
  }
  const ctx = VaultContext.open(root);
  const cache = EmbeddingCache.open(root);
  try {
    await ctx.indexer.fullScan();
    let yields = 0;
    let counted = -1;
    const stop = new AbortController();
    // Nothing is embedded: the pass is stopped when the count is in (its first progress report), before any batch.
    const provider = new OllamaEmbedder("http://127.0.0.1:9", "never-called");
    const pass = reconcile(ctx.indexDb, provider, cache, {
      yield: async () => {
        yields++;
      },
      onProgress: () => {
        if (counted < 0) counted = yields;
        stop.abort();
      },
      signal: stop.signal,
    });
    await expect(pass).rejects.toThrow(/stopped/);
    expect(counted).toBeGreaterThanOrEqual(notes / 2);
  } finally {
    cache.close();
    ctx.close();
  }
});

test("a background pass loads the model only once the server is quiet: loading keeps the runtime's compiler threads busy", async () => {
  const root = vault(40);
  const ctx = VaultContext.open(root);
  const cache = EmbeddingCache.open(root);
  try {
    await ctx.indexer.fullScan();
    // The built-in model's provider, one worker; the pass is stopped once its count is in, before any batch.
    const provider = new BuiltinEmbedder(1);
    const warmed = () => provider.workerCount;
    const stop = new AbortController();
    const end = requestStarted(); // a request in flight: background work waits
    const pass = reconcile(ctx.indexDb, provider, cache, { yield: whenQuiet, signal: stop.signal, onProgress: () => stop.abort() });
    pass.catch(() => undefined);
    try {
      await Bun.sleep(300);
      expect(warmed()).toBe(0);
      end();
      await waitFor(() => warmed() === 1, { what: "the model to load once the request ended", timeoutMs: 5000 });
      await expect(pass).rejects.toThrow(/stopped/);
    } finally {
      end();
      provider.close();
    }
  } finally {
    cache.close();
    ctx.close();
  }
});
