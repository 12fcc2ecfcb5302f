// The life of the vectors: the cache that survives index.db, renames, model
// changes that never mix vectors, the background embedder of `serve`, and the
// partial answer while a large backlog is embedded.
import { afterAll, expect, test } from "bun:test";
import { existsSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SemanticService } from "../lib/semantic/service";
import { getMeta } from "../lib/store/index-db";
import { storedDimensions } from "../lib/semantic/store";
import { copyVault, startTestServer } from "./helpers/server";
import { withEnv } from "./helpers/env";
import { startModelServer } from "./helpers/model-server";


const BUILTIN = { LETTUCE_EMBED_PROVIDER: "builtin", LETTUCE_LLM_PROVIDER: "none" };
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test("deleting index.db, renaming notes and restarting re-embed nothing: vectors come from embeddings.db", async () => {
  const root = copyVault();
  dirs.push(root);
  await withEnv(BUILTIN, async () => {
    let s = await startTestServer({ root });
    const first = await s.call("reindex_embeddings");
    expect(first.embedded).toBeGreaterThan(0);
    await s.close();

    rmSync(join(root, ".lettuce/index.db"), { force: true });
    rmSync(join(root, ".lettuce/index.db-wal"), { force: true });
    rmSync(join(root, ".lettuce/index.db-shm"), { force: true });
    s = await startTestServer({ root });
    const rebuilt = await s.call("reindex_embeddings");
    expect(rebuilt.notes).toBe(first.notes);
    expect(rebuilt.passages).toBe(first.passages);
    expect(rebuilt.embedded).toBe(0);

    renameSync(join(root, "Garden/Compost.md"), join(root, "Garden/Compost heap.md"));
    await s.vault.indexer.update(["Garden/Compost.md", "Garden/Compost heap.md"]);
    const renamed = await s.call("reindex_embeddings");
    expect(renamed).toMatchObject({ notes: 1, embedded: 0, pruned: 1 });
    const hit = await s.call("semantic_search", { query: "what goes on the compost heap", limit: 1 });
    expect(hit.items[0].path).toBe("Garden/Compost heap.md");
    await s.close();

    s = await startTestServer({ root });
    expect(await s.call("reindex_embeddings")).toMatchObject({ notes: 0, embedded: 0 });
    await s.close();
  });
}, 180_000);

test("a new way of splitting notes (another passage size) re-splits every note; splitting back costs nothing", async () => {
  const root = copyVault();
  dirs.push(root);
  await withEnv(BUILTIN, async () => {
    const s = await startTestServer({ root });
    try {
      const first = await s.call("reindex_embeddings");
      await withEnv({ LETTUCE_PASSAGE_CHARS: "300" }, async () => {
        expect((await s.call("get_vault_info")).liveness.embeddingIndexStale).toBe(true);
        const small = await s.call("reindex_embeddings");
        expect(small.notes).toBe(first.notes);
        expect(small.passages).toBeGreaterThan(first.passages);
      });
      const back = await s.call("reindex_embeddings");
      expect(back).toMatchObject({ notes: first.notes, passages: first.passages, embedded: 0 });
    } finally {
      await s.close();
    }
  });
}, 180_000);

test("a model change re-embeds everything and never mixes vectors of two models", async () => {
  const root = copyVault();
  dirs.push(root);
  const remote = startModelServer({ dim: 96, models: ["nomic-embed-text:latest"] });
  try {
    const s = await withEnv(BUILTIN, () => startTestServer({ root }));
    try {
      const db = s.vault.indexDb;
      const builtin = await withEnv(BUILTIN, () => s.call("reindex_embeddings"));
      await withEnv({ LETTUCE_EMBED_PROVIDER: "ollama", OLLAMA_HOST: remote.url, LETTUCE_LLM_PROVIDER: "none" }, async () => {
        expect((await s.call("get_vault_info")).liveness.embeddingIndexStale).toBe(true);
        const r = await s.call("reindex_embeddings");
        expect(r.notes).toBe(builtin.notes);
        expect(r.embedded).toBeGreaterThan(0);
        expect(getMeta(db, "embed_model")).toBe("ollama:nomic-embed-text");
        expect(getMeta(db, "embed_dim")).toBe("96");
        // Every stored vector is the new model's.
        expect(storedDimensions(db)).toEqual([96]);
        const res = await s.call("semantic_search", { query: "frost dates April", limit: 3 });
        expect(res.items.length).toBe(3);
      });
      // Back to the built-in model: its vectors are still cached, so nothing is embedded again.
      await withEnv(BUILTIN, async () => {
        const back = await s.call("reindex_embeddings");
        expect(back).toMatchObject({ notes: builtin.notes, embedded: 0 });
        expect(getMeta(db, "embed_dim")).toBe("512");
        expect(storedDimensions(db)).toEqual([512]);
      });
      // A remote model that changes its dimension under the same name is refused, not mixed in.
      await withEnv({ LETTUCE_EMBED_PROVIDER: "ollama", OLLAMA_HOST: remote.url, LETTUCE_LLM_PROVIDER: "none" }, async () => {
        await s.call("reindex_embeddings");
        remote.state.wrongDim = 48;
        writeFileSync(join(root, "Inbox/new.md"), "# New\n\nA brand new note about frost.\n");
        await s.vault.indexer.update(["Inbox/new.md"]);
        const r = await s.callRaw("semantic_search", { query: "frost" });
        expect(r.kind).toBe("provider-error");
        expect(r.content[0].text).toContain("48-dimensional");
        expect(storedDimensions(db)).toEqual([96]);
        remote.state.wrongDim = null;
      });
      // Ollama going away is a clear provider-unavailable, not a crash.
      await remote.stop();
      await withEnv({ LETTUCE_EMBED_PROVIDER: "ollama", OLLAMA_HOST: remote.url, LETTUCE_LLM_PROVIDER: "none", LETTUCE_PROVIDER_RETRIES: "0", LETTUCE_PROVIDER_TIMEOUT_MS: "2000" }, async () => {
        const r = await s.callRaw("semantic_search", { query: "something new", hybrid: true });
        expect(r.kind).toBe("provider-unavailable");
        expect(r.content[0].text).toContain(remote.url);
      });
    } finally {
      await s.close();
    }
  } finally {
    await remote.stop();
  }
}, 180_000);

test("serve embeds what the watcher sees in the background; a large backlog answers from what is ready", async () => {
  const root = copyVault();
  dirs.push(root);
  await withEnv({ ...BUILTIN, LETTUCE_EMBED_SYNC_LIMIT: "3" }, async () => {
    const s = await startTestServer({ root, watch: true });
    try {
      // The first semantic call of an unembedded vault: more than 3 passages to go.
      // (partial answers during the build are tested in tests/semantic-background-*.test.ts).
      const r = await s.call("semantic_search", { query: "frost" });
      expect(r.partial).toBe(true);
      expect(r.items.map((i: { path: string }) => i.path)).toContain("Garden/Frost Dates.md");
      const svc = SemanticService.for(s.vault);
      await svc.idle();
      expect((await s.call("semantic_search", { query: "frost", limit: 1 })).items[0].path).toBe("Garden/Frost Dates.md");

      await svc.enableBackground();
      writeFileSync(join(root, "Garden/Greenhouse.md"), "# Greenhouse\n\nThe greenhouse keeps seedlings warm through March nights.\n");
      const deadline = Date.now() + 60_000;
      let embedded = false;
      while (Date.now() < deadline && !embedded) {
        await Bun.sleep(200);
        embedded =
          s.vault.indexDb.query("SELECT 1 FROM embed_notes e JOIN notes n ON n.id = e.note_id AND n.hash = e.hash WHERE n.path = 'Garden/Greenhouse.md'").get() !== null;
      }
      expect(embedded).toBe(true);
      expect((await s.call("get_vault_info")).liveness.embeddingIndexStale).toBe(false);
    } finally {
      await s.close();
    }
  });
  expect(existsSync(join(root, ".lettuce/embeddings.db"))).toBe(true);
}, 180_000);
