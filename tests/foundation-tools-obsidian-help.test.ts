// Every read tool on a real vault: a temp copy of the Obsidian Help vault
// (173 notes, 130 attachments). Expectations are computed here from the files
// themselves (directory walks, regexes, YAML), never taken from the server.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { startHttpServer } from "../lib/server/serve";
import { createToken } from "../lib/store/tokens";
import { VaultContext } from "../lib/vault-context";
import { connectClient, copyVault, OBSIDIAN_HELP, payload, startTestServer, type TestServer } from "./helpers/server";
import { atxHeadings, countWikilinksTo, inlineTags, readNoteText, stripCode, walkVault, words, type NoteText, type VaultWalk } from "./helpers/vault-facts";
import { describeWithCorpus } from "./helpers/corpora";

describeWithCorpus("obsidian-help/en", "read tools on Obsidian Help", () => {
  let s: TestServer;
  let walk: VaultWalk;
  let notes: Map<string, NoteText>;
  beforeAll(async () => {
    s = await startTestServer({ src: OBSIDIAN_HELP });
    walk = walkVault(s.root);
    notes = new Map(walk.notes.map((p) => [p, readNoteText(s.root, p)]));
  });
  afterAll(() => s?.close());

  const paths = (items: { path: string }[]) => items.map((i) => i.path);
  const baseName = (p: string) => p.slice(p.lastIndexOf("/") + 1).replace(/\.md$/i, "");

  /** Every item of a paginated tool, fetched page by page. */
  async function allPages(tool: string, args: Record<string, unknown> = {}, limit = 50): Promise<{ items: any[]; total: number }> {
    const items: any[] = [];
    let total = -1;
    for (let offset = 0; total === -1 || offset < total; offset += limit) {
      const page = await s.call(tool, { ...args, limit, offset });
      expect(page.offset).toBe(offset);
      if (total !== -1) expect(page.total).toBe(total);
      total = page.total;
      items.push(...page.items);
      if (page.items.length === 0) break;
    }
    return { items, total };
  }

  describe("the vault as a whole", () => {
    test("the copy is the real corpus (173 notes)", () => {
      expect(walk.notes.length).toBe(173);
    });

    test("get_vault_info counts what is on disk", async () => {
      const info = await s.call("get_vault_info");
      expect(info.noteCount).toBe(walk.notes.length);
      expect(info.root).toBe(s.root);
      expect(info.agentsFile).toBe(existsSync(join(s.root, "AGENTS.md")) ? readFileSync(join(s.root, "AGENTS.md"), "utf8") : null);
      expect(info.capabilities.hasIndexCatalog).toBe(existsSync(join(s.root, "index.md")));
      expect(info.indexing.state).toBe("ready");
      expect(typeof info.indexedAt).toBe("string");
    });

    test("list_folders is the directory walk", async () => {
      expect(await s.call("list_folders")).toEqual(walk.folders);
    });
  });

  describe("list_notes", () => {
    test("pages through every note, in path order", async () => {
      const { items, total } = await allPages("list_notes");
      expect(total).toBe(walk.notes.length);
      expect(paths(items)).toEqual(walk.notes);
      for (const it of items.slice(0, 20)) {
        const st = statSync(join(s.root, it.path));
        expect(it.size).toBe(st.size);
        expect(it.name).toBe(baseName(it.path));
      }
    });

    test("folder filter, recursive and not", async () => {
      const under = (folder: string) => walk.notes.filter((p) => p.startsWith(folder + "/"));
      const direct = (folder: string) => under(folder).filter((p) => !p.slice(folder.length + 1).includes("/"));
      for (const folder of ["Bases", "Plugins", "Linking notes and files"]) {
        expect(paths((await allPages("list_notes", { path: folder })).items)).toEqual(under(folder));
        expect(paths((await allPages("list_notes", { path: folder, recursive: false })).items)).toEqual(direct(folder));
      }
      // Bases has a sub-folder, so the two differ there.
      expect(under("Bases").length).toBeGreaterThan(direct("Bases").length);
      const rootOnly = walk.notes.filter((p) => !p.includes("/"));
      expect(paths((await allPages("list_notes", { recursive: false })).items)).toEqual(rootOnly);
    });

    test("titles: first H1, else the file name (no frontmatter titles here)", async () => {
      const { items } = await allPages("list_notes", {}, 200);
      for (const it of items) {
        const n = notes.get(it.path)!;
        const h1 = atxHeadings(n.body).find(([level]) => level === 1)?.[1];
        const expected = typeof n.frontmatter.title === "string" ? n.frontmatter.title : h1 && !/[`*_[\]=~]/.test(h1) ? h1 : h1 ? undefined : baseName(it.path);
        if (expected !== undefined) expect(it.title, it.path).toBe(expected);
      }
    });
  });

  describe("read_note and read_outline", () => {
    const sample = () => walk.notes.filter((_, i) => i % 11 === 0);

    test("content, hash and frontmatter equal the file's", async () => {
      for (const p of sample()) {
        const n = await s.call("read_note", { path: p });
        const content = readFileSync(join(s.root, p), "utf8");
        expect(n.content).toBe(content);
        expect(n.hash).toBe(createHash("sha256").update(content).digest("hex"));
        expect(n.frontmatter).toEqual(notes.get(p)!.frontmatter);
        expect(n.stat.size).toBe(statSync(join(s.root, p)).size);
        expect(n.outgoingLinks.length).toBe((await s.call("list_outgoing_links", { path: p, limit: 1000 })).total);
      }
    });

    test("outlines list every ATX heading outside code, in order", async () => {
      let compared = 0;
      for (const p of walk.notes) {
        const mine = atxHeadings(notes.get(p)!.body);
        const outline = await s.call("read_outline", { path: p });
        expect(outline.map((h: any) => h.level), p).toEqual(mine.map(([l]) => l));
        // Compare the text where the heading has no inline markup to render away.
        mine.forEach(([, text], i) => {
          if (!/[`*_[\]=~<>\\]/.test(text)) {
            expect(outline[i].title, p).toBe(text);
            compared++;
          }
        });
      }
      expect(compared).toBeGreaterThan(500);
    });

    test("heading ids are GitHub-style anchor slugs, unique within a note", async () => {
      const slug = (t: string) => t.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
      let compared = 0;
      for (const p of walk.notes.slice(0, 80)) {
        const outline = await s.call("read_outline", { path: p });
        const ids = outline.map((h: any) => h.id);
        expect(new Set(ids).size, p).toBe(ids.length);
        const seen = new Map<string, number>();
        for (const h of outline) {
          const base = slug(h.title);
          const n = seen.get(base) ?? 0;
          seen.set(base, n + 1);
          if (/^[A-Za-z0-9 ,.'?:()-]+$/.test(h.title)) {
            expect(h.id, `${p}: ${h.title}`).toBe(n ? `${base}-${n}` : base);
            compared++;
          }
        }
      }
      expect(compared).toBeGreaterThan(100);
    });
  });

  describe("links", () => {
    test("every wikilink and embed outside code is listed as an outgoing link", async () => {
      for (const p of walk.notes) {
        const expected = [...stripCode(notes.get(p)!.body).matchAll(/!?\[\[([^\[\]\n]+?)\]\]/g)].length;
        const { items, total } = await s.call("list_outgoing_links", { path: p, limit: 1000 });
        expect(items.filter((l: any) => l.kind === "wikilink").length, p).toBe(expected);
        expect(total).toBe(items.length);
      }
    });

    test("backlinks of 'Internal links' equal a regex count of links to it", async () => {
      const target = "Linking notes and files/Internal links.md";
      let count = 0;
      const sources = new Set<string>();
      for (const [p, n] of notes) {
        if (p === target) continue;
        const c = countWikilinksTo(n.body, ["Internal links", "Linking notes and files/Internal links"]);
        count += c;
        if (c) sources.add(p);
      }
      expect(count).toBeGreaterThan(20);
      const { items, total } = await allPages("list_backlinks", { path: target }, 7);
      expect(total).toBe(count);
      expect(new Set(items.map((i: any) => i.sourcePath))).toEqual(sources);
      for (const i of items) expect(i.sourceName).toBe(baseName(i.sourcePath));
    });

    test("a unique note name resolves from anywhere in the vault", async () => {
      const names = new Map<string, string[]>();
      for (const p of walk.notes) names.set(baseName(p).toLowerCase(), [...(names.get(baseName(p).toLowerCase()) ?? []), p]);
      const { items } = await s.call("list_outgoing_links", { path: "Home.md", limit: 1000 });
      let checked = 0;
      for (const l of items.filter((x: any) => x.kind === "wikilink")) {
        const hits = names.get(l.target.replace(/\.md$/i, "").toLowerCase());
        if (!l.target.includes("/") && hits?.length === 1) {
          expect(l.resolvedPath, l.target).toBe(hits[0]);
          checked++;
        }
      }
      expect(checked).toBeGreaterThan(10);
    });

    test("link_graph depth 1 is Home's out-links plus the notes linking to it; depth 2 grows; depth 9 is capped at 5", async () => {
      const g1 = await s.call("link_graph", { path: "Home.md" });
      const out = (await s.call("list_outgoing_links", { path: "Home.md", limit: 1000 })).items
        .map((l: any) => l.resolvedPath)
        .filter((p: string | null) => p && p.endsWith(".md") && p !== "Home.md");
      const inbound = (await allPages("list_backlinks", { path: "Home.md" })).items.map((i: any) => i.sourcePath);
      const aliases: string[] = notes.get("Home.md")!.frontmatter.aliases ?? [];
      const linking = [...notes].filter(([p, n]) => p !== "Home.md" && countWikilinksTo(n.body, ["Home", ...aliases]) > 0).map(([p]) => p);
      expect(new Set(inbound)).toEqual(new Set(linking));
      expect(g1.nodes.map((n: any) => n.path).sort()).toEqual([...new Set(["Home.md", ...out, ...inbound])].sort());
      const g2 = await s.call("link_graph", { path: "Home.md", depth: 2 });
      const n1 = new Set(g1.nodes.map((n: any) => n.path));
      const n2 = new Set(g2.nodes.map((n: any) => n.path));
      expect(n2.size).toBeGreaterThan(n1.size);
      for (const p of n1) expect(n2.has(p)).toBe(true);
      for (const e of g2.edges) expect(n2.has(e.from) && n2.has(e.to)).toBe(true);
      for (const p of n2) expect(walk.notes).toContain(p as string);
      const g9 = await s.call("link_graph", { path: "Home.md", depth: 9 });
      expect(g9.depth).toBe(5);
      expect(g9.nodes.length).toBeGreaterThanOrEqual(n2.size);
      expect(g9.nodes.length).toBeLessThanOrEqual(walk.notes.length);
    });
  });

  describe("tags", () => {
    test("list_tags equals the inline #tags found outside code, with note counts", async () => {
      const expected = new Map<string, number>();
      for (const n of notes.values()) {
        const fm = n.frontmatter.tags;
        const tags = new Set([...inlineTags(n.body), ...(Array.isArray(fm) ? fm : typeof fm === "string" ? fm.split(/[,\s]+/) : []).map((t: string) => String(t).toLowerCase())]);
        for (const t of tags) if (t) expected.set(t, (expected.get(t) ?? 0) + 1);
      }
      expect(expected.size).toBeGreaterThan(3);
      const { items, total } = await allPages("list_tags", {}, 100);
      expect(total).toBe(expected.size);
      expect(new Map(items.map((i: any) => [i.tag.toLowerCase(), i.count]))).toEqual(expected);
    });

    test("notes_by_tag finds the notes carrying a tag", async () => {
      const { items } = await s.call("list_tags");
      const tag = items[0].tag;
      const carrying = [...notes].filter(([, n]) => inlineTags(n.body).includes(tag.toLowerCase())).map(([p]) => p);
      expect(paths((await s.call("notes_by_tag", { tag })).items)).toEqual(carrying);
    });
  });

  describe("search", () => {
    // The documented semantics, evaluated over the raw files: title (H1 or file name) and aliases, and the body.
    type Doc = { path: string; title: string[]; body: string[] };
    let docs: Doc[];
    beforeAll(() => {
      docs = [...notes.values()].map((n) => {
        const h1 = atxHeadings(n.body).find(([l]) => l === 1)?.[1];
        const aliases = Array.isArray(n.frontmatter.aliases) ? n.frontmatter.aliases.join(" ") : "";
        return { path: n.path, title: words(`${h1 ?? baseName(n.path)} ${aliases}`), body: words(n.body) };
      });
    });
    const hasPrefix = (d: Doc, w: string) => d.title.some((t) => t.startsWith(w)) || d.body.some((t) => t.startsWith(w));
    const hasPhrase = (d: Doc, ws: string[]) =>
      [d.title, d.body].some((col) => col.some((_, i) => ws.every((w, j) => col[i + j] === w)));
    const expect_ = (pred: (d: Doc) => boolean) => docs.filter(pred).map((d) => d.path).sort();
    const found = async (query: string) => {
      const res = await s.call("search", { query, limit: 200 });
      expect(res.total).toBe(res.items.length);
      const scores = res.items.map((i: any) => i.score);
      expect(scores).toEqual([...scores].sort((a: number, b: number) => a - b));
      return paths(res.items).sort();
    };

    test("prefix AND", async () => {
      const e = expect_((d) => hasPrefix(d, "canva") && hasPrefix(d, "json"));
      expect(e.length).toBeGreaterThan(0);
      expect(await found("canva json")).toEqual(e);
      expect(await found("sync")).toEqual(expect_((d) => hasPrefix(d, "sync")));
    });

    test("phrase", async () => {
      const e = expect_((d) => hasPhrase(d, ["command", "palette"]));
      expect(e.length).toBeGreaterThan(3);
      expect(await found('"command palette"')).toEqual(e);
    });

    test("OR, NOT and -word", async () => {
      expect(await found("canvas OR bases")).toEqual(expect_((d) => hasPrefix(d, "canvas") || hasPrefix(d, "bases")));
      const notSync = expect_((d) => hasPrefix(d, "plugin") && !hasPrefix(d, "sync"));
      expect(notSync.length).toBeGreaterThan(0);
      expect(await found("plugin -sync")).toEqual(notSync);
      expect(await found("plugin NOT sync")).toEqual(notSync);
    });

    test("accents are ignored both ways", async () => {
      const e = expect_((d) => hasPrefix(d, "maxime") && hasPrefix(d, "cote"));
      expect(e).toEqual(["Obsidian/Credits.md"]);
      expect(await found("maxime cote")).toEqual(e);
      expect(await found("maxime côté")).toEqual(e);
    });

    test("title matches rank first", async () => {
      const res = await s.call("search", { query: "canvas", limit: 5 });
      expect(res.items[0].path).toBe("Plugins/Canvas.md");
    });
  });

  describe("attachments", () => {
    test("list_attachments is every non-Markdown file, with sizes and MIME types", async () => {
      const { items, total } = await allPages("list_attachments", {}, 100);
      expect(total).toBe(walk.attachments.length);
      expect(paths(items)).toEqual(walk.attachments);
      for (const it of items) {
        expect(it.size).toBe(statSync(join(s.root, it.path)).size);
        const ext: string = it.path.slice(it.path.lastIndexOf(".") + 1).toLowerCase();
        const mime: Record<string, string> = { png: "image/png", svg: "image/svg+xml", jpg: "image/jpeg", jpeg: "image/jpeg" };
        expect(it.mimeType, it.path).toBe(mime[ext] ?? "application/octet-stream");
      }
      const sub = await allPages("list_attachments", { path: "Attachments/icons" });
      expect(paths(sub.items)).toEqual(walk.attachments.filter((p) => p.startsWith("Attachments/icons/")));
    });

    test("read_attachment round-trips images byte for byte", async () => {
      const png = walk.attachments.find((p) => p.endsWith(".png"))!;
      const svg = walk.attachments.find((p) => p.endsWith(".svg"))!;
      for (const p of [png, svg]) {
        const a = await s.call("read_attachment", { path: p });
        expect(Buffer.from(a.base64, "base64").equals(readFileSync(join(s.root, p)))).toBe(true);
        expect(a.size).toBe(statSync(join(s.root, p)).size);
      }
    });
  });

  test("initialize, tools/list and get_vault_info answer while the first scan runs", async () => {
    const root = copyVault(OBSIDIAN_HELP);
    const vault = VaultContext.open(root);
    const running = startHttpServer(vault, { port: 0, host: "127.0.0.1" });
    const token = createToken(vault.stateDb, "early", "read").token;
    try {
      const first = await connectClient(running.url, token);
      const before = payload(await first.callTool({ name: "get_vault_info", arguments: {} }));
      await first.close();
      expect(before.indexedAt).toBeNull();
      expect(before.indexing.state).toBe("starting");
      const scan = vault.indexer.fullScan();
      const c = await connectClient(running.url, token); // initialize
      expect((await c.listTools()).tools.length).toBeGreaterThan(5);
      const during = payload(await c.callTool({ name: "get_vault_info", arguments: {} }));
      // Whatever moment the call lands at, indexedAt is set only once the index is current.
      expect(during.indexedAt === null).toBe(during.indexing.state !== "ready");
      await scan;
      const after = payload(await c.callTool({ name: "get_vault_info", arguments: {} }));
      expect(after).toMatchObject({ noteCount: 173, indexing: { state: "ready", done: 173, total: 173 } });
      expect(typeof after.indexedAt).toBe("string");
      await c.close();
    } finally {
      await running.stop();
      vault.close();
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);
});
