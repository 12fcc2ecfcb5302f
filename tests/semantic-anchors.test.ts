// Anchor text (lib/semantic/anchors.ts): what other notes say beside their
// links to a note is a keyword field of that note's, through the real server
// with a real index, kept in step as the linking notes change, appear and go,
// and bounded for a note linked from one enormous line.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { keywordRank, syncStemmed } from "../lib/semantic/keyword";
import { retrieve } from "../lib/semantic/retrieve";
import { SemanticService } from "../lib/semantic/service";
import { startModelServer, type ModelServer } from "./helpers/model-server";
import { ringVault, startTestServer, tempDir, type TestServer } from "./helpers/server";

let model: ModelServer;
let s: TestServer;
let root: string;
const saved: Record<string, string | undefined> = {};

const FILLER = ["Gardening", "Recipes", "Travel", "Budget", "Reading list", "Music"];

beforeAll(async () => {
  model = startModelServer({ dim: 64 });
  const env = { LETTUCE_EMBED_PROVIDER: "openai", LETTUCE_EMBED_BASE_URL: model.url, LETTUCE_EMBED_MODEL: "hash-embed", LETTUCE_LLM_PROVIDER: "none" };
  for (const [k, v] of Object.entries(env)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  root = tempDir();
  mkdirSync(join(root, "Help"));
  // The page's own words never say "floating", "second" or "monitor": only the note that links to it does.
  writeFileSync(join(root, "Help", "Pop-out windows.md"), "# Pop-out windows\n\nDrag a tab out of the main window to open it in a new window of its own.\n");
  writeFileSync(join(root, "Help", "Workspaces.md"), "# Workspaces\n\nLayouts persist between sessions.\n\nTo keep notes floating on your second monitor, see [[Pop-out windows]].\n");
  for (const f of FILLER) writeFileSync(join(root, `${f}.md`), `# ${f}\n\nA few lines about ${f.toLowerCase()} and other plans for the year.\n`);
  s = await startTestServer({ root });
});

afterAll(async () => {
  await s?.close();
  await model?.stop();
  rmSync(root, { recursive: true, force: true });
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

const svc = () => SemanticService.for(s.vault);
async function keywordPaths(query: string): Promise<string[]> {
  return (await retrieve(svc(), { query, mode: "keyword", limit: 5 })).notes.map((n) => n.path);
}
const idOf = (path: string) => (s.vault.indexDb.query("SELECT id FROM notes WHERE path = ?").get(path) as { id: number }).id;

test("a page is found by the words another note uses beside its link, through semantic_search, and not by its own fields alone", async () => {
  await s.call("reindex_embeddings");
  const query = "floating on my second monitor";
  // The linking note itself has the words in its own text and comes first; the page comes right after.
  expect((await keywordPaths(query)).slice(0, 2)).toEqual(["Help/Workspaces.md", "Help/Pop-out windows.md"]);
  const hybrid = await s.call("semantic_search", { query, hybrid: true, limit: 3 });
  expect(hybrid.items.map((i: { path: string }) => i.path)).toContain("Help/Pop-out windows.md");
  // Without the anchor field the page's own text has none of the question's words.
  const own = keywordRank(s.vault.indexDb, query, 10, true, undefined, 0).map((h) => h.noteId);
  expect(own).not.toContain(idOf("Help/Pop-out windows.md"));
  expect(own).toContain(idOf("Help/Workspaces.md"));
});

test("the anchor follows the linking note: an edit that drops the link drops the words, a new linking note adds its own", async () => {
  writeFileSync(join(root, "Help", "Workspaces.md"), "# Workspaces\n\nLayouts persist between sessions.\n\nTo keep notes floating on your second monitor, drag them out.\n");
  await s.vault.indexer.fullScan();
  expect(await keywordPaths("floating second monitor")).not.toContain("Help/Pop-out windows.md");

  writeFileSync(join(root, "Desk.md"), "# Desk\n\nMy laptop lid stays shut; [[Pop-out windows|detached views]] live on the external display.\n");
  await s.vault.indexer.fullScan();
  const found = await keywordPaths("detached views on the external display");
  expect(found).toContain("Help/Pop-out windows.md");
});

test("a sync cut short finishes next time: a target marked for rebuilding gets its anchor row back", async () => {
  const db = s.vault.indexDb;
  const id = idOf("Help/Pop-out windows.md");
  // As a sync that stopped after reading the lines and before rebuilding would leave it.
  db.query("DELETE FROM fts_anchor WHERE rowid = ?").run(id);
  db.query("INSERT OR IGNORE INTO anchor_dirty(target_id) VALUES (?)").run(id);
  expect(keywordRank(db, "detached views external display", 10).map((h) => h.noteId)).not.toContain(id);
  await syncStemmed(db);
  expect(keywordRank(db, "detached views external display", 10).map((h) => h.noteId)).toContain(id);
  expect((db.query("SELECT count(*) AS n FROM anchor_dirty").get() as { n: number }).n).toBe(0);
});

test("a link written before its page exists counts once the page is made, and stops counting when the linking note goes", async () => {
  writeFileSync(join(root, "Safari.md"), "# Safari\n\nWe watched [[Zebra crossing]] as striped herds forded the river at dawn.\n");
  await s.vault.indexer.fullScan();
  expect(await keywordPaths("striped herds forded the river")).not.toContain("Zebra crossing.md");
  // The page appears later; the note that links to it does not change.
  writeFileSync(join(root, "Zebra crossing.md"), "# Zebra crossing\n\nNotes from the trip, day three.\n");
  await s.vault.indexer.fullScan();
  expect(await keywordPaths("striped herds forded the river")).toContain("Zebra crossing.md");

  unlinkSync(join(root, "Safari.md"));
  await s.vault.indexer.fullScan();
  expect(await keywordPaths("striped herds forded the river")).not.toContain("Zebra crossing.md");
  const left = s.vault.indexDb.query("SELECT count(*) AS n FROM anchor_lines WHERE target_id = ?").get(idOf("Zebra crossing.md")) as { n: number };
  expect(left.n).toBe(0);
});

test("hostile: a page linked from a 200 KB line and from 500 notes keeps a bounded anchor, and a search still answers", async () => {
  const filler = "lorem ipsum dolor sit amet ".repeat(8000);
  writeFileSync(join(root, "Wall.md"), `# Wall\n\n${filler}[[Budget]] quarterly spending plan ${filler}\n`);
  mkdirSync(join(root, "Many"));
  for (let i = 0; i < 500; i++) writeFileSync(join(root, "Many", `M${i}.md`), `# M${i}\n\nEntry ${i} on household accounts: see [[Budget]] for the monthly figure ${i}.\n`);
  await s.vault.indexer.fullScan();
  expect((await keywordPaths("quarterly spending plan"))[0]).toBe("Budget.md");
  const rows = s.vault.indexDb.query("SELECT text FROM anchor_lines WHERE target_id = ?").all(idOf("Budget.md")) as { text: string }[];
  expect(rows.length).toBe(501);
  // Each linking line is cut to the words around the link (100 characters either side).
  for (const r of rows) expect(r.text.length).toBeLessThanOrEqual(201);
});

test("hostile: a first sync over thousands of linked notes yields, so the server answers another caller before it ends", async () => {
  const dirs: string[] = [];
  const big = await startTestServer({ root: ringVault(3000, dirs) });
  try {
    let settled = false;
    const first = retrieve(SemanticService.for(big.vault), { query: "note links", mode: "keyword", limit: 5 }).finally(() => (settled = true));
    const listed = await big.call("list_notes", { limit: 1 });
    expect(listed.items.length).toBe(1);
    expect(settled).toBe(false);
    expect((await first).notes.length).toBe(5);
    // Every note of the ring is linked from the one before it.
    const rows = big.vault.indexDb.query("SELECT count(*) AS n FROM anchor_lines").get() as { n: number };
    expect(rows.n).toBe(3000);
  } finally {
    await big.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}, 60_000);
