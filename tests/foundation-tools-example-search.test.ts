// The read tools on examples/vault, part 2: search, tags, folders,
// attachments and the link graph, through the real HTTP server and the SDK
// client. The vault is small and hand-written, so expectations are exact.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ALL_NOTES, ISOLATED } from "./helpers/example-vault";
import { EXAMPLE_VAULT, startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const paths = (items: { path: string }[]) => items.map((i) => i.path);

describe("search", () => {
  const hits = (query: string, limit = 50) => s.call("search", { query, limit });
  const set = (res: any) => paths(res.items).sort();

  test("accent-insensitive: cozum finds Çözüm", async () => {
    const res = await hits("cozum");
    expect(set(res)).toEqual(["Projects/2026/Lettuce Roadmap 2026.md", "Projects/2026/Q1 Retro.md", "Projects/Lettuce.md"]);
    expect(res.total).toBe(3);
    expect(res.items[0]).toMatchObject({ path: expect.any(String), title: expect.any(String), snippet: expect.any(String), score: expect.any(Number) });
  });

  test("bare words are AND'd prefixes", async () => {
    expect(set(await hits("lett soup"))).toEqual(["Garden/Lettuce Varieties.md", "Recipes/Lettuce Soup.md", "index.md"]);
    expect(set(await hits("raised"))).toEqual(["Garden/Garden Plan.md", "Inbox/Meeting Notes 2026-03-02.md"]);
    expect(set(await hits("dri"))).toEqual(["Garden/Garden Plan.md"]);
  });

  test('"phrases", OR, NOT and -word', async () => {
    expect(set(await hits('"raised beds"'))).toEqual(["Garden/Garden Plan.md"]);
    expect(set(await hits('"beds raised"'))).toEqual([]);
    expect(set(await hits("menemen OR caesar"))).toEqual([
      "Garden/Compost.md",
      "Garden/Lettuce Varieties.md",
      "Recipes/Caesar Salad.md",
      "Recipes/Menemen.md",
      "index.md",
    ]);
    const compost = set(await hits("compost"));
    expect(compost).toContain("Recipes/Menemen.md");
    const without = compost.filter((p) => p !== "Recipes/Menemen.md" && p !== "Garden/Compost.md" && p !== "index.md");
    expect(set(await hits("compost -menemen"))).toEqual(without);
    expect(set(await hits("compost NOT menemen"))).toEqual(without);
  });

  test("best first: score (BM25 rank) ascending, title matches weigh more", async () => {
    const res = await hits("lettuce");
    expect(res.items.length).toBeGreaterThan(5);
    const scores = res.items.map((i: any) => i.score);
    expect(scores).toEqual([...scores].sort((a, b) => a - b));
    // Notes with "lettuce" in the title outrank notes that only mention it.
    const firstMentionOnly = res.items.findIndex((i: any) => !/lettuce/i.test(i.title));
    const lastTitled = res.items.map((i: any) => /lettuce/i.test(i.title)).lastIndexOf(true);
    expect(lastTitled).toBeLessThan(firstMentionOnly);
  });

  test("total counts every match; limit and offset page", async () => {
    const all = await hits("lettuce", 100);
    const page = await s.call("search", { query: "lettuce", limit: 3, offset: 3 });
    expect(page.total).toBe(all.total);
    expect(all.total).toBe(all.items.length);
    expect(paths(page.items)).toEqual(paths(all.items).slice(3, 6));
    expect(page).toMatchObject({ offset: 3, limit: 3 });
  });

  test("colons that are not column filters still search", async () => {
    expect(set(await hits("https://example.com"))).toEqual(["Concepts/Tags.md"]);
    expect(set(await hits("drip:"))).toEqual(["Garden/Garden Plan.md"]);
  });

  test("malformed queries return no rows, never an error", async () => {
    for (const q of ['"unclosed', "OR", "NOT", "-only", "title:x", "title:a", "(a", "a)", "*", "lettuce OR", "NOT lettuce", "", "   ", "NEAR(a b)"]) {
      const res: any = await s.callRaw("search", { query: q });
      expect(res.isError, q).toBeFalsy();
      expect(JSON.parse(res.content[0].text), q).toMatchObject({ items: [], total: 0 });
    }
  });
});

describe("tags", () => {
  test("list_tags: counts per tag, most used first; code, URLs and colours are not tags", async () => {
    const res = await s.call("list_tags");
    const counts = Object.fromEntries(res.items.map((i: any) => [i.tag, i.count]));
    expect(counts).toEqual({
      gardening: 6,
      "area/dev": 5,
      "area/garden": 4,
      concept: 4,
      "area/kitchen": 3,
      lettuce: 3,
      meta: 3,
      project: 3,
      recipe: 3,
      clipped: 2,
      inbox: 2,
      source: 2,
      syntax: 2,
      gardenning: 1,
      idea: 1,
      mcp: 1,
      meeting: 1,
      retro: 1,
      roadmap: 1,
      turkish: 1,
    });
    expect(res.total).toBe(20);
    const c = res.items.map((i: any) => i.count);
    expect(c).toEqual([...c].sort((a, b) => b - a));
    for (const not of ["not-a-tag", "section", "ff0000", "fff", "fenced-not-a-tag", "claude"]) expect(counts[not]).toBeUndefined();
  });

  test("list_tags pagination", async () => {
    const all = (await s.call("list_tags")).items;
    const page = await s.call("list_tags", { limit: 4, offset: 4 });
    expect(page.total).toBe(20);
    expect(page.items).toEqual(all.slice(4, 8));
  });

  test("list_tags follows a write (its ranking is cached per index generation)", async () => {
    const before = await s.call("list_tags", { limit: 1000 });
    expect(before.items.find((t: any) => t.tag === "fresh-tag")).toBeUndefined();
    const top = before.items[0];
    await s.call("write_note", { path: "Inbox/tag cache.md", content: `# Tag cache\n\n#fresh-tag #Fresh-Tag #${top.tag}\n` });
    const after = await s.call("list_tags", { limit: 1000 });
    expect(after.total).toBe(before.total + 1);
    expect(after.items.find((t: any) => t.tag === "fresh-tag" || t.tag === "Fresh-Tag")?.count).toBe(1);
    expect(after.items[0]).toEqual({ tag: top.tag, count: top.count + 1 });
    await s.call("delete_note", { path: "Inbox/tag cache.md" });
    expect(await s.call("list_tags", { limit: 1000 })).toEqual(before);
  });

  test("notes_by_tag: nested descendants included, case-insensitive, # optional", async () => {
    const area = await s.call("notes_by_tag", { tag: "area" });
    expect(area.total).toBe(12);
    const garden = await s.call("notes_by_tag", { tag: "area/garden" });
    expect(paths(garden.items)).toEqual(["Garden/Compost.md", "Garden/Frost Dates.md", "Garden/Garden Plan.md", "Garden/Lettuce Varieties.md"]);
    expect(paths((await s.call("notes_by_tag", { tag: "#Area/Garden" })).items)).toEqual(paths(garden.items));
    expect(paths(area.items)).toEqual(expect.arrayContaining(paths(garden.items)));
    const gardening = await s.call("notes_by_tag", { tag: "gardening" });
    expect(paths(gardening.items)).toEqual([
      "Garden/Compost.md",
      "Garden/Frost Dates.md",
      "Garden/Garden Plan.md",
      "Garden/Lettuce Varieties.md",
      "Recipes/Lettuce Soup.md",
      "sources/Growing Lettuce in Containers.md",
    ]);
    expect(gardening.items[0]).toMatchObject({ name: "Compost", title: "Compost", size: expect.any(Number), modified: expect.any(String) });
    // A tag is not a descendant of a tag that merely shares its first letters.
    expect((await s.call("notes_by_tag", { tag: "garden" })).total).toBe(0);
    expect((await s.call("notes_by_tag", { tag: "area/gar" })).total).toBe(0);
    expect(paths((await s.call("notes_by_tag", { tag: "gardenning" })).items)).toEqual(["Garden/Compost.md"]);
    const page = await s.call("notes_by_tag", { tag: "area", limit: 5, offset: 10 });
    expect(page).toMatchObject({ total: 12, offset: 10, limit: 5 });
    expect(paths(page.items)).toEqual(paths(area.items).slice(10));
  });
});

describe("folders and attachments", () => {
  test("list_folders: every folder, nested ones too", async () => {
    expect(await s.call("list_folders")).toEqual(["Concepts", "Garden", "Inbox", "Projects", "Projects/2026", "Recipes", "assets", "sources"]);
  });

  test("list_attachments: non-Markdown files with size and MIME type, folder filter", async () => {
    const png = statSync(join(EXAMPLE_VAULT, "assets/diagram.png")).size;
    const csv = statSync(join(EXAMPLE_VAULT, "assets/data.csv")).size;
    const res = await s.call("list_attachments");
    expect(res.items).toEqual([
      { path: "assets/data.csv", size: csv, mimeType: "text/csv" },
      { path: "assets/diagram.png", size: png, mimeType: "image/png" },
    ]);
    expect(res.total).toBe(2);
    expect((await s.call("list_attachments", { path: "assets" })).total).toBe(2);
    expect((await s.call("list_attachments", { path: "Projects" })).total).toBe(0);
    const page = await s.call("list_attachments", { limit: 1, offset: 1 });
    expect(page).toMatchObject({ total: 2, items: [{ path: "assets/diagram.png" }] });
  });

  test("read_attachment: base64 round-trips to the file's bytes", async () => {
    const a = await s.call("read_attachment", { path: "assets/diagram.png" });
    const bytes = readFileSync(join(EXAMPLE_VAULT, "assets/diagram.png"));
    expect(a).toMatchObject({ path: "assets/diagram.png", mimeType: "image/png", size: bytes.length });
    const back = Buffer.from(a.base64, "base64");
    expect(back.equals(bytes)).toBe(true);
    expect(back.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
    const csv = await s.call("read_attachment", { path: "assets/data.csv" });
    expect(Buffer.from(csv.base64, "base64").toString("utf8")).toBe(readFileSync(join(EXAMPLE_VAULT, "assets/data.csv"), "utf8"));
  });

  test("read_attachment view: an image as an MCP image part a model can see; anything else refused", async () => {
    const r: any = await s.callRaw("read_attachment", { path: "assets/diagram.png", view: true });
    const bytes = readFileSync(join(EXAMPLE_VAULT, "assets/diagram.png"));
    expect(r.isError).toBeUndefined();
    expect(r.content).toHaveLength(2);
    expect(JSON.parse(r.content[0].text)).toEqual({ path: "assets/diagram.png", mimeType: "image/png", size: bytes.length });
    expect(r.content[1]).toEqual({ type: "image", mimeType: "image/png", data: bytes.toString("base64") });
    const csv: any = await s.callRaw("read_attachment", { path: "assets/data.csv", view: true });
    expect(csv.kind).toBe("invalid-input");
  });

  test("read_attachment: a file over the 5 MB cap is refused with kind too-large", async () => {
    writeFileSync(join(s.root, "assets/huge.bin"), Buffer.alloc(5 * 1024 * 1024 + 1, 7));
    const res: any = await s.callRaw("read_attachment", { path: "assets/huge.bin" });
    expect(res.isError).toBe(true);
    expect(res.kind).toBe("too-large");
    expect(res.content[0].text).toMatch(/bytes/);
  });

  test("read_attachment: missing file and a note path are clear errors", async () => {
    const missing: any = await s.callRaw("read_attachment", { path: "assets/nope.png" });
    expect(missing).toMatchObject({ isError: true, kind: "attachment-not-found" });
    const note: any = await s.callRaw("read_attachment", { path: "index.md" });
    expect(note.isError).toBe(true);
    expect(typeof note.kind).toBe("string");
  });
});

describe("link_graph", () => {
  const nodeSet = (g: any) => g.nodes.map((n: any) => n.path).sort();
  const edgeSet = (g: any) => g.edges.map((e: any) => `${e.from} -> ${e.to}`).sort();

  test("depth 1 follows links out and backlinks in", async () => {
    const g = await s.call("link_graph", { path: "Garden/Compost.md" });
    expect(g.center).toBe("Garden/Compost.md");
    expect(g.depth).toBe(1);
    expect(nodeSet(g)).toEqual(["Garden/Compost.md", "Garden/Garden Plan.md", "Recipes/Menemen.md", "index.md"]);
    expect(g.nodes.find((n: any) => n.path === "Garden/Compost.md").name).toBe("Compost");
    expect(edgeSet(g)).toEqual([
      "Garden/Compost.md -> Garden/Garden Plan.md",
      "Garden/Compost.md -> Recipes/Menemen.md",
      "Garden/Garden Plan.md -> Garden/Compost.md",
      "Recipes/Menemen.md -> Garden/Compost.md",
      "index.md -> Garden/Compost.md",
    ]);
  });

  test("depth 2 reaches the neighbours' neighbours, notes only", async () => {
    const g = await s.call("link_graph", { path: "Garden/Compost.md", depth: 2 });
    expect(g.depth).toBe(2);
    const nodes = nodeSet(g);
    // Everything but the two isolated notes and the essay, which is three hops away (index → Local First → essay).
    expect(nodes).toEqual(ALL_NOTES.filter((p) => !ISOLATED.includes(p) && p !== "sources/Ink and Switch - Local-first software.md").sort());
    for (const e of g.edges) {
      expect(nodes).toContain(e.from);
      expect(nodes).toContain(e.to);
    }
    expect(edgeSet(g)).toContain("Concepts/Wikilinks.md -> Garden/Garden Plan.md");
  });

  test("depth is capped at 5", async () => {
    const g = await s.call("link_graph", { path: "Garden/Compost.md", depth: 9 });
    expect(g.depth).toBe(5);
    expect(nodeSet(g)).toEqual(ALL_NOTES.filter((p) => !ISOLATED.includes(p)).sort());
  });

  test("an orphan is a graph of one", async () => {
    const g = await s.call("link_graph", { path: "Garden/Frost Dates.md", depth: 3 });
    expect(g.nodes).toEqual([{ path: "Garden/Frost Dates.md", name: "Frost Dates" }]);
    expect(g.edges).toEqual([]);
  });
});
