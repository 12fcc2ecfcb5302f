// The first build of the semantic index runs in the background while the
// server answers: semantic tools answer from what is ready (partial: true and
// the progress), progress and estimates come from counted passages and the
// measured rate, reindex_embeddings joins a running build and reports what it
// embedded, background embedding waits while requests are served, and an
// Ollama that stops answering flips capabilities.embeddings to false with the
// documented not-configured kind. The model is the in-test Ollama-wire server,
// slowed with embedDelayMs so that a build takes a while without using CPU.
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readPool } from "../lib/offload/pool";
import { plainStorageForced, VEC_CHUNK } from "../lib/store/vector-storage";
import { EmbeddingCache } from "../lib/semantic/cache";
import { SemanticService } from "../lib/semantic/service";
import { startTestServer, tempDir, waitFor } from "./helpers/server";
import { withEnv } from "./helpers/env";
import { startModelServer, type ModelServer } from "./helpers/model-server";

const NOTES = 300;
const dirs: string[] = [];
const servers: ModelServer[] = [];
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const m of servers) await m.stop().catch(() => {});
});

/** A vault of NOTES short notes (one passage each, all different), plus one about glaciers. */
function makeVault(): string {
  const root = tempDir();
  dirs.push(root);
  mkdirSync(join(root, "Notes"));
  for (let i = 0; i < NOTES; i++) writeFileSync(join(root, "Notes", `Note ${i}.md`), `# Note ${i}\n\nNote number ${i} talks about item${i} and thing${i * 7}.\n`);
  writeFileSync(join(root, "Glaciers.md"), "# Glaciers\n\nA glacier moves slowly downhill, carving valleys of ice.\n");
  return root;
}

function ollamaEnv(m: ModelServer, extra: Record<string, string> = {}) {
  return { LETTUCE_EMBED_PROVIDER: "ollama", OLLAMA_HOST: m.url, LETTUCE_EMBED_MODEL: "nomic-embed-text", LETTUCE_LLM_PROVIDER: "none", LETTUCE_EMBED_SYNC_LIMIT: "10", ...extra };
}

const embedRequests = (m: ModelServer) => m.state.requests.filter((r) => r.path === "/api/embed");
const mdFiles = (root: string): number => readdirSync(root, { recursive: true }).filter((f) => String(f).endsWith(".md")).length;

test("a search during the first build answers from what is ready, with partial: true and progress from counted passages", async () => {
  const root = makeVault();
  const m = startModelServer({ embedDelayMs: 400 });
  servers.push(m);
  await withEnv(ollamaEnv(m), async () => {
    const s = await startTestServer({ root });
    try {
      // Nothing embedded and no pass running yet.
      expect((await s.call("get_vault_info")).embedding).toMatchObject({ state: "pending", notesEmbedded: 0, notesTotal: NOTES + 1 });
      const first = await s.call("semantic_search", { query: "glacier valleys of ice", limit: 5 });
      expect(first.partial).toBe(true);
      // Nothing embedded yet: BM25 answers for the notes without vectors.
      expect(first.items[0].path).toBe("Glaciers.md");
      // Its snippet is the keyword search's, not empty (it has no passage vector yet).
      expect(first.items[0].snippet).toMatch(/glacier/i);
      expect(first.progress.notesTotal).toBe(mdFiles(root));
      expect(first.progress.state).toBe("building");

      // Progress in get_vault_info: each short note is one passage, all different, none cached.
      const info = await waitFor(async () => {
        const i = await s.call("get_vault_info");
        return i.embedding.passagesLeft !== null && i.embedding.passagesLeft < NOTES + 1 && i.embedding.passagesPerSecond !== null ? i : null;
      }, { timeoutMs: 60_000, intervalMs: 500, what: "a measured rate" }); // polls spaced out: the build pauses while requests come

      expect(info.embedding.notesTotal).toBe(NOTES + 1);
      expect(info.embedding.passagesLeft).toBeLessThanOrEqual(NOTES + 1);
      expect(info.embedding.passagesLeft).toBeGreaterThan(0);
      // The estimate is the passages left at the measured rate (shown rounded to 0.1/s).
      const { etaSeconds, passagesLeft, passagesPerSecond } = info.embedding;
      expect(passagesPerSecond).toBeGreaterThan(0);
      expect(Math.abs(etaSeconds - passagesLeft / passagesPerSecond)).toBeLessThanOrEqual(1 + 0.05 * etaSeconds);
      expect(info.capabilities.embeddings).toBe(true);

      // Partway: vectors for what is embedded, BM25 for the rest, still partial.
      const mid = await s.call("semantic_search", { query: "item3 thing21", hybrid: true, limit: 3 });
      expect(mid.items[0].path).toBe("Notes/Note 3.md");
      expect(mid.partial).toBe(true);
      const related = await s.call("related_notes", { path: "Glaciers.md" });
      expect(related.partial).toBe(true);
      const topics = await s.call("topic_map", {});
      expect(topics.partial).toBe(true);
      // find_duplicates' bare array cannot say it is partial: during the build it says the index is not ready.
      const dup: any = await s.callRaw("find_duplicates", {});
      expect(dup.kind).toBe("index-not-ready");
      expect(JSON.parse(dup.content[0].text).progress.notesTotal).toBe(NOTES + 1);

      await SemanticService.for(s.vault).idle();
      const done = await s.call("semantic_search", { query: "glacier valleys of ice", limit: 5 });
      expect(done.partial).toBeUndefined();
      expect(done.progress).toBeUndefined();
      expect(done.items[0].path).toBe("Glaciers.md");
      expect(Array.isArray(await s.call("find_duplicates", {}))).toBe(true);
      const after = await s.call("get_vault_info");
      expect(after.embedding).toMatchObject({ state: "current", notesEmbedded: NOTES + 1, notesTotal: NOTES + 1, passagesLeft: 0 });
      // Each distinct passage went to the model once (plus the queries).
      const embeddedTexts = embedRequests(m).flatMap((r) => r.body.input as string[]).filter((t) => t.startsWith("search_document: "));
      expect(new Set(embeddedTexts).size).toBe(NOTES + 1);
      expect(embeddedTexts.length).toBe(NOTES + 1);
    } finally {
      await s.close();
    }
  });
}, 180_000);

test("reindex_embeddings during a background build joins it and reports every note it embedded", async () => {
  const root = makeVault();
  const m = startModelServer({ embedDelayMs: 300 });
  servers.push(m);
  await withEnv(ollamaEnv(m), async () => {
    const s = await startTestServer({ root });
    try {
      const svc = SemanticService.for(s.vault);
      await svc.enableBackground();
      await waitFor(() => embedRequests(m).length > 0, { what: "the build to start" });
      const r = await s.call("reindex_embeddings");
      expect(r).toMatchObject({ notes: NOTES + 1, passages: NOTES + 1, embedded: NOTES + 1, pruned: 0 });
      // Nothing left: a second reindex has nothing to do.
      expect(await s.call("reindex_embeddings")).toMatchObject({ notes: 0, passages: 0, embedded: 0 });
      expect((await s.call("get_vault_info")).liveness.embeddingIndexStale).toBe(false);
    } finally {
      await s.close();
    }
  });
}, 180_000);

test("background embedding waits while requests are served; a request that needs it makes it go on", async () => {
  const root = makeVault();
  const m = startModelServer({ embedDelayMs: 100 });
  servers.push(m);
  // After any request, the background waits this long: far longer than this test.
  await withEnv(ollamaEnv(m, { LETTUCE_BACKGROUND_IDLE_MS: "3600000" }), async () => {
    const s = await startTestServer({ root });
    try {
      await s.call("get_vault_info");
      const svc = SemanticService.for(s.vault);
      await svc.enableBackground();
      // The build counts its passages, then waits before its first batch: no model call while "busy".
      await Bun.sleep(1_000);
      expect(embedRequests(m).length).toBe(0);
      const partial = await s.call("semantic_search", { query: "glacier", limit: 1 });
      expect(partial.partial).toBe(true);
      // Only the query was embedded.
      expect(embedRequests(m).every((r) => (r.body.input as string[]).every((t) => t.startsWith("search_query: ")))).toBe(true);
      // A caller that waits for the build (reindex) is served at once.
      const r = await s.call("reindex_embeddings");
      expect(r.notes).toBe(NOTES + 1);
    } finally {
      await s.close();
    }
  });
}, 180_000);

test("an Ollama that stops answering: capabilities.embeddings false, and the tools answer not-configured saying why", async () => {
  const root = makeVault();
  const m = startModelServer();
  servers.push(m);
  await withEnv(ollamaEnv(m, { LETTUCE_EMBED_PROBE_TTL_MS: "1", LETTUCE_EMBED_SYNC_LIMIT: "100000" }), async () => {
    const s = await startTestServer({ root });
    try {
      expect((await s.call("get_vault_info")).capabilities.embeddings).toBe(true);
      expect((await s.call("semantic_search", { query: "glacier", hybrid: true, limit: 1 })).items[0].path).toBe("Glaciers.md");
      await m.stop();
      const info = await waitFor(async () => {
        const i = await s.call("get_vault_info");
        return i.capabilities.embeddings === false ? i : null;
      }, { what: "capabilities to say embeddings are off" });
      expect(info.liveness.embeddingIndexStale).toBe(false);
      for (const [tool, args] of [
        ["semantic_search", { query: "glacier" }],
        ["related_notes", { path: "Glaciers.md" }],
        ["find_duplicates", {}],
        ["reindex_embeddings", {}],
      ] as const) {
        const r = await s.callRaw(tool, args);
        expect(r.isError).toBe(true);
        expect(r.kind).toBe("not-configured");
        expect(r.content[0].text).toContain(m.url);
        expect(r.content[0].text).toContain("does not answer");
      }
      // Keyword search goes on.
      expect((await s.call("search", { query: "glacier" })).items[0].path).toBe("Glaciers.md");
    } finally {
      await s.close();
    }
  });
}, 120_000);

test("the next batch is sent to the model while one is written: a passage shared by notes in consecutive batches is embedded once, and every note gets it", async () => {
  // 200 notes of one passage each, all the same text and title (same name, different folders): batches
  // of 128 notes, the second sent while the first is still at the model.
  const root = tempDir();
  dirs.push(root);
  const COPIES = 200;
  for (let i = 0; i < COPIES; i++) {
    mkdirSync(join(root, `F${i}`));
    writeFileSync(join(root, `F${i}`, "Copy.md"), "# Copy\n\nThe same paragraph about moraines and glacial till in every folder.\n");
  }
  const m = startModelServer({ embedDelayMs: 200 });
  servers.push(m);
  await withEnv(ollamaEnv(m), async () => {
    const s = await startTestServer({ root });
    try {
      const r = await s.call("reindex_embeddings");
      expect(r).toMatchObject({ notes: mdFiles(root), passages: mdFiles(root), embedded: 1 });
      const inputs = embedRequests(m).flatMap((q) => (Array.isArray(q.body.input) ? q.body.input : [q.body.input]));
      expect(inputs.length).toBe(1);
      expect((await s.call("get_vault_info")).liveness.embeddingIndexStale).toBe(false);
      const hits = await s.call("semantic_search", { query: "moraines and glacial till", limit: 5 });
      expect(hits.total ?? hits.results.length).toBeGreaterThan(0);
    } finally {
      await s.close();
    }
  });
}, 180_000);

test("a background build splits notes in a read worker, not on the request thread, into the same passages an in-line split makes, boilerplate left out", async () => {
  // 80 notes of three sections each (two passages or more apiece) that all end in the same footer: the count
  // finds the footer in 50 notes or more and leaves it out (lib/semantic/boilerplate.ts), which exercises
  // every kind of split job: the count, the second split of notes holding boilerplate, and the batches.
  const NOTES_SPLIT = 80;
  const make = () => {
    const root = tempDir();
    dirs.push(root);
    for (let i = 0; i < NOTES_SPLIT; i++) {
      const sections = ["Rivers", "Glaciers", "Deltas"].map((h, k) => `## ${h} ${i}\n\n${`Section ${k} of note ${i} describes ${h.toLowerCase()} number ${i * 3 + k} at length, with sediment and slope. `.repeat(12)}\n`);
      writeFileSync(join(root, `Place ${i}.md`), `# Place ${i}\n\n${sections.join("\n")}\n## Footer\n\nThis note in the atlas: edit it, copy it, or download the whole atlas.\n`);
    }
    return root;
  };
  const passages = (s: { vault: { indexDb: import("bun:sqlite").Database } }) =>
    s.vault.indexDb.query("SELECT n.path AS path, p.ord AS ord, p.heading AS heading, p.text AS text, p.hash AS hash FROM passages p JOIN notes n ON n.id = p.note_id ORDER BY n.path, p.ord").all();
  const m = startModelServer();
  servers.push(m);
  await withEnv(ollamaEnv(m), async () => {
    const background = await startTestServer({ root: make() });
    const inline = await startTestServer({ root: make() });
    try {
      await background.call("get_vault_info");
      const svc = SemanticService.for(background.vault);
      await svc.enableBackground();
      // Watched in-process: a request would make the background pass wait.
      await waitFor(() => svc.progressNow().state === "current", { what: "the background build to finish", timeoutMs: 60_000 });
      // The split jobs went to a worker thread (the main thread's id is 0).
      expect(readPool(background.vault).lastWorker("splitNotes")).toBeGreaterThan(0);
      // A request waiting for its passages splits in-line: the same rows come out.
      expect(await inline.call("reindex_embeddings")).toMatchObject({ notes: NOTES_SPLIT });
      expect(readPool(inline.vault).lastWorker("splitNotes")).toBeUndefined();
      const built = passages(background);
      expect(built.length).toBeGreaterThanOrEqual(NOTES_SPLIT * 2);
      expect(built).toEqual(passages(inline));
      // With no read workers (LETTUCE_READ_WORKERS=0) a background pass splits in-line, paced: the same rows again.
      await withEnv({ LETTUCE_READ_WORKERS: "0" }, async () => {
        const unthreaded = await startTestServer({ root: make() });
        try {
          const svc0 = SemanticService.for(unthreaded.vault);
          await svc0.enableBackground();
          await waitFor(() => svc0.progressNow().state === "current", { what: "the in-line background build to finish", timeoutMs: 60_000 });
          expect(readPool(unthreaded.vault).threaded).toBe(false);
          expect(passages(unthreaded)).toEqual(built);
        } finally {
          await unthreaded.close();
        }
      });
      expect(built.some((p) => String((p as { text: string }).text).includes("download the whole atlas"))).toBe(false);
    } finally {
      await background.close();
      await inline.close();
    }
  });
}, 180_000);

test("sqlite-vec tables are made in chunks of 64 vectors: a build's write that starts a chunk stays short, and every vector reads back", async () => {
  const root = makeVault();
  const m = startModelServer();
  servers.push(m);
  await withEnv(ollamaEnv(m), async () => {
    const s = await startTestServer({ root });
    try {
      const r = await s.call("reindex_embeddings");
      expect(r.passages).toBe(NOTES + 1);
      const db = s.vault.indexDb;
      const count = (sql: string) => (db.query(sql).get() as { n: number }).n;
      // (tests/binaries-plain-storage.test.ts runs this file again with plain tables: no chunks there.)
      if (plainStorageForced()) expect(count("SELECT count(*) AS n FROM plain_passages")).toBe(NOTES + 1);
      else {
        const ddl = (name: string) => (db.query("SELECT sql FROM sqlite_master WHERE name = ?").get(name) as { sql: string }).sql;
        expect(ddl("vec_passages")).toContain(`chunk_size=${VEC_CHUNK}`);
        expect(ddl("vec_notes")).toContain(`chunk_size=${VEC_CHUNK}`);
        expect(count("SELECT count(*) AS n FROM vec_passages_chunks")).toBe(Math.ceil((NOTES + 1) / VEC_CHUNK));
        expect(count("SELECT count(*) AS n FROM vec_passages")).toBe(NOTES + 1);
      }
    } finally {
      await s.close();
    }
    // A restart loads every vector from those chunks into the in-memory index.
    const again = await startTestServer({ root });
    try {
      const hit = await again.call("semantic_search", { query: "Note number 250 talks about item250 and thing1750", limit: 3 });
      expect(hit.items.map((x: { path: string }) => x.path)).toContain("Notes/Note 250.md");
    } finally {
      await again.close();
    }
  });
}, 120_000);

// Only reindex_embeddings and `lettuce embed` pruned the embedding cache: under `serve` embeddings.db kept
// every vector of every text ever written (the growth audit of 2026-12-05).
test("a serving process forgets cached vectors nothing has used for 30 days, on the cache's writer thread", async () => {
  const root = makeVault();
  const m = startModelServer();
  servers.push(m);
  const model = "ollama:nomic-embed-text";
  const old = Math.floor(Date.now() / 1000) - 40 * 86_400;
  const vec = new Float32Array(768).fill(0.1);
  // Vectors of texts no note holds any more: two unused for 40 days, one used an hour ago.
  const seed = EmbeddingCache.open(root);
  seed.put(model, [["gone-1", vec], ["gone-2", vec], ["recent", vec]]);
  seed.db.query("UPDATE vectors SET used_at = ? WHERE hash LIKE 'gone-%'").run(old);
  seed.close();
  const hashes = () => {
    const db = new Database(join(root, ".lettuce", "embeddings.db"), { readonly: true });
    try {
      return new Set((db.query("SELECT hash FROM vectors").all() as { hash: string }[]).map((r) => r.hash));
    } finally {
      db.close();
    }
  };
  await withEnv(ollamaEnv(m), async () => {
    const s = await startTestServer({ root, watch: true });
    try {
      expect(await SemanticService.for(s.vault).enableBackground()).toBe(model);
      await waitFor(() => !hashes().has("gone-1"), { timeoutMs: 30_000, what: "the unused vectors to be forgotten" });
      const left = hashes();
      expect(left.has("gone-2")).toBe(false);
      expect(left.has("recent")).toBe(true);
      expect(left.size).toBe(NOTES + 1 + 1); // every note's passage, and the recent one
      // A vector unused for 40 days whose text a note still holds stays.
      const inUse = (s.vault.indexDb.query("SELECT hash FROM passages LIMIT 1").get() as { hash: string }).hash;
      const cache = EmbeddingCache.open(root);
      try {
        cache.db.query("UPDATE vectors SET used_at = ? WHERE hash = ?").run(old, inUse);
        expect(cache.pruneAgainstIndex(model, join(root, ".lettuce", "index.db"))).toBe(0);
        expect(hashes().has(inUse)).toBe(true);
        // Nothing against an index with notes not embedded yet (one being rebuilt holds part of the passages).
        cache.put(model, [["gone-3", vec]]);
        cache.db.query("UPDATE vectors SET used_at = ? WHERE hash = 'gone-3'").run(old);
        s.vault.indexDb.query("DELETE FROM embed_notes WHERE note_id = (SELECT min(note_id) FROM embed_notes)").run();
        expect(cache.pruneAgainstIndex(model, join(root, ".lettuce", "index.db"))).toBe(0);
        expect(hashes().has("gone-3")).toBe(true);
      } finally {
        cache.close();
      }
    } finally {
      await s.close();
    }
  });
}, 60_000);
