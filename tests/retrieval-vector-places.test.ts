// The built-in model's hybrid keeps places 4 and 5 for the vector list's two
// best notes when the keyword side is unsure (RankingParams.vectorSlot in
// lib/semantic/fusion.ts; docs/retrieval-experiments.md, "eleventh pass"), through the real
// server with the real model. A slice of Obsidian Help where a paraphrased
// question (one of bench/data's tuning questions) has its page second in the
// vector list and far down the keyword list: fusion alone buries it (25th with
// one place), the second place brings it back.
import { expect, test } from "bun:test";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { keywordRank } from "../lib/semantic/keyword";
import { describeWithCorpus, OBSIDIAN_HELP } from "./helpers/corpora";
import { useEmbeddedVault } from "./helpers/builtin-model";

const FOLDERS = ["Plugins", "Obsidian Web Clipper", "Linking notes and files", "Contributing to Obsidian", "Licenses and payment"];
const QUESTION = "show my outline full screen as a talk for an audience";

describeWithCorpus("obsidian-help", "the vector list's two best notes keep places 4 and 5 (built-in model)", () => {
  const v = useEmbeddedVault("lettuce-places-oh-", (root) => {
    for (const f of FOLDERS) cpSync(join(OBSIDIAN_HELP, f), join(root, f), { recursive: true, filter: (p) => !/\.(png|jpe?g|svg|gif|webp|mp4)$/i.test(p) });
  });
  const paths = async (hybrid: boolean, limit: number) => ((await v.s.call("semantic_search", { query: QUESTION, hybrid, limit })).items as { path: string }[]).map((h) => h.path);

  test("a paraphrase whose page is the vector list's second is in the hybrid top 5, with the vector list's first", async () => {
    const hybrid = await paths(true, 5);
    const vector = await paths(false, 5);
    // What the model and the keyword side see in this slice (facts of the model and the files, checked so that the test means something).
    expect(vector[1]).toBe("Plugins/Slides.md");
    const db = v.s.vault.indexDb;
    const pathOf = (id: number) => (db.query("SELECT path FROM notes WHERE id = ?").get(id) as { path: string }).path;
    const keyword = keywordRank(db, QUESTION, 20).map((h) => pathOf(h.noteId));
    expect(keyword).not.toContain("Plugins/Slides.md");
    // Its place is the 5th: the places are kept below the fused top 3, not above; the vector list's first is in the top 5 too.
    expect(hybrid[4]).toBe("Plugins/Slides.md");
    expect(hybrid).toContain(vector[0]!);
    expect(hybrid.slice(0, 3)).not.toContain("Plugins/Slides.md");
  }, 120_000);
});
