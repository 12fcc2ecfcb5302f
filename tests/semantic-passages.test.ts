// What is embedded: not what a reader never sees, nor what tells no note from
// another (comments, Obsidian's %% … %% and HTML's <!-- … -->, across lines;
// template boilerplate, a section repeated word for word in BOILERPLATE_NOTES
// notes or more: lib/semantic/boilerplate.ts). Through the real server with the
// in-test OpenAI-wire model; the stored passages are read from the vault's own
// index.db.
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BOILERPLATE_NOTES } from "../lib/semantic/boilerplate";
import { splitPassages } from "../lib/semantic/passages";
import { withEnv } from "./helpers/env";
import { startModelServer, type ModelServer } from "./helpers/model-server";
import { startTestServer, tempDir, waitFor, type TestServer } from "./helpers/server";

const dirs: string[] = [];
const servers: ModelServer[] = [];
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const m of servers) await m.stop().catch(() => {});
});

test("comments across lines are not embedded; comment marks in code are text; an unclosed comment hides the rest", () => {
  const body = [
    "Visible start.",
    "<!--",
    "## Hidden heading",
    "hidden words",
    "-->",
    "%%",
    "secret plan",
    "%%",
    "Use `%%` to start a comment, and ``<!--`` for HTML.",
    "Inline %%gone%% and kept.",
    "```",
    "%% inside a fence is code",
    "```",
    "After the fence. <!-- opened here",
    "still hidden",
    "--> back again.",
    "Last %% never closed",
    "# Not a heading either",
    "gone too",
  ].join("\n");
  const text = splitPassages(body, 2000, "Note")
    .map((p) => p.text)
    .join("\n");
  for (const seen of ["Visible start.", "Use %% to start a comment, and <!-- for HTML.", "Inline and kept.", "%% inside a fence is code", "After the fence.", "back again.", "Last"]) expect(text).toContain(seen);
  for (const hidden of ["Hidden heading", "hidden words", "secret plan", "gone", "opened here", "still hidden", "never closed", "Not a heading", "gone too"]) expect(text).not.toContain(hidden);
  expect(splitPassages(body, 2000, "Note").some((p) => p.heading === "Hidden heading")).toBe(false);
});

test("a hostile line of backtick runs and comment marks is split in one pass (was quadratic: 100 s for 1 MB)", () => {
  // Runs of 1,413 down to 1 backticks, none closed by a run of its own length, then a comment.
  const runs: string[] = [];
  for (let n = 1, len = 0; len < 1_000_000; n++, len += n + 1) runs.push(`${"`".repeat(n)}x`);
  const line = `start ${runs.reverse().join("")} visible %% hidden %% tail`;
  const ps = splitPassages(line, 500, "Hostile");
  const text = ps.map((p) => p.text).join(" ");
  expect(text).toContain("visible");
  expect(text).toContain("tail");
  expect(text).not.toContain("hidden");
});

const FOOTER = "%% Template footer %%\n\n# This note in GitHub\n\n[Edit In GitHub](https://example.com/edit) | [Copy this note](https://example.com/raw) | [Download this vault](https://example.com/zip)\n";

function topic(i: number): string {
  const words = ["glacier", "volcano", "harbour", "orchard", "lighthouse", "meadow", "canyon", "reef"];
  return `${words[i % words.length]} number ${i}`;
}

/** Every other note says enough that its footer would be a passage of its own; in the others it would be merged with the text. */
const more = (i: number) => (i % 2 ? "" : Array.from({ length: 4 }, (_, k) => `Observation ${k} of the ${topic(i)}: notes on weather, soil and the walk there, entry ${i * 10 + k}.`).join(" "));

/** `withFooter` notes that end with the same footer, and a note that is nothing but the footer. */
function makeVault(withFooter: number): string {
  const root = tempDir();
  dirs.push(root);
  mkdirSync(join(root, "Notes"));
  for (let i = 0; i < withFooter; i++) writeFileSync(join(root, "Notes", `Note ${i}.md`), `# Note ${i}\n\nThis note describes the ${topic(i)} and what grows near item${i * 13}. ${more(i)}\n\n${FOOTER}`);
  writeFileSync(join(root, "Only footer.md"), FOOTER);
  return root;
}

function env(m: ModelServer) {
  return { LETTUCE_EMBED_PROVIDER: "openai", LETTUCE_EMBED_BASE_URL: m.url, LETTUCE_EMBED_MODEL: "text-embedding-3-small", LETTUCE_LLM_PROVIDER: "none", LETTUCE_EMBED_SYNC_LIMIT: "100000", LETTUCE_PASSAGE_CHARS: "500" };
}

/** Every stored passage (path, ord, text), read from the vault's own index.db. */
function storedPassages(root: string): { path: string; ord: number; text: string }[] {
  const db = new Database(join(root, ".lettuce", "index.db"), { readonly: true });
  try {
    return db.query("SELECT n.path AS path, p.ord AS ord, p.text AS text FROM passages p JOIN notes n ON n.id = p.note_id ORDER BY n.path, p.ord").all() as { path: string; ord: number; text: string }[];
  } finally {
    db.close();
  }
}

/** The paths of the stored passages that hold the footer's words. */
const footerPassages = (root: string) => storedPassages(root).filter((r) => r.text.includes("Download this vault")).map((r) => r.path);

/** The server on `root` with the in-test model, every note embedded first; `fn` runs with it. */
async function withEmbedded(root: string, fn: (s: TestServer) => Promise<void>, watch = false): Promise<void> {
  const m = startModelServer();
  servers.push(m);
  await withEnv(env(m), async () => {
    const s = await startTestServer({ root, watch });
    try {
      await s.call("reindex_embeddings");
      await fn(s);
    } finally {
      await s.close();
    }
  });
}

test("a footer in BOILERPLATE_NOTES notes is not embedded, stays out of notes added later, and a note of nothing else keeps it", async () => {
  const root = makeVault(BOILERPLATE_NOTES);
  await withEmbedded(
    root,
    async (s) => {
      // Only the note that is nothing but the footer has it among its passages.
      expect(footerPassages(root)).toEqual(["Only footer.md"]);
      // A question in the footer's own words finds the note made of it first, and no other note by its footer.
      const hits = await s.call("semantic_search", { query: "Edit In GitHub Copy this note Download this vault", limit: 5 });
      expect(hits.items[0].path).toBe("Only footer.md");
      for (const it of hits.items.slice(1)) expect(it.snippet).not.toContain("Download this vault");
      // The content still answers, and keyword search still sees the footer.
      expect((await s.call("semantic_search", { query: "the canyon number 6", hybrid: true, limit: 3 })).items[0].path).toBe("Notes/Note 6.md");
      expect((await s.call("search", { query: "\"Download this vault\"", limit: 1 })).total).toBe(BOILERPLATE_NOTES + 1);
      // A note added later with the same footer leaves it out too (the set is kept).
      writeFileSync(join(root, "Later.md"), `# Later\n\nA later note about the ${topic(3)}. ${more(3)}\n\n${FOOTER}`);
      await waitFor(async () => (await s.call("search", { query: "later", limit: 1 })).total > 0, { what: "the watcher to index Later.md" });
      expect((await s.call("reindex_embeddings")).notes).toBe(1);
      expect(footerPassages(root)).toEqual(["Only footer.md"]);
    },
    true,
  );
}, 120_000);

test("a footer in fewer notes than that is embedded as any passage is", async () => {
  const root = makeVault(BOILERPLATE_NOTES - 2);
  await withEmbedded(root, async () => expect(footerPassages(root).length).toBe(BOILERPLATE_NOTES - 1));
}, 120_000);
