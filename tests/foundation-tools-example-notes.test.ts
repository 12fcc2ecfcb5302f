// The read tools on examples/vault, part 1: vault info, notes, outlines,
// links and backlinks, through the real HTTP server and the SDK client. The
// vault is small and hand-written, so expectations are exact.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ALL_NOTES, ISOLATED } from "./helpers/example-vault";
import { offloaded } from "../lib/offload/offloaded";
import { copyVault, EXAMPLE_VAULT, startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const paths = (items: { path: string }[]) => items.map((i) => i.path);

describe("get_vault_info", () => {
  test("root, counts, AGENTS.md brief, immutable prefixes, capabilities", async () => {
    const info = await s.call("get_vault_info");
    expect(info.root).toBe(s.root);
    expect(info.noteCount).toBe(21);
    expect(typeof info.indexedAt).toBe("string");
    expect(Number.isNaN(Date.parse(info.indexedAt))).toBe(false);
    expect(info.agentsFile).toBe(readFileSync(join(EXAMPLE_VAULT, "AGENTS.md"), "utf8"));
    expect(info.immutablePaths).toEqual(["sources/"]);
    expect(info.capabilities).toMatchObject({ hasIndexCatalog: true, proposeOnly: false });
    expect(typeof info.capabilities.embeddings).toBe("boolean");
    expect(typeof info.capabilities.llm).toBe("boolean");
    expect(info.liveness).toBeDefined();
    expect(info.indexing).toMatchObject({ state: "ready" });
  });

  test("proposeOnly and readOnly follow the token's scope", async () => {
    expect((await s.call("get_vault_info", {}, "propose")).capabilities).toMatchObject({ proposeOnly: true, readOnly: false });
    expect((await s.call("get_vault_info", {}, "read")).capabilities).toMatchObject({ proposeOnly: false, readOnly: true });
    expect((await s.call("get_vault_info", {}, "write")).capabilities).toMatchObject({ proposeOnly: false, readOnly: false });
  });
});

describe("list_notes", () => {
  test("whole vault, sorted by path, with summaries", async () => {
    const res = await s.call("list_notes", { limit: 100 });
    expect(res.total).toBe(21);
    expect(paths(res.items)).toEqual(ALL_NOTES);
    const lettuce = res.items.find((i: any) => i.path === "Projects/Lettuce.md");
    const st = statSync(join(s.root, "Projects/Lettuce.md"));
    expect(lettuce).toEqual({
      path: "Projects/Lettuce.md",
      name: "Lettuce",
      title: "Lettuce",
      tags: expect.arrayContaining(["project", "lettuce", "area/dev"]),
      modified: st.mtime.toISOString(),
      size: st.size,
    });
  });

  test("list_notes and notes_by_tag sort in a read worker, not on the request thread", async () => {
    const notePage = offloaded.notePage;
    const asked: unknown[] = [];
    offloaded.notePage = (vault, of, limit, offset, signal) => (asked.push(of), notePage(vault, of, limit, offset, signal));
    try {
      expect((await s.call("list_notes", { path: "Projects" })).total).toBeGreaterThan(0);
      expect((await s.call("notes_by_tag", { tag: "#Project" })).total).toBeGreaterThan(0);
      expect(asked).toEqual([{ folder: "Projects", recursive: true }, { tag: "project" }]);
    } finally {
      offloaded.notePage = notePage;
    }
  });

  test("default page size is 50; limit/offset page through every note once", async () => {
    const first = await s.call("list_notes");
    expect(first).toMatchObject({ total: 21, offset: 0, limit: 50 });
    const seen: string[] = [];
    for (let offset = 0; offset < 21; offset += 5) {
      const page = await s.call("list_notes", { limit: 5, offset });
      expect(page).toMatchObject({ total: 21, offset, limit: 5 });
      expect(page.items.length).toBe(Math.min(5, 21 - offset));
      seen.push(...paths(page.items));
    }
    expect(seen).toEqual(ALL_NOTES);
    expect((await s.call("list_notes", { offset: 21 })).items).toEqual([]);
    // The spec sets no maximum: a limit past ours is clamped (the answer says which), not refused.
    expect(await s.call("list_notes", { limit: 1_000_000 })).toMatchObject({ total: 21, limit: 1000 });
  });

  test("titles: frontmatter title, else first H1, else file name", async () => {
    const res = await s.call("list_notes", { limit: 100 });
    const title = (p: string) => res.items.find((i: any) => i.path === p).title;
    expect(title("Concepts/Wikilinks.md")).toBe("Wikilinks in Lettuce");
    expect(title("Inbox/quick-thought.md")).toBe("quick-thought");
    expect(title("sources/Ink and Switch - Local-first software.md")).toBe("Local-first software: you own your data, in spite of the cloud");
    expect(title("AGENTS.md")).toBe("Agent Guide");
  });

  test("folder filter, recursive and not", async () => {
    expect(paths((await s.call("list_notes", { path: "Projects" })).items)).toEqual([
      "Projects/2026/Lettuce Roadmap 2026.md",
      "Projects/2026/Q1 Retro.md",
      "Projects/Lettuce.md",
    ]);
    expect(paths((await s.call("list_notes", { path: "Projects/", recursive: false })).items)).toEqual(["Projects/Lettuce.md"]);
    expect(paths((await s.call("list_notes", { path: "Projects/2026" })).items)).toEqual([
      "Projects/2026/Lettuce Roadmap 2026.md",
      "Projects/2026/Q1 Retro.md",
    ]);
    const root = await s.call("list_notes", { recursive: false });
    expect(paths(root.items)).toEqual(["AGENTS.md", "index.md", "log.md"]);
    expect(root.total).toBe(3);
    const garden = await s.call("list_notes", { path: "Garden" });
    expect(garden.total).toBe(4);
    // "Garden" must not match a sibling that merely starts with the same letters.
    expect(paths((await s.call("list_notes", { path: "Gard" })).items)).toEqual([]);
    expect((await s.call("list_notes", { path: "No Such Folder" })).total).toBe(0);
  });

  test("tags on a summary: frontmatter list, frontmatter string, inline", async () => {
    const res = await s.call("list_notes", { path: "Garden", limit: 10 });
    const tags = (p: string) => res.items.find((i: any) => i.path === p).tags;
    expect(tags("Garden/Garden Plan.md").sort()).toEqual(["area/garden", "gardening"]);
    expect(tags("Garden/Compost.md").sort()).toEqual(["area/garden", "gardening", "gardenning"]);
  });
});

describe("read_note", () => {
  test("content, hash, frontmatter, tags and stat match the file", async () => {
    const p = "Projects/Lettuce.md";
    const n = await s.call("read_note", { path: p });
    const content = readFileSync(join(s.root, p), "utf8");
    const st = statSync(join(s.root, p));
    expect(n.path).toBe(p);
    expect(n.name).toBe("Lettuce");
    expect(n.title).toBe("Lettuce");
    expect(n.content).toBe(content);
    expect(n.hash).toBe(createHash("sha256").update(content).digest("hex"));
    expect(n.frontmatter).toEqual({ title: "Lettuce", aliases: ["Lettuce Server", "Project Lettuce"], tags: ["project", "lettuce"] });
    expect([...n.tags].sort()).toEqual(["area/dev", "lettuce", "project"]);
    expect(n.stat.size).toBe(st.size);
    expect(n.stat.modified).toBe(st.mtime.toISOString());
    expect(Number.isNaN(Date.parse(n.stat.created))).toBe(false);
  });

  // A save the watcher has not indexed yet (the test server here has no watcher at all): the content came from
  // the disk and the title, tags and links from the index, so one answer described two texts (the sync audit).
  test("title, tags, frontmatter and links describe the content returned, even before the save is indexed", async () => {
    const p = "Inbox/read-probe.md";
    await s.call("write_note", { path: p, content: "---\ntags: [draft]\n---\n# Old title\n\nSee [[Lettuce]].\n" });
    writeFileSync(join(s.root, p), "---\ntags: [final]\n---\n# New title\n\nSee [[Compost]].\n");
    const n = await s.call("read_note", { path: p });
    expect(n.content).toContain("# New title");
    expect(n.title).toBe("New title");
    expect(n.tags).toEqual(["final"]);
    expect(n.frontmatter).toEqual({ tags: ["final"] });
    expect(n.outgoingLinks.map((l: any) => l.resolvedPath)).toEqual(["Garden/Compost.md"]);
  });

  test("stat.created stays when the note is saved again by rename (an agent's write, most editors)", async () => {
    await s.call("write_note", { path: "Inbox/created-probe.md", content: "# Probe\n" });
    const first = (await s.call("read_note", { path: "Inbox/created-probe.md" })).stat.created;
    await Bun.sleep(50);
    await s.call("write_note", { path: "Inbox/created-probe.md", content: "# Probe\n\nagain\n", overwrite: true });
    const again = await s.call("read_note", { path: "Inbox/created-probe.md" });
    expect(again.stat.created).toBe(first);
    expect(Date.parse(again.stat.modified)).toBeGreaterThan(Date.parse(first));
  });

  test("stat.created survives a rebuild of the index for another format (an upgrade)", async () => {
    const { Database } = await import("bun:sqlite");
    const root = copyVault();
    const t = await startTestServer({ root });
    let first: string;
    try {
      await t.call("write_note", { path: "Inbox/upgrade-probe.md", content: "# Probe\n" });
      first = (await t.call("read_note", { path: "Inbox/upgrade-probe.md" })).stat.created;
      await Bun.sleep(50);
      await t.call("write_note", { path: "Inbox/upgrade-probe.md", content: "# Probe\n\nagain\n", overwrite: true });
    } finally {
      await t.close();
    }
    // What an older Lettuce's index looks like to this one: another format, rebuilt from the notes, whose
    // files were born at their last save.
    const db = new Database(join(root, ".lettuce/index.db"));
    // The closed server's checkpoint thread may still be finishing its last checkpoint (a loaded machine).
    db.exec("PRAGMA busy_timeout = 5000");
    db.query("UPDATE meta SET value = 'older' WHERE key = 'format'").run();
    db.close();
    const again = await startTestServer({ root });
    try {
      expect((await again.call("read_note", { path: "Inbox/upgrade-probe.md" })).stat.created).toBe(first);
      expect(again.vault.indexDb.query("SELECT name FROM sqlite_master WHERE name = 'carried_ctime'").get()).toBeNull();
    } finally {
      await again.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("outgoingLinks carry target, kind and resolvedPath (alias, embed, block links)", async () => {
    const n = await s.call("read_note", { path: "Projects/Lettuce.md" });
    expect(n.outgoingLinks).toEqual([
      { target: "MCP", kind: "wikilink", resolvedPath: "Concepts/Model Context Protocol.md" },
      { target: "Lettuce Varieties", kind: "wikilink", resolvedPath: "Garden/Lettuce Varieties.md" },
      { target: "assets/diagram.png", kind: "wikilink", resolvedPath: "assets/diagram.png" },
      { target: "Wikilinks", kind: "wikilink", resolvedPath: "Concepts/Wikilinks.md" },
      { target: "Local First", kind: "wikilink", resolvedPath: "Concepts/Local First.md" },
      { target: "Lettuce Roadmap 2026", kind: "wikilink", resolvedPath: "Projects/2026/Lettuce Roadmap 2026.md" },
      { target: "Q1 Retro", kind: "wikilink", resolvedPath: "Projects/2026/Q1 Retro.md" },
    ]);
  });

  test("tags: frontmatter plus inline, never the ones in code, URLs or colours", async () => {
    const n = await s.call("read_note", { path: "Concepts/Tags.md" });
    expect([...n.tags].sort()).toEqual(["area/dev", "concept", "syntax"]);
  });

  test("a note with no frontmatter and no heading", async () => {
    const n = await s.call("read_note", { path: "Inbox/quick-thought.md" });
    expect(n.frontmatter).toEqual({});
    expect(n.title).toBe("quick-thought");
    expect([...n.tags].sort()).toEqual(["idea", "inbox"]);
    expect(n.outgoingLinks[0]).toEqual({ target: "Nonexistent Idea", kind: "wikilink", resolvedPath: null });
  });

  test("frontmatter title beats the H1", async () => {
    const n = await s.call("read_note", { path: "sources/Ink and Switch - Local-first software.md" });
    expect(n.title).toBe("Local-first software: you own your data, in spite of the cloud");
    expect(n.frontmatter.author).toBe("Martin Kleppmann, Adam Wiggins, Peter van Hardenberg, Mark McGranaghan");
  });

  test("lookup forgives a missing .md and letter case", async () => {
    expect((await s.call("read_note", { path: "Projects/Lettuce" })).path).toBe("Projects/Lettuce.md");
    expect((await s.call("read_note", { path: "projects/lettuce.md" })).path).toBe("Projects/Lettuce.md");
  });
});

describe("read_outline", () => {
  test("levels, titles and anchor slugs (accents kept, & dropped)", async () => {
    expect(await s.call("read_outline", { path: "Projects/2026/Q1 Retro.md" })).toEqual([
      { level: 1, title: "Q1 Retro", id: "q1-retro" },
      { level: 2, title: "What went well", id: "what-went-well" },
      { level: 2, title: "What didn't", id: "what-didnt" },
      { level: 2, title: "Çözüm & Next steps", id: "çözüm--next-steps" },
    ]);
  });

  test("nested levels; '#' lines inside fenced code are not headings", async () => {
    expect(await s.call("read_outline", { path: "Concepts/Wikilinks.md" })).toEqual([
      { level: 1, title: "Wikilinks in Lettuce", id: "wikilinks-in-lettuce" },
      { level: 2, title: "Forms we support", id: "forms-we-support" },
      { level: 2, title: "Edge cases", id: "edge-cases" },
      { level: 3, title: "Pipes in tables", id: "pipes-in-tables" },
      { level: 3, title: "Links that go nowhere", id: "links-that-go-nowhere" },
    ]);
    const tags = await s.call("read_outline", { path: "Concepts/Tags.md" });
    expect(tags.map((h: any) => h.title)).toEqual(["Tags", "What is not a tag", "Conventions"]);
  });

  test("a note without headings has an empty outline", async () => {
    expect(await s.call("read_outline", { path: "Inbox/quick-thought.md" })).toEqual([]);
  });
});

describe("list_outgoing_links", () => {
  const out = async (path: string) => (await s.call("list_outgoing_links", { path })).items as any[];

  test("alias link, display text, embed of an image, block link", async () => {
    const links = await out("Projects/Lettuce.md");
    expect(links.length).toBe(7);
    expect(links[0]).toMatchObject({ target: "MCP", kind: "wikilink", displayText: null, heading: null, line: 13, resolvedPath: "Concepts/Model Context Protocol.md" });
    expect(links[1]).toMatchObject({ target: "Lettuce Varieties", displayText: "lettuce seeds", resolvedPath: "Garden/Lettuce Varieties.md" });
    expect(links.find((l) => l.target === "assets/diagram.png")).toMatchObject({ kind: "wikilink", resolvedPath: "assets/diagram.png", embed: true, line: 19 });
    expect(links.find((l) => l.target === "Local First")).toMatchObject({ resolvedPath: "Concepts/Local First.md", heading: null, block: "offline-first", line: 29 });
  });

  test("heading link and note embed", async () => {
    const links = await out("Concepts/Wikilinks.md");
    expect(links).toEqual([
      expect.objectContaining({ target: "Tags", displayText: null, heading: null, resolvedPath: "Concepts/Tags.md" }),
      expect.objectContaining({ target: "Local First", displayText: "the local-first idea", resolvedPath: "Concepts/Local First.md" }),
      expect.objectContaining({ target: "Lettuce", heading: "Architecture", resolvedPath: "Projects/Lettuce.md", line: 15 }),
      expect.objectContaining({ target: "Garden Plan", embed: true, resolvedPath: "Garden/Garden Plan.md", line: 19 }),
    ]);
  });

  test("escaped pipe inside a table, heading with accents", async () => {
    const links = await out("Projects/2026/Lettuce Roadmap 2026.md");
    expect(links.find((l) => l.line === 13)).toMatchObject({ target: "Wikilinks", displayText: "link parsing", kind: "wikilink", resolvedPath: "Concepts/Wikilinks.md" });
    expect(links.find((l) => l.line === 20)).toMatchObject({ target: "Q1 Retro", heading: "Çözüm & Next steps", resolvedPath: "Projects/2026/Q1 Retro.md" });
  });

  test("markdown links to a note (percent-encoded) and to an attachment", async () => {
    const links = await out("index.md");
    const md = links.filter((l) => l.kind === "markdown");
    expect(md).toEqual([
      expect.objectContaining({ target: "Concepts/Local First.md", displayText: "Local-first principles", resolvedPath: "Concepts/Local First.md", line: 22 }),
      expect.objectContaining({ target: "assets/data.csv", displayText: "Watering data (CSV)", resolvedPath: "assets/data.csv", line: 41 }),
    ]);
    expect(links.find((l) => l.target === "Garden/Compost")).toMatchObject({ displayText: "Compost", resolvedPath: "Garden/Compost.md" });
    expect(links.every((l) => l.resolvedPath !== null)).toBe(true);
  });

  test("broken link keeps resolvedPath null; a link by alias resolves", async () => {
    const links = await out("Inbox/quick-thought.md");
    expect(links[0]).toMatchObject({ target: "Nonexistent Idea", line: 1, resolvedPath: null });
    expect(links[1]).toMatchObject({ target: "Wikilinks", resolvedPath: "Concepts/Wikilinks.md" });
    const meeting = await out("Inbox/Meeting Notes 2026-03-02.md");
    expect(meeting.find((l) => l.target === "Local-First Software")).toMatchObject({ resolvedPath: "Concepts/Local First.md" });
  });

  test("pagination", async () => {
    const page = await s.call("list_outgoing_links", { path: "index.md", limit: 3, offset: 3 });
    const all = await out("index.md");
    expect(page.total).toBe(all.length);
    expect(page.items).toEqual(all.slice(3, 6));
  });
});

describe("list_backlinks", () => {
  test("every link in, with the link text used (alias, markdown, block links)", async () => {
    const res = await s.call("list_backlinks", { path: "Concepts/Local First.md" });
    expect(res.total).toBe(5);
    const by = Object.fromEntries(res.items.map((i: any) => [i.sourcePath, i]));
    expect(Object.keys(by).sort()).toEqual(["Concepts/Wikilinks.md", "Inbox/Meeting Notes 2026-03-02.md", "Projects/Lettuce.md", "index.md", "log.md"]);
    expect(by["Concepts/Wikilinks.md"]).toMatchObject({ sourceName: "Wikilinks", displayText: "the local-first idea" });
    expect(by["index.md"]).toMatchObject({ sourceName: "index", displayText: "Local-first principles" });
    expect(by["Projects/Lettuce.md"].displayText).toBeNull();
  });

  test("two links from one line to one note stay two rows, told apart by their heading (issue 14, part 7)", async () => {
    const root = copyVault();
    mkdirSync(join(root, "Inbox"), { recursive: true });
    writeFileSync(join(root, "Inbox/Two links.md"), "# Two links\n\nSee [[Local First]] and [[Local First#Why]] on one line.\n");
    const t = await startTestServer({ root });
    try {
      const res = await t.call("list_backlinks", { path: "Concepts/Local First.md", limit: 100 });
      const rows = res.items.filter((i: any) => i.sourcePath === "Inbox/Two links.md");
      expect(rows.map((r: any) => r.heading).sort()).toEqual([null, "Why"].sort());
      expect(new Set(rows.map((r: any) => JSON.stringify(r))).size).toBe(2);
    } finally {
      await t.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("links by alias count as backlinks", async () => {
    const res = await s.call("list_backlinks", { path: "Concepts/Model Context Protocol.md" });
    expect(res.items.map((i: any) => i.sourcePath).sort()).toEqual(["Projects/2026/Lettuce Roadmap 2026.md", "Projects/Lettuce.md", "index.md", "log.md"]);
  });

  test("embeds count; orphans have none", async () => {
    const plan = await s.call("list_backlinks", { path: "Garden/Garden Plan.md" });
    expect(plan.items.map((i: any) => i.sourcePath).sort()).toEqual(["Concepts/Wikilinks.md", "Garden/Compost.md", "Garden/Lettuce Varieties.md", "index.md"]);
    for (const p of ISOLATED) expect(await s.call("list_backlinks", { path: p })).toMatchObject({ items: [], total: 0 });
  });

  test("pagination", async () => {
    const all = (await s.call("list_backlinks", { path: "Projects/Lettuce.md", limit: 100 })).items;
    expect(all.length).toBeGreaterThan(4);
    const page = await s.call("list_backlinks", { path: "Projects/Lettuce.md", limit: 2, offset: 2 });
    expect(page.total).toBe(all.length);
    expect(page.items).toEqual(all.slice(2, 4));
  });
});

describe("link resolution with clashing names (its own vault copy)", () => {
  test("exact path, then name with the shortest path winning (case-insensitive), then aliases", async () => {
    const root = copyVault();
    for (const [p, text] of Object.entries({
      "Z/Compost.md": "# Another compost\n",
      "Archive/Deep/Menemen.md": "# Old menemen\n",
      "Z/MCP.md": "# A note literally named MCP\n",
      "Inbox/Lowercase.md": "See [[garden plan]] and [[GARDEN/compost]] and [[Salad leaves]].\n",
    })) {
      mkdirSync(join(root, p, ".."), { recursive: true });
      writeFileSync(join(root, p), text);
    }
    const t = await startTestServer({ root });
    try {
      const resolved = async (path: string) =>
        Object.fromEntries((await t.call("list_outgoing_links", { path })).items.map((l: any) => [l.target, l.resolvedPath]));
      // Both "Compost" notes match by name: the shorter path wins.
      expect((await resolved("Recipes/Menemen.md")).Compost).toBe("Z/Compost.md");
      expect((await resolved("Garden/Compost.md")).Menemen).toBe("Recipes/Menemen.md");
      // A folder-qualified link picks the note at that path.
      expect((await resolved("index.md"))["Garden/Compost"]).toBe("Garden/Compost.md");
      // A note's own name beats another note's alias.
      expect((await resolved("Projects/Lettuce.md")).MCP).toBe("Z/MCP.md");
      expect(await resolved("Inbox/Lowercase.md")).toEqual({
        "garden plan": "Garden/Garden Plan.md",
        "GARDEN/compost": "Garden/Compost.md",
        "Salad leaves": "Garden/Lettuce Varieties.md",
      });
    } finally {
      await t.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
