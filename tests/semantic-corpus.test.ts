// Semantic tools on real third-party notes (a slice of the D&D 5e SRD wiki:
// 131 spells and the 10 race pages), with the real built-in model, through
// the real server and the real CLI.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runLettuce } from "./helpers/cli";
import { CORPORA, startTestServer, type TestServer } from "./helpers/server";
import { describeWithCorpus } from "./helpers/corpora";
import { SemanticService } from "../lib/semantic/service";

describeWithCorpus("dnd-srd-wiki", "semantic tools on the SRD wiki", () => {
  const SRD = join(CORPORA, "dnd-srd-wiki");
  const ENV = { LETTUCE_EMBED_PROVIDER: "builtin", LETTUCE_LLM_PROVIDER: "none" };
  const saved: Record<string, string | undefined> = {};
  let root: string;
  let s: TestServer;
  let embedded: { notes: number; passages: number };

  beforeAll(async () => {
    for (const [k, v] of Object.entries(ENV)) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
    root = mkdtempSync(join(tmpdir(), "lettuce-srd-"));
    mkdirSync(join(root, "Spells"));
    for (const f of readdirSync(join(SRD, "Spells")).filter((f) => /^[A-F].*\.md$/.test(f))) cpSync(join(SRD, "Spells", f), join(root, "Spells", f));
    cpSync(join(SRD, "Races"), join(root, "Races"), { recursive: true });
    s = await startTestServer({ root });
    // Embed in this process first: on a loaded machine the built-in model can need longer than one
    // MCP request may wait. The tool calls below then find the work done (reindex reports it).
    embedded = await SemanticService.for(s.vault).reconcileNow();
  }, 900_000);

  afterAll(async () => {
    await s.close();
    rmSync(root, { recursive: true, force: true });
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  const paths = (r: { items: { path: string }[] }) => r.items.map((h) => h.path);

  test("reindex_embeddings embeds the slice; semantic_search finds spells by what they do", async () => {
    expect(embedded.notes).toBe(141);
    expect(embedded.passages).toBeGreaterThan(141);
    // Nothing is stale any more: the tool has nothing to embed.
    expect(await s.call("reindex_embeddings")).toMatchObject({ notes: 0, embedded: 0 });
    const fire = await s.call("semantic_search", { query: "a bright streak that explodes into flame and burns everyone nearby", limit: 5 });
    expect(paths(fire).slice(0, 3)).toContain("Spells/Fireball.md");
    // Queries whose answer leads by a clear margin: the model's scores shift slightly with how passages are batched.
    const quake = await s.call("semantic_search", { query: "an earthquake shakes the ground", limit: 3 });
    expect(paths(quake)[0]).toBe("Spells/Earthquake.md");
    const disk = await s.call("semantic_search", { query: "summon a floating disk to carry loads", limit: 3 });
    expect(paths(disk)[0]).toBe("Spells/Floating Disk.md");
    // Hybrid: the words and the meaning together.
    const fall = await s.call("semantic_search", { query: "slow the descent of people falling from a height", hybrid: true, limit: 3 });
    expect(paths(fall)).toContain("Spells/Feather Fall.md");
    const lock = await s.call("semantic_search", { query: "magically lock a door or chest", hybrid: true, limit: 3 });
    expect(paths(lock)).toContain("Spells/Arcane Lock.md");
    const bark = await s.call("semantic_search", { query: "make skin as tough as tree bark", hybrid: true, limit: 3 });
    expect(paths(bark)).toContain("Spells/Barkskin.md");
  }, 180_000);

  test("related_notes and find_duplicates on real notes", async () => {
    const rel = await s.call("related_notes", { path: "Races/Half-Elf.md", limit: 5 });
    expect(rel.items).toHaveLength(5);
    expect(paths(rel)).not.toContain("Races/Half-Elf.md");
    expect(paths(rel).some((p: string) => p.startsWith("Races/"))).toBe(true);
    // On the calibrated similarity, spells that share a template (the conjure family, the detect
    // family) pair up well below the near-duplicate default; pairs are sorted.
    const pairs = await s.call("find_duplicates", { threshold: 0.3 });
    expect(pairs.length).toBeGreaterThan(0);
    for (let i = 1; i < pairs.length; i++) expect(pairs[i - 1].similarity).toBeGreaterThanOrEqual(pairs[i].similarity);
    // A real near-duplicate (a copy with one line changed) tops the list.
    cpSync(join(root, "Spells/Fireball.md"), join(root, "Spells/Fireball (draft).md"));
    writeFileSync(join(root, "Spells/Fireball (draft).md"), (await Bun.file(join(root, "Spells/Fireball.md")).text()).replace("150 feet", "120 feet"));
    await s.vault.indexer.update(["Spells/Fireball (draft).md"]);
    const dup = await s.call("find_duplicates", {});
    expect([dup[0].pathA, dup[0].pathB].sort()).toEqual(["Spells/Fireball (draft).md", "Spells/Fireball.md"]);
    rmSync(join(root, "Spells/Fireball (draft).md"));
    await s.vault.indexer.update(["Spells/Fireball (draft).md"]);
    const map = await s.call("topic_map", {});
    expect(Array.isArray(map.clusters)).toBe(true);
    expect(Array.isArray(map.missingHubs)).toBe(true);
  }, 180_000);

  test("the CLI: embed, search --hybrid/--semantic, related, eval", async () => {
    mkdirSync(join(root, "eval"), { recursive: true });
    const qs = [
      { question: "which spell makes you fly", expected_paths: ["Spells/Fly.md"] },
      { question: "spell to stop another spell being cast", expected_paths: ["Spells/Counterspell.md"] },
      { question: "what languages do dwarves speak", expected_paths: ["Races/Dwarf.md"] },
    ];
    writeFileSync(join(root, "eval/questions.jsonl"), qs.map((q) => JSON.stringify(q)).join("\n"));
    const env = { ...ENV };
    const embed = await runLettuce(["embed", root, "--json"], { env, timeoutMs: 120_000 });
    expect(embed.code).toBe(0);
    expect(JSON.parse(embed.stdout)).toMatchObject({ notes: 0, embedded: 0, model: "builtin:universal-sentence-encoder-lite" });

    const hybrid = await runLettuce(["search", root, "teleport", "to", "a", "place", "you", "can", "see", "--hybrid", "--json", "--limit", "5"], { env, timeoutMs: 120_000 });
    expect(hybrid.code).toBe(0);
    expect(JSON.parse(hybrid.stdout).items.map((h: { path: string }) => h.path)).toContain("Spells/Dimension Door.md");
    const semantic = await runLettuce(["search", root, "ball of fire", "--semantic"], { env, timeoutMs: 120_000 });
    expect(semantic.code).toBe(0);
    expect(semantic.stdout).toContain("Spells/Fire");

    const related = await runLettuce(["related", root, "Races/Elf.md", "--json"], { env, timeoutMs: 120_000 });
    expect(related.code).toBe(0);
    expect(JSON.parse(related.stdout).items).toHaveLength(5);

    const ev = await runLettuce(["eval", root, "--k", "5", "--json"], { env, timeoutMs: 120_000 });
    expect(ev.code).toBe(0);
    const report = JSON.parse(ev.stdout);
    expect(report).toMatchObject({ k: 5, count: 3, retrieval: "hybrid", faithfulnessRate: null });
    expect(report.hitRate).toBeGreaterThanOrEqual(2 / 3);
    const text = await runLettuce(["eval", root], { env, timeoutMs: 120_000 });
    expect(text.stdout).toContain("3 questions, hybrid retrieval, k = 6");

    const off = await runLettuce(["search", root, "fire", "--semantic"], { env: { LETTUCE_EMBED_PROVIDER: "none" } });
    expect(off.code).toBe(1);
    expect(off.stderr).toContain("No embeddings provider");
    const both = await runLettuce(["search", root, "fire", "--semantic", "--hybrid"]);
    expect(both.code).toBe(2);
  }, 300_000);
});
