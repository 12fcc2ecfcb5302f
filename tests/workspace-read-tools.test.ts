// search_workspace, list_workspace, get_page, get_pages and get_related_pages
// through the real server, on a copy of the Obsidian Help vault plus notes
// this test adds (tests/helpers/workspace-notes.ts). Expectations come from
// the files: directory listings, the text of each note, simple regexes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { describeWithCorpus } from "./helpers/corpora";
import { copyVault, OBSIDIAN_HELP, startTestServer, tempDir, type TestServer } from "./helpers/server";
import { atxHeadings, countWikilinksTo, readNoteText, walkVault } from "./helpers/vault-facts";
import { addWorkspaceNotes, foldText, titleFromText, WORKSPACE_NOTES } from "./helpers/workspace-notes";

describeWithCorpus("obsidian-help/en", "workspace read tools on Obsidian Help", () => {
  let s: TestServer;
  let root: string;
  beforeAll(async () => {
    root = copyVault(OBSIDIAN_HELP);
    addWorkspaceNotes(root);
    s = await startTestServer({ root });
  });
  afterAll(async () => {
    await s?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const text = (p: string) => readFileSync(join(root, p), "utf8");
  /** Does every query word occur (folded) as the start of a word of `hay`? */
  const allWordsPrefix = (hay: string, q: string) => {
    const ws = foldText(hay).match(/[\p{L}\p{N}]+/gu) ?? [];
    return (foldText(q).match(/[\p{L}\p{N}]+/gu) ?? []).every((w) => ws.some((x) => x.startsWith(w)));
  };

  describe("search_workspace", () => {
    test("title matches come first, then content matches; each holds every word as a prefix", async () => {
      const { results } = await s.call("search_workspace", { query: "graph view", limit: 10 });
      expect(results[0].id).toBe("Plugins/Graph view.md");
      expect(results.length).toBeLessThanOrEqual(10);
      let seenContent = false;
      for (const r of results) {
        expect(existsSync(join(root, r.id))).toBe(true);
        if (r.matchedOn === "title") {
          expect(seenContent).toBe(false);
          expect(r.snippet).toBe("");
        } else {
          seenContent = true;
          expect(r.matchedOn).toBe("content");
          expect(allWordsPrefix(text(r.id), "graph view")).toBe(true);
          expect(r.snippet.length).toBeGreaterThan(0);
        }
        expect(r.type).toBe("page");
        expect(r.breadcrumb).toEqual(r.id.split("/").slice(0, -1));
        if (r.id.includes("/")) expect(r.parentId).toBe(r.id.slice(0, r.id.lastIndexOf("/")));
        else expect(r.parentId).toBeUndefined();
      }
      expect(seenContent).toBe(true);
    });

    test("function words do not narrow a query: 'the graph view' finds what 'graph view' finds", async () => {
      const a = await s.call("search_workspace", { query: "graph view" });
      const b = await s.call("search_workspace", { query: "how is the graph view" });
      expect(b.results.map((r: any) => r.id)).toEqual(a.results.map((r: any) => r.id));
    });

    test("prefix words are AND'd: every content result holds both words", async () => {
      const { results } = await s.call("search_workspace", { query: "sync encrypt", limit: 20 });
      expect(results.length).toBeGreaterThan(0);
      for (const r of results) expect(allWordsPrefix(text(r.id), "sync encrypt")).toBe(true);
    });

    test("accents and Turkish dotted/dotless i: cozum, istanbul, ISTANBUL, isik", async () => {
      const cases: [string, string][] = [
        ["cozum", "Ofis/Çözüm Notları.md"],
        ["istanbul", "Ofis/İstanbul Ofisi.md"],
        ["ISTANBUL", "Ofis/İstanbul Ofisi.md"],
        ["isik ayar", "Ofis/Işık Ayarları.md"],
        ["çözüm notları", "Ofis/Çözüm Notları.md"],
      ];
      for (const [q, want] of cases) {
        const { results } = await s.call("search_workspace", { query: q });
        expect(results[0]?.id).toBe(want);
        expect(results[0].matchedOn).toBe("title");
        expect(results[0].title).toBe(titleFromText(want, WORKSPACE_NOTES[want]!));
      }
    });

    test("Chinese: a word inside a title or a sentence is found through the index's n-grams", async () => {
      const inTitle = await s.call("search_workspace", { query: "指南" });
      expect(inTitle.fallback).toBeUndefined();
      expect(inTitle.results[0].id).toBe("中文/用户指南.md");
      expect(inTitle.results[0].matchedOn).toBe("title");
      const inBody = await s.call("search_workspace", { query: "同步设置" });
      expect(inBody.fallback).toBeUndefined();
      expect(inBody.results.map((r: any) => r.id)).toContain("中文/用户指南.md");
      const hit = inBody.results.find((r: any) => r.id === "中文/用户指南.md");
      expect(hit.matchedOn).toBe("content");
      expect(hit.snippet).toContain("同步设置");
    });

    test("short queries and fragments inside words fall back to substrings; every hit holds the fragment", async () => {
      for (const q of ["ph", "aph vi", "nchron"]) {
        const { results, fallback } = await s.call("search_workspace", { query: q, limit: 25 });
        expect(fallback).toBe("substring");
        expect(results.length).toBeGreaterThan(0);
        for (const r of results) {
          const hay = r.matchedOn === "title" ? foldText(r.title + "\n" + r.id) : text(r.id).toLowerCase();
          expect(hay).toContain(q.toLowerCase());
        }
      }
      const graph = await s.call("search_workspace", { query: "aph vi" });
      expect(graph.results.map((r: any) => r.id)).toContain("Plugins/Graph view.md");
    });

    test("databases (.base files) are items of type database", async () => {
      const { results } = await s.call("search_workspace", { query: "reading list" });
      expect(results[0]).toMatchObject({ id: "Engineering/Reading list.base", type: "database", title: "Reading list", matchedOn: "title", breadcrumb: ["Engineering"], parentId: "Engineering" });
      // list_workspace gives a database its databaseId (its own id), as get_related_pages does.
      const listed = await s.call("list_workspace", { parentId: "Engineering" });
      expect(listed.items.find((i: any) => i.type === "database")).toMatchObject({ id: "Engineering/Reading list.base", databaseId: "Engineering/Reading list.base" });
      const tasks = await s.call("search_workspace", { query: "task" });
      expect(tasks.results.map((r: any) => r.id)).toContain("Tasks.base");
    });

    test("limit bounds the results; a query that matches nothing returns none", async () => {
      const { results } = await s.call("search_workspace", { query: "obsidian", limit: 3 });
      expect(results.length).toBe(3);
      // The spec gives no maximum: a limit past ours (100) is a full page, not a protocol error.
      expect((await s.call("search_workspace", { query: "obsidian", limit: 5000 })).results.length).toBe(100);
      const listed = await s.call("list_workspace", { parentId: "Plugins", limit: 100_000 });
      expect(listed.items.length).toBeGreaterThan(0);
      const none = await s.call("search_workspace", { query: "qqqzzzxxy" });
      expect(none.results).toEqual([]);
    });
  });

  describe("list_workspace", () => {
    /** What a folder holds, from the disk: folders first, then notes and .base files, each group by path. */
    const expectedItems = (folder: string) => {
      const ents = readdirSync(folder ? join(root, folder) : root, { withFileTypes: true }).filter((d) => !d.name.startsWith("."));
      const p = (n: string) => (folder ? `${folder}/${n}` : n);
      const folders = ents.filter((d) => d.isDirectory()).map((d) => p(d.name));
      const files = ents.filter((d) => d.isFile() && /\.(md|base)$/i.test(d.name)).map((d) => p(d.name));
      const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
      return [...folders.sort(byCodeUnit), ...files.sort(byCodeUnit)];
    };

    async function listAll(parentId: string | undefined, limit: number) {
      const items: any[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 1000; i++) {
        const page = await s.call("list_workspace", { ...(parentId ? { parentId } : {}), limit, ...(cursor ? { cursor } : {}) });
        expect(page.items.length).toBeLessThanOrEqual(limit);
        items.push(...page.items);
        if (!page.hasMore) {
          expect(page.nextCursor).toBeUndefined();
          return items;
        }
        cursor = page.nextCursor;
      }
      throw new Error("did not end");
    }

    test("the root, page by page, is the directory listing; types and titles from the files", async () => {
      const items = await listAll(undefined, 4);
      expect(items.map((i) => i.id)).toEqual(expectedItems(""));
      for (const i of items) {
        expect(i.parentId).toBeUndefined();
        if (i.id.endsWith(".md")) expect(i).toMatchObject({ type: "page", title: titleFromText(i.id, text(i.id)) });
        else if (i.id.endsWith(".base")) expect(i).toMatchObject({ type: "database", title: i.id.replace(/\.base$/, "") });
        else expect(i).toMatchObject({ type: "folder", title: i.id });
      }
    });

    test("a folder's items carry its id as parentId; hidden and symlinked entries are not listed", async () => {
      mkdirSync(join(root, "Plugins/.hidden"), { recursive: true });
      writeFileSync(join(root, "Plugins/.secret.md"), "# secret\n");
      symlinkSync("/etc", join(root, "Plugins/etc-link"));
      try {
        const items = await listAll("Plugins", 7);
        expect(items.map((i) => i.id)).toEqual(expectedItems("Plugins").filter((p) => !p.includes("etc-link")));
        for (const i of items) expect(i.parentId).toBe("Plugins");
        expect(items.some((i) => i.id.includes(".secret") || i.id.includes(".hidden") || i.id.includes("etc-link"))).toBe(false);
      } finally {
        rmSync(join(root, "Plugins/.hidden"), { recursive: true, force: true });
        rmSync(join(root, "Plugins/.secret.md"), { force: true });
        rmSync(join(root, "Plugins/etc-link"), { force: true });
      }
    });

    test("cursors stay correct while files are added and removed between pages", async () => {
      const before = expectedItems("Plugins");
      const first = await s.call("list_workspace", { parentId: "Plugins", limit: 10 });
      expect(first.hasMore).toBe(true);
      const seen = first.items.map((i: any) => i.id);
      const lastSeen = seen[seen.length - 1];
      // Between pages: one file sorting before the cursor, one after it, and one not-yet-listed file removed.
      const early = "Plugins/AAA early.md";
      const late = "Plugins/zzz late.md";
      const removed = before.find((p) => p > lastSeen && p !== late && p.endsWith(".md"))!;
      const removedText = text(removed);
      writeFileSync(join(root, early), "# early\n");
      writeFileSync(join(root, late), "# late\n");
      unlinkSync(join(root, removed));
      try {
        let cursor = first.nextCursor;
        const rest: string[] = [];
        while (cursor) {
          const page = await s.call("list_workspace", { parentId: "Plugins", limit: 10, cursor });
          rest.push(...page.items.map((i: any) => i.id));
          cursor = page.nextCursor;
        }
        const all = [...seen, ...rest];
        expect(new Set(all).size).toBe(all.length); // nothing repeated
        for (const p of before) if (p !== removed) expect(all).toContain(p); // nothing unchanged skipped
        expect(rest).toContain(late);
        expect(all).not.toContain(removed);
        expect(all).not.toContain(early); // it sorts before the cursor: the next pages do not go back
      } finally {
        unlinkSync(join(root, early));
        unlinkSync(join(root, late));
        writeFileSync(join(root, removed), removedText);
      }
    });

    test("a folder's index page lists its folder; a plain note has no children", async () => {
      const viaIndex = await listAll("Team/Team.md", 100);
      expect(viaIndex.map((i) => i.id)).toEqual(expectedItems("Team"));
      expect((await s.call("list_workspace", { parentId: "Team/Deploy checklist.md" })).items).toEqual([]);
    });

    test("bad cursors and parents get clear kinds", async () => {
      const forged = await s.callRaw("list_workspace", { cursor: "not-a-cursor" });
      expect(forged.isError).toBe(true);
      expect(forged.kind).toBe("invalid-input");
      const page = await s.call("list_workspace", { limit: 2 });
      const other = await s.callRaw("list_workspace", { parentId: "Plugins", cursor: page.nextCursor });
      expect(other.kind).toBe("invalid-input");
      for (const parentId of ["../", "/etc", ".obsidian", "Nope/Missing"]) {
        const r = await s.callRaw("list_workspace", { parentId });
        expect(r.isError).toBe(true);
        expect(["path-invalid", "note-not-found"]).toContain(r.kind);
      }
    });
  });

  describe("get_page and get_pages", () => {
    test("full: the body without frontmatter, the frontmatter as properties", async () => {
      for (const id of ["Plugins/Graph view.md", "Team/Old deploy checklist.md", "Ofis/Çözüm Notları.md"]) {
        const note = readNoteText(root, id);
        const page = await s.call("get_page", { pageId: id });
        expect(page).toMatchObject({ id, type: "page", title: titleFromText(id, text(id)) });
        expect(page.content.replace(/\r\n?/g, "\n")).toBe(note.body);
        expect(page.properties).toEqual(JSON.parse(JSON.stringify(note.frontmatter)));
        expect(page.mode).toBeUndefined();
      }
    });

    test("outline: every heading in order with its section's first line, much smaller, and the full size", async () => {
      const id = "Plugins/Graph view.md";
      const note = readNoteText(root, id);
      const page = await s.call("get_page", { pageId: id, mode: "outline" });
      expect(page.mode).toBe("outline");
      expect(page.fullContentChars).toBe(note.body.length);
      expect(page.content.length).toBeLessThan(note.body.length * 0.6);
      const lines = page.content.split("\n");
      const headingLines = lines.filter((l: string) => /^#{1,6} /.test(l));
      expect(headingLines).toEqual(atxHeadings(note.body).map(([lvl, t]) => `${"#".repeat(lvl)} ${t}`));
      // After "## Settings" comes the first line of that section as written in the file.
      const afterSettings = note.body.split("## Settings\n")[1]!.split("\n").find((l) => l.trim())!.trim();
      expect(lines[lines.indexOf("## Settings") + 1]).toBe(afterSettings);
    });

    test("databases and folders", async () => {
      const db = await s.call("get_page", { pageId: "Tasks.base" });
      expect(db).toMatchObject({ id: "Tasks.base", type: "database", title: "Tasks", content: WORKSPACE_NOTES["Tasks.base"] });
      const folder = await s.call("get_page", { pageId: "Ofis" });
      expect(folder.type).toBe("folder");
      for (const p of Object.keys(WORKSPACE_NOTES).filter((p) => p.startsWith("Ofis/"))) expect(folder.content).toContain(encodeURI(p));
    });

    test("get_pages classifies its pages as get_page does: a base's rows with their databaseId, other notes as pages", async () => {
      const ids = ["Engineering/Auth system.md", "Plugins/Graph view.md", "Engineering/Auth decisions.md", "Tasks.base"];
      const { results } = await s.call("get_pages", { pageIds: ids, mode: "outline" });
      const one = await Promise.all(ids.map((id) => s.call("get_page", { pageId: id, mode: "outline" })));
      const kind = (p: any) => [p.id, p.type, p.databaseId];
      expect(results.map((r: any) => kind(r.page))).toEqual(one.map(kind));
      expect(kind(results[0].page)).toEqual(["Engineering/Auth system.md", "database_row", "Engineering/Reading list.base"]);
      expect(results[1].page.type).toBe("page");
    });

    test("get_pages: one missing or invalid id never fails the call", async () => {
      const ids = ["Plugins/Graph view.md", "Missing/Nope.md", "../../etc/passwd", ".obsidian/app.json", "Plugins/Graph view", "Tasks.base"];
      const { results } = await s.call("get_pages", { pageIds: ids, mode: "outline" });
      expect(results.map((r: any) => r.id)).toEqual(ids);
      expect(results.map((r: any) => r.ok)).toEqual([true, false, false, false, true, true]);
      expect(results[1].kind).toBe("note-not-found");
      expect(results[2].kind).toBe("path-invalid");
      expect(results[3].kind).toBe("path-invalid");
      expect(results[4].page.id).toBe("Plugins/Graph view.md");
      for (const r of results.filter((r: any) => !r.ok)) expect(typeof r.error).toBe("string");
      // An empty or an over-long id is its entry's error too, not a protocol error for the batch.
      const odd = ["", "x".repeat(1001), "Tasks.base"];
      const oddResults = (await s.call("get_pages", { pageIds: odd })).results;
      expect(oddResults.map((r: any) => [r.ok, r.kind])).toEqual([[false, "path-invalid"], [false, "path-invalid"], [true, undefined]]);
      const tooMany = await s.rpc({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_pages", arguments: { pageIds: Array.from({ length: 51 }, (_, i) => `n${i}.md`) } } });
      expect(((await tooMany.json()) as any).error.code).toBe(-32602);
    });
  });

  describe("get_related_pages", () => {
    test("a note's parent, links and backlinks, from the files", async () => {
      const id = "Plugins/Graph view.md";
      const rel = await s.call("get_related_pages", { pageId: id });
      expect(rel.page).toEqual({ id, type: "page", title: "Graph view" });
      expect(rel.parent).toEqual({ id: "Plugins", type: "folder", title: "Plugins" });
      expect(rel.children).toEqual([]);
      expect(rel.siblings).toBeNull();
      // Backlinks: every note whose text has a wikilink to "Graph view" (by name), except the note itself.
      const walk = walkVault(root);
      const linking = walk.notes.filter((p) => p !== id && countWikilinksTo(readNoteText(root, p).body, ["Graph view", "Plugins/Graph view"]) > 0);
      const backIds = rel.backlinks.map((b: any) => b.id);
      for (const p of linking) expect(backIds).toContain(p);
      for (const b of rel.backlinks) expect(b.linkKind === "page_link" || b.linkKind === "child_block").toBe(true);
      // Outgoing: each is a note whose name the body links to.
      const body = readNoteText(root, id).body;
      for (const o of rel.outgoingLinks) {
        const name = o.id.slice(o.id.lastIndexOf("/") + 1).replace(/\.md$/, "");
        expect(countWikilinksTo(body, [name, o.id.replace(/\.md$/, "")]) + (body.includes(encodeURI(o.id)) ? 1 : 0)).toBeGreaterThan(0);
      }
      expect(rel.sources).toBeUndefined();
    });

    test("a folder's index page is the parent of its notes and lists the folder as children", async () => {
      const rel = await s.call("get_related_pages", { pageId: "Team/Deploy checklist.md" });
      expect(rel.parent).toMatchObject({ id: "Team/Team.md", type: "page", title: "Team" });
      // The parent is not repeated among backlinks (Team.md links to the checklist).
      expect(rel.backlinks.map((b: any) => b.id)).not.toContain("Team/Team.md");
      expect(rel.backlinks.map((b: any) => b.id)).toContain("Team/Release checklist.md");
      const idx = await s.call("get_related_pages", { pageId: "Team/Team.md" });
      const teamFiles = Object.keys(WORKSPACE_NOTES).filter((p) => p.startsWith("Team/") && p !== "Team/Team.md").sort();
      expect(idx.children.map((c: any) => c.id).sort()).toEqual(teamFiles);
      // Children are not repeated as outgoing links.
      expect(idx.outgoingLinks.map((o: any) => o.id)).not.toContain("Team/Deploy checklist.md");
      expect(idx.parent).toBeNull();
    });

    test("a note's sources as written", async () => {
      const rel = await s.call("get_related_pages", { pageId: "Engineering/Auth decisions.md" });
      expect(rel.sources).toEqual(parseYaml(WORKSPACE_NOTES["Engineering/Auth decisions.md"]!.split("---")[1]!).sources);
    });

    test("by resource: exact, folder and inside matches, closest first; anchors, ./, backslashes, case and absolute paths", async () => {
      const exact = await s.call("get_related_pages", { resource: "src/lib/auth/session.ts" });
      expect(exact.pages.map((p: any) => [p.id, p.match])).toEqual([
        ["Engineering/Auth decisions.md", "exact"],
        ["Engineering/Session gotchas.md", "exact"],
        ["Engineering/Auth system.md", "folder"],
      ]);
      expect(exact.total).toBe(3);
      expect(exact.pages[0].source).toBe("src/lib/auth/session.ts#L10-L40");
      expect(exact.pages[1].source).toBe("./src/lib/auth/session.ts:42");
      expect(exact.note).toBeUndefined();
      for (const variant of ["/home/me/code/repo/src/lib/auth/session.ts", "SRC\\Lib\\Auth\\Session.ts", "./src/lib/auth/session.ts#L3", "src/lib/auth/session.ts:7"]) {
        const r = await s.call("get_related_pages", { resource: variant });
        expect(r.pages.map((p: any) => p.id)).toEqual(exact.pages.map((p: any) => p.id));
      }
      const inside = await s.call("get_related_pages", { resource: "src/lib" });
      expect(inside.pages.map((p: any) => p.match)).toEqual(["inside", "inside", "inside"]);
      expect(inside.pages[0].id).toBe("Engineering/Auth system.md"); // src/lib/auth/ is closer to src/lib than a file inside it
      const win = await s.call("get_related_pages", { resource: "build/ci.yml" });
      expect(win.pages.map((p: any) => [p.id, p.match])).toEqual([["Engineering/Build notes.md", "exact"]]);
      const url = await s.call("get_related_pages", { resource: "https://example.com/rfc/6749" });
      expect(url.pages.map((p: any) => p.id)).toEqual(["Engineering/Auth decisions.md"]);
      const none = await s.call("get_related_pages", { resource: "src/other.ts" });
      expect(none).toEqual({ resource: "src/other.ts", pages: [], total: 0 });
    });

    test("pass exactly one of pageId and resource", async () => {
      expect((await s.callRaw("get_related_pages", {})).kind).toBe("invalid-input");
      expect((await s.callRaw("get_related_pages", { pageId: "Tasks.base", resource: "x" })).kind).toBe("invalid-input");
    });
  });
});

describe("get_related_pages on a vault that records no sources", () => {
  let s: TestServer;
  let root: string;
  beforeAll(async () => {
    root = tempDir();
    addWorkspaceNotes(root, { "A.md": "---\ntags: [x]\n---\n# A\n\nSee [[B]].\n", "B.md": "# B\n\nsource code is elsewhere\n" });
    s = await startTestServer({ root });
  });
  afterAll(async () => {
    await s?.close();
    rmSync(root, { recursive: true, force: true });
  });

  test("the answer carries a note saying the answer is unknown, not nothing", async () => {
    const r = await s.call("get_related_pages", { resource: "src/index.ts" });
    expect(r.pages).toEqual([]);
    expect(r.total).toBe(0);
    expect(r.note).toContain("unknown");
  });
});
