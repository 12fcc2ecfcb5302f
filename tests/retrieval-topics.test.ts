// topic_map's default threshold (0.85) on real notes with the real built-in
// model: it must give a useful map — notes about the same thing grouped — while
// find_duplicates' 0.9 still means near-duplicate (lib/semantic/topics.ts,
// topicCut). A slice of Obsidian Help whose folders are topics (the importers,
// Publish, Sync), through the real server.
import { expect, test } from "bun:test";
import { cpSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describeWithCorpus, OBSIDIAN_HELP } from "./helpers/corpora";
import { useEmbeddedVault, wordOverlap } from "./helpers/builtin-model";

const FOLDERS = ["Import notes", "Obsidian Publish", "Obsidian Sync"];


describeWithCorpus("obsidian-help", "topic_map's default groups notes about the same thing (built-in model)", () => {
  const v = useEmbeddedVault("lettuce-topics-oh-", (root) => {
    for (const f of FOLDERS) cpSync(join(OBSIDIAN_HELP, f), join(root, f), { recursive: true, filter: (p) => !/\.(png|jpe?g|svg|gif|webp)$/i.test(p) });
  });

  test("the default threshold finds topics, most of them within one folder; the importers come together", async () => {
    const map = await v.s.call("topic_map", { max_notes: 1000, limit: 500 });
    expect(map.total).toBeGreaterThanOrEqual(3);
    const folder = (p: string) => p.split("/")[0];
    let pairs = 0;
    let same = 0;
    for (const c of map.clusters as { notes: string[] }[]) {
      // No cluster swallows the vault: a topic, not a chain of everything.
      expect(c.notes.length).toBeLessThan(15);
      for (let a = 0; a < c.notes.length; a++)
        for (let b = a + 1; b < c.notes.length; b++) {
          pairs++;
          if (folder(c.notes[a]!) === folder(c.notes[b]!)) same++;
        }
    }
    // The folders are the topics here (a fact of the files): most grouped pairs share one.
    expect(same / pairs).toBeGreaterThan(0.6);
    const importers = (map.clusters as { notes: string[] }[]).filter((c) => c.notes.filter((n) => n.startsWith("Import notes/")).length >= 2);
    expect(importers.length).toBeGreaterThan(0);
  }, 120_000);

  test("a higher threshold groups fewer notes; 0.9 in find_duplicates still means near-duplicate", async () => {
    const count = async (threshold: number) => (((await v.s.call("topic_map", { threshold, max_notes: 1000, limit: 500 })).clusters as { size: number }[]).reduce((n, c) => n + c.size, 0));
    const loose = await count(0.8);
    const dflt = await count(0.85);
    const tight = await count(0.95);
    expect(loose).toBeGreaterThanOrEqual(dflt);
    expect(dflt).toBeGreaterThan(tight);
    const identical = await v.s.call("topic_map", { threshold: 1 });
    expect(identical.total).toBe(0);
    // find_duplicates keeps its own scale: every pair it reports shares most of its words.
    for (const p of await v.s.call("find_duplicates", {})) expect(wordOverlap(readFileSync(join(v.root, p.pathA), "utf8"), readFileSync(join(v.root, p.pathB), "utf8"))).toBeGreaterThan(0.7);
  }, 120_000);
});
