// The workspace tools know databases and their rows: a note that a `.base`
// file selects is a `database_row` everywhere (list_workspace, search_workspace,
// get_page, get_related_pages, get_changes_since), with its databaseId, the
// database as its parent and the other rows as its siblings.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
let garden: string[];
beforeAll(async () => {
  s = await startTestServer();
  writeFileSync(join(s.root, "Tasks.base"), 'filters:\n  and:\n    - file.inFolder("Garden")\nviews:\n  - type: table\n    name: Garden notes\n');
  await s.vault.indexer.update(["Tasks.base"]);
  garden = readdirSync(join(s.root, "Garden"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `Garden/${f}`)
    .sort();
});
afterAll(() => s?.close());

test("list_workspace: the rows a base selects are database_row items with its databaseId; other notes stay pages", async () => {
  const g = await s.call("list_workspace", { parentId: "Garden" });
  const notes = g.items.filter((i: any) => i.id.endsWith(".md"));
  expect(notes.map((i: any) => i.id).sort()).toEqual(garden);
  for (const i of notes) expect(i).toMatchObject({ type: "database_row", databaseId: "Tasks.base" });
  const r = await s.call("list_workspace", { parentId: "Recipes" });
  for (const i of r.items) expect(i.type).toBe("page");
  const root = await s.call("list_workspace", {});
  expect(root.items.find((i: any) => i.id === "Tasks.base")).toMatchObject({ type: "database", title: "Tasks" });
});

test("search_workspace: a row says so, with its database at the end of its breadcrumb", async () => {
  const { results } = await s.call("search_workspace", { query: "compost" });
  const hit = results.find((r: any) => r.id === "Garden/Compost.md");
  expect(hit).toMatchObject({ type: "database_row", databaseId: "Tasks.base", breadcrumb: ["Garden", "Tasks"] });
});

test("get_page and get_related_pages: the database is the row's parent, the other rows its siblings", async () => {
  expect(await s.call("get_page", { pageId: "Garden/Compost.md", mode: "outline" })).toMatchObject({ type: "database_row" });
  const rel = await s.call("get_related_pages", { pageId: "Garden/Compost.md" });
  expect(rel.parent).toMatchObject({ id: "Tasks.base", type: "database", databaseId: "Tasks.base" });
  expect(rel.siblings.total).toBe(garden.length - 1);
  expect(rel.siblings.items.map((i: any) => i.id).sort()).toEqual(garden.filter((p) => p !== "Garden/Compost.md"));
  const plain = await s.call("get_related_pages", { pageId: "Recipes/Menemen.md" });
  expect(plain.siblings).toBeNull();
});

test("query_database returns the same rows the workspace tools call database_row", async () => {
  const q = await s.call("query_database", { databaseId: "Tasks.base", limit: 100 });
  expect(q.rows.map((r: any) => r.id).sort()).toEqual(garden);
});

// A sync client, `git checkout` or `cp -p` can put a same-sized .base in place with its old mtime: the
// compiled base was cached by size and mtime, and answered with the old definition until a restart.
test("query_database sees a .base replaced by one of the same size and mtime", async () => {
  const abs = join(s.root, "Swapped.base");
  // The same size: the shorter folder's name padded with a comment.
  const def = (folder: string) => `filters:\n  and:\n    - file.inFolder("${folder}")\n#${"-".repeat(10 - folder.length)}\n`;
  expect(def("Garden").length).toBe(def("Recipes").length);
  writeFileSync(abs, def("Garden"));
  utimesSync(abs, 1_700_000_000, 1_700_000_000);
  await s.vault.indexer.update(["Swapped.base"]);
  const before = statSync(abs);
  expect((await s.call("query_database", { databaseId: "Swapped.base", limit: 100 })).rows.map((r: any) => r.id).sort()).toEqual(garden);
  writeFileSync(`${abs}.tmp`, def("Recipes"));
  utimesSync(`${abs}.tmp`, 1_700_000_000, 1_700_000_000);
  renameSync(`${abs}.tmp`, abs);
  await s.vault.indexer.update(["Swapped.base"]);
  expect(statSync(abs).size).toBe(before.size);
  expect(statSync(abs).mtimeMs).toBe(before.mtimeMs);
  const rows = (await s.call("query_database", { databaseId: "Swapped.base", limit: 100 })).rows.map((r: any) => r.id);
  expect(rows.length).toBeGreaterThan(0);
  for (const id of rows) expect(id.startsWith("Recipes/")).toBe(true);
});

// Which base each note is a row of is kept between calls (get_page asks on every call, and building
// it anew cost ~0.6 ms a call on a big vault); the kept answer must follow every change that moves a row.
test("get_page's row or page follows edits of the note and of the base, and the base's removal", async () => {
  const typeOf = async () => (await s.call("get_page", { pageId: "Pantry/Salt.md", mode: "outline" })).type;
  // Each change written and indexed, as the watcher would.
  const note = async (tags: string) => {
    writeFileSync(join(s.root, "Pantry/Salt.md"), `---\ntags: [${tags}]\n---\n# Salt\n\nCoarse and fine.\n`);
    await s.vault.indexer.update(["Pantry/Salt.md"]);
  };
  const base = async (filter: string | null) => {
    if (filter === null) rmSync(join(s.root, "Pantry.base"));
    else writeFileSync(join(s.root, "Pantry.base"), `filters:\n  and:\n    - ${filter}\n`);
    await s.vault.indexer.update(["Pantry.base"]);
  };
  mkdirSync(join(s.root, "Pantry"), { recursive: true });
  await note("spice");
  expect(await typeOf()).toBe("page");
  await base('file.hasTag("pantry")');
  expect(await typeOf()).toBe("page");
  await note("pantry");
  expect(await s.call("get_page", { pageId: "Pantry/Salt.md", mode: "outline" })).toMatchObject({ type: "database_row", databaseId: "Pantry.base" });
  await base('file.inFolder("Nowhere at all")');
  expect(await typeOf()).toBe("page");
  await base('file.inFolder("Pantry")');
  expect(await typeOf()).toBe("database_row");
  await base(null);
  expect(await typeOf()).toBe("page");
});
