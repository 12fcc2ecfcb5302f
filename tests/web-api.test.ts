// The web UI's data through the real server with a browser session: a note
// rendered (links resolved, embeds, callouts, frontmatter) and sanitised,
// attachments and what may not be served, the graph, proposals and reverts
// through the write path, health history, and live events.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { localDay } from "../lib/web/health-history";
import { offloaded } from "../lib/offload/offloaded";
import { withEnv } from "./helpers/env";
import { startModelServer } from "./helpers/model-server";
import { startTestServer, waitFor, type TestServer } from "./helpers/server";
import { loginSession, type WebSession } from "./web-helpers";

let s: TestServer;
let web: WebSession;
const file = (p: string) => readFileSync(join(s.root, p), "utf8");
const get = async (path: string) => {
  const res = await web.fetch(path);
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
};

/** Every .md file under the vault, skipping hidden folders: counted from the disk, not from the index. */
function notesOnDisk(dir: string, rel = ""): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(dir, rel))) {
    if (name.startsWith(".")) continue;
    const p = rel ? `${rel}/${name}` : name;
    if (statSync(join(dir, p)).isDirectory()) out.push(...notesOnDisk(dir, p));
    else if (name.endsWith(".md")) out.push(p);
  }
  return out;
}

const XSS = [
  "# Totally normal",
  "<script>window.__pwned = 1</script>",
  '<img src="x" onerror="window.__pwned = 2">',
  '[click](javascript:window.__pwned=3) [data](data:text/html,<script>alert(1)</script>)',
  '<a href="javascript:alert(1)">raw</a> <iframe src="https://evil.example"></iframe>',
  '<svg onload="alert(1)"><circle r="4"/></svg> <div style="background:url(https://evil.example/x)">styled</div>',
  '<form action="https://evil.example"><input name="q"></form> <object data="x"></object>',
  '<h2 id="app">clobber</h2> <a href="//evil.example">proto</a>',
  "> [!note] <img src=x onerror=alert(1)>",
  "> body",
].join("\n\n");

beforeAll(async () => {
  s = await startTestServer({ watch: true });
  writeFileSync(join(s.root, "Inbox/xss.md"), XSS);
  writeFileSync(join(s.root, "assets/evil.svg"), '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>');
  writeFileSync(join(s.root, "assets/page.html"), "<script>alert(1)</script>");
  await s.vault.settle();
  await waitFor(() => s.vault.indexDb.query("SELECT 1 FROM notes WHERE path = 'Inbox/xss.md'").get(), { what: "xss note indexed" });
  web = await loginSession(s.vault, s.url);
});
afterAll(() => s.close());

describe("the session's index progress", () => {
  test("writes after the scan do not count towards it: done never passes total", async () => {
    for (let i = 0; i < 5; i++) await s.call("write_note", { path: `Inbox/progress-${i}.md`, content: `# P ${i}\n` });
    const { body } = await get("/api/session");
    expect(body.index.state).toBe("ready");
    expect(body.index.done).toBeLessThanOrEqual(body.index.total);
  });
});

describe("addresses", () => {
  test("an unknown address in a browser gets a page with a way back; a program, and an unknown API, a plain 404", async () => {
    const html = await web.fetch("/nosuchpage", { headers: { accept: "text/html,application/xhtml+xml" } });
    expect(html.status).toBe(404);
    const body = await html.text();
    expect(body).toContain("No such page");
    expect(body).toContain('href="/"');
    expect(html.headers.get("content-security-policy")).toBeTruthy();
    const plain = await web.fetch("/nosuchpage");
    expect(plain.status).toBe(404);
    expect(await plain.text()).toBe("404 Not Found");
    expect((await web.fetch("/api/nosuch")).status).toBe(404);
  });
});

describe("a note as the page shows it", () => {
  test("links resolve to notes that exist on disk; the embed is the attachment; frontmatter is the file's", async () => {
    const { status, body } = await get("/api/note?path=Projects/Lettuce.md");
    expect(status).toBe(200);
    const raw = file("Projects/Lettuce.md");
    const fm = parseYaml(raw.split(/^---$/m)[1]!);
    expect(body.frontmatter).toEqual(fm);
    // Every wikilink target in the text becomes a link; resolved ones point at a note on disk with that name.
    const hrefs = [...body.html.matchAll(/<a class="wikilink" href="\/notes\/([^"#]+)/g)].map((m: RegExpMatchArray) => decodeURIComponent(m[1]!));
    expect(hrefs.length).toBeGreaterThan(0);
    for (const h of hrefs) expect(statSync(join(s.root, h)).isFile()).toBe(true);
    expect(hrefs).toContain("Concepts/Wikilinks.md");
    expect(body.html).toContain('src="/api/file?path=assets%2Fdiagram.png"');
    expect(body.backlinks.total).toBeGreaterThan(0);
    for (const b of body.backlinks.items) expect(file(b.sourcePath)).toMatch(/\[\[(Projects\/)?Lettuce|Lettuce\.md|\[\[Lettuce Server|\[\[Project Lettuce/);
    expect(body.headings.map((h: any) => h.title)).toContain("Architecture");
    expect(body.html).toContain('id="h-architecture"');
  });

  test("a note written to attack the page comes back with nothing that runs", async () => {
    const { body } = await get("/api/note?path=Inbox/xss.md");
    const html: string = body.html;
    for (const bad of ["<script", "onerror", "onload", "javascript:", "<iframe", "style=", "<form", "<object", "<svg", "data:text", 'id="app"', 'href="//']) {
      expect(html.toLowerCase()).not.toContain(bad.toLowerCase());
    }
    expect(html).toContain("Totally normal");
    expect(html).toContain('class="callout callout-note"');
    expect(html).toContain('id="h-app"');
  });

  test("bad paths are refused with a kind, never read", async () => {
    for (const p of ["../../etc/passwd", "/etc/passwd", ".lettuce/state.db", "%2e%2e/%2e%2e/etc/passwd", "Inbox\\x.md"]) {
      const { status, body } = await get(`/api/note?path=${encodeURIComponent(p)}`);
      expect(status).toBe(400);
      expect(body.kind).toBe("path-invalid");
    }
    expect((await get("/api/note?path=Nope.md")).body.kind).toBe("note-not-found");
  });
});

describe("rendering runs off the request thread, with a budget", () => {
  test("links inside an embedded note resolve as they do in the note itself", async () => {
    writeFileSync(join(s.root, "Inbox/Embedder.md"), "# Embedder\n\n![[Embedded]]\n");
    writeFileSync(join(s.root, "Inbox/Embedded.md"), "# Embedded\n\nSee [[Wikilinks]] and [the plan](../Projects/Lettuce.md).\n");
    await s.vault.indexer.update(["Inbox/Embedder.md", "Inbox/Embedded.md"]);
    const { body } = await get("/api/note?path=Inbox/Embedder.md");
    expect(body.html).toContain('class="embed"');
    expect(body.html).toContain('href="/notes/Concepts/Wikilinks.md"');
    expect(body.html).toContain('href="/notes/Projects/Lettuce.md"');
  });

  test("a note saved a moment ago, before the watcher indexed it, shows its new links, headings and title", async () => {
    writeFileSync(join(s.root, "Inbox/Fresh.md"), "# Fresh\n\nNothing yet.\n");
    await s.vault.indexer.update(["Inbox/Fresh.md"]);
    writeFileSync(join(s.root, "Inbox/Fresh.md"), "# Fresher\n\n## Later part\n\nSee [[Wikilinks]].\n");
    const { body } = await get("/api/note?path=Inbox/Fresh.md");
    expect(body.title).toBe("Fresher");
    expect(body.html).toContain('href="/notes/Concepts/Wikilinks.md"');
    expect(body.headings.map((h: { title: string }) => h.title)).toContain("Later part");
    expect(body.outgoing.items.map((l: { resolvedPath: string }) => l.resolvedPath)).toEqual(["Concepts/Wikilinks.md"]);
  });

  test("a note saved with a byte-order mark and CRLF line ends shows its body, not its frontmatter", async () => {
    writeFileSync(join(s.root, "Inbox/Windows.md"), "\ufeff---\r\ntags: [win]\r\n---\r\n# Saved on Windows\r\n\r\nBody text.\r\n");
    writeFileSync(join(s.root, "Inbox/Embeds Windows.md"), "# Host\n\n![[Windows]]\n");
    await s.vault.indexer.update(["Inbox/Windows.md", "Inbox/Embeds Windows.md"]);
    for (const path of ["Inbox/Windows.md", "Inbox/Embeds Windows.md"]) {
      const { body } = await get(`/api/note?path=${encodeURIComponent(path)}`);
      expect(body.html).toContain("Body text.");
      expect(body.html).not.toContain("tags:");
    }
  });

  test("a note marked would take minutes over comes back as plain text, and a ping sent meanwhile is answered first", async () => {
    // ~30 µs a character for marked's inline pass under Bun: 1 MB of '[' is minutes (a write token may save 2 MB).
    writeFileSync(join(s.root, "Inbox/Brackets.md"), "# Brackets\n\n" + "[".repeat(1_000_000) + "\n");
    await s.vault.indexer.update(["Inbox/Brackets.md"]);
    const order: string[] = [];
    const page = get("/api/note?path=Inbox/Brackets.md").then((r) => (order.push("page"), r));
    await Bun.sleep(50);
    const ping = s.rpc({ jsonrpc: "2.0", id: 1, method: "ping" }).then(async (r) => (order.push("ping"), (await r.json()) as any));
    const [{ status, body }, pong] = await Promise.all([page, ping]);
    expect(pong.result).toEqual({});
    expect(order).toEqual(["ping", "page"]);
    expect(status).toBe(200);
    expect(body.html).toContain("shown as plain text");
    expect(body.html).toContain("[[[[[[");
    expect(body.title).toBe("Brackets");
    // The next note renders as usual (the worker that ran out of time was replaced).
    expect((await get("/api/note?path=Projects/Lettuce.md")).body.html).toContain('id="h-architecture"');
  }, 30_000);

  test("a note the renderer fails on (30,000 nested callouts overflow its stack) comes back as plain text, not a 500", async () => {
    // Far past the overflow: the depth marked reaches depends on the thread's stack and the JIT's frames (8,000
    // overflowed on the request thread here, yet once rendered whole in a warm read worker during a full run).
    writeFileSync(join(s.root, "Inbox/Nested.md"), "# Nested\n\n" + ">".repeat(30_000) + " [!note] x\n");
    await s.vault.indexer.update(["Inbox/Nested.md"]);
    const { status, body } = await get("/api/note?path=Inbox/Nested.md");
    expect(status).toBe(200);
    expect(body.html).toContain("could not be rendered");
    expect(body.title).toBe("Nested");
  }, 30_000);
});

describe("attachments", () => {
  test("an image is served as itself, sandboxed", async () => {
    const res = await web.fetch("/api/file?path=assets/diagram.png");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(res.headers.get("content-security-policy")).toContain("sandbox");
    expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(join(s.root, "assets/diagram.png")))).toBe(true);
  });

  test("SVG is sandboxed; HTML and other files are downloads; notes, hidden files and traversal are refused", async () => {
    const svg = await web.fetch("/api/file?path=assets/evil.svg");
    expect(svg.headers.get("content-security-policy")).toContain("sandbox");
    expect(svg.headers.get("x-content-type-options")).toBe("nosniff");
    const html = await web.fetch("/api/file?path=assets/page.html");
    expect(html.headers.get("content-type")).toBe("application/octet-stream");
    expect(html.headers.get("content-disposition")).toStartWith("attachment");
    for (const p of ["Projects/Lettuce.md", ".lettuce/state.db", "../../etc/passwd", ".obsidian/app.json"]) {
      const res = await web.fetch(`/api/file?path=${encodeURIComponent(p)}`);
      expect(res.status).toBe(400);
    }
    expect((await web.fetch("/api/file?path=assets/none.png")).status).toBe(404);
  });
});

describe("tree, search and graph", () => {
  test("the tree lists a folder's notes and sub-folders as on disk", async () => {
    const { body } = await get("/api/tree?folder=Projects");
    expect(body.folders).toEqual(["Projects/2026"]);
    expect(body.notes.items.map((n: any) => n.path)).toEqual(notesOnDisk(s.root).filter((p) => p.startsWith("Projects/") && !p.slice(9).includes("/")).sort());
  });

  test("the tree's, the recent and a tag's note lists are sorted in a read worker, not on the request thread", async () => {
    const notePage = offloaded.notePage;
    const asked: unknown[] = [];
    offloaded.notePage = (vault, of, limit, offset, signal) => (asked.push(of), notePage(vault, of, limit, offset, signal));
    try {
      expect((await get("/api/tree?folder=Projects")).body.notes.total).toBeGreaterThan(0);
      expect((await get("/api/recent")).body.items.length).toBeGreaterThan(0);
      expect((await get("/api/tag?tag=project")).body.items.length).toBeGreaterThan(0);
      expect(asked).toEqual([{ folder: "Projects", recursive: false }, { recent: true }, { tag: "project" }]);
    } finally {
      offloaded.notePage = notePage;
    }
  });

  test("an offset past any vault pages to an empty list, not a 500", async () => {
    for (const path of ["/api/tree?offset=1e19", "/api/recent?offset=1e19", "/api/tag?tag=lettuce&offset=9223372036854775807", "/api/links?path=index.md&offset=1e19", "/api/proposals?offset=1e19", "/api/edits?offset=1e300"]) {
      const res = await web.fetch(path);
      expect(res.status, path).toBe(200);
      expect(JSON.stringify(await res.json()), path).not.toContain('"kind":"internal"');
    }
  });

  test("keyword search finds the notes that contain the word", async () => {
    const { body } = await get("/api/search?q=compost");
    expect(body.mode).toBe("keyword");
    const expected = notesOnDisk(s.root).filter((p) => /compost/i.test(file(p)));
    expect(body.items.map((h: any) => h.path).sort()).toEqual(expected.sort());
  });

  test("hybrid search ranks with an embeddings provider, and says why when there is none", async () => {
    const model = startModelServer();
    try {
      const openai = { LETTUCE_EMBED_PROVIDER: "openai", LETTUCE_EMBED_BASE_URL: `${model.url}/v1`, LETTUCE_EMBED_MODEL: "hash-embed", LETTUCE_LLM_PROVIDER: "none" };
      const hybrid = await withEnv(openai, () => get("/api/search?q=compost%20pallets&mode=hybrid"));
      expect(hybrid.body.mode).toBe("hybrid");
      expect(hybrid.body.items.slice(0, 5).map((h: any) => h.path)).toContain("Garden/Compost.md");
      expect(model.state.requests.some((r) => r.path === "/v1/embeddings")).toBe(true);
    } finally {
      await model.stop();
    }
    const none = await withEnv({ LETTUCE_EMBED_PROVIDER: "none" }, () => get("/api/search?q=compost&mode=hybrid"));
    expect(none.body.mode).toBe("keyword");
    expect(none.body.fallback.kind).toBe("not-configured");
    expect(none.body.items.map((h: any) => h.path)).toContain("Garden/Compost.md");
  });

  test("the whole graph has one node per note on disk; past the cap the rest fold into folder clusters", async () => {
    const all = notesOnDisk(s.root);
    const g = (await get("/api/graph")).body;
    expect(g.nodes.length).toBe(all.length);
    expect(g.nodes.map((n: any) => n.path).sort()).toEqual(all.sort());
    for (const [a, b] of g.edges) expect(a !== b && g.nodes[a] && g.nodes[b]).toBeTruthy();
    const capped = (await get("/api/graph?cap=10")).body;
    const clusters = capped.nodes.filter((n: any) => n.cluster);
    expect(capped.shown).toBe(10);
    expect(capped.nodes.length - clusters.length).toBe(10);
    expect(clusters.reduce((n: number, c: any) => n + c.cluster.notes, 0)).toBe(all.length - 10);
    const local = (await get("/api/graph?center=Projects/Lettuce.md&depth=1")).body;
    expect(local.center).toBe("Projects/Lettuce.md");
    expect(local.nodes.some((n: any) => n.path === "Concepts/Wikilinks.md")).toBe(true);
  });
});

describe("proposals and reverts go through the write path", () => {
  test("approving applies the proposal to the file; a proposal whose note changed since is a conflict", async () => {
    const rec = await s.call("apply_edits", { path: "Garden/Compost.md", edits: [{ find: "Two bays", replace: "Three bays" }] }, "propose");
    const list = (await get("/api/proposals")).body;
    expect(list.items.map((p: any) => p.id)).toContain(rec.proposalId);
    const detail = (await get(`/api/proposals/${rec.proposalId}`)).body;
    expect(detail.diff).toContain("+");
    expect(detail.stale).toBeNull();
    const before = file("Garden/Compost.md");
    const ok = await web.fetch(`/api/proposals/${rec.proposalId}/approve`, { method: "POST" });
    expect(ok.status).toBe(200);
    expect(file("Garden/Compost.md")).toBe(before.replace("Two bays", "Three bays"));

    const rec2 = await s.call("apply_edits", { path: "Garden/Compost.md", edits: [{ find: "Three bays", replace: "Four bays" }] }, "propose");
    writeFileSync(join(s.root, "Garden/Compost.md"), file("Garden/Compost.md") + "\nA person's line.\n");
    await s.vault.settle();
    const stale = (await get(`/api/proposals/${rec2.proposalId}`)).body;
    expect(stale.stale.kind).toBe("conflict");
    const refused = await web.fetch(`/api/proposals/${rec2.proposalId}/approve`, { method: "POST" });
    expect(refused.status).toBe(409);
    expect(file("Garden/Compost.md")).toContain("A person's line.");
    expect((await get(`/api/proposals/${rec2.proposalId}`)).body.status).toBe("pending");
    const rej = await web.fetch(`/api/proposals/${rec2.proposalId}/reject`, { json: { reason: "stale" } });
    expect(rej.status).toBe(200);
    // "What the agent proposed before" holds the earlier proposal only, not the later one.
    const history = (id: number) => get(`/api/proposals/${id}`).then((r) => r.body.history.map((q: any) => q.id));
    expect(await history(rec.proposalId)).not.toContain(rec2.proposalId);
    expect(await history(rec2.proposalId)).toContain(rec.proposalId);
  });

  test("revert restores the text; after a person's edit it refuses unless forced", async () => {
    const original = file("Recipes/Menemen.md");
    const w = await s.call("apply_edits", { path: "Recipes/Menemen.md", edits: [{ find: "Turkish breakfast eggs", replace: "TURKISH BREAKFAST EGGS" }] });
    const edits = (await get("/api/edits?path=Recipes/Menemen.md")).body;
    expect(edits.items[0].id).toBe(w.editId);
    const d = (await get(`/api/edits/${w.editId}`)).body;
    expect(d.changes[0].diff).toContain("+");
    expect(d.changedSince).toEqual([]);
    expect((await web.fetch(`/api/edits/${w.editId}/revert`, { json: {} })).status).toBe(200);
    expect(file("Recipes/Menemen.md")).toBe(original);

    const w2 = await s.call("apply_edits", { path: "Recipes/Menemen.md", edits: [{ find: "Turkish breakfast eggs", replace: "Breakfast eggs" }] });
    const agentText = file("Recipes/Menemen.md");
    writeFileSync(join(s.root, "Recipes/Menemen.md"), agentText + "\nMy own note.\n");
    expect((await get(`/api/edits/${w2.editId}`)).body.changedSince).toEqual(["Recipes/Menemen.md"]);
    const refused = await web.fetch(`/api/edits/${w2.editId}/revert`, { json: {} });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as any).kind).toBe("conflict");
    expect(file("Recipes/Menemen.md")).toContain("My own note.");
    expect((await web.fetch(`/api/edits/${w2.editId}/revert`, { json: { force: true } })).status).toBe(200);
    expect(file("Recipes/Menemen.md")).toBe(original);
    const mine = (await get("/api/edits?agent=person%20(web%20UI)")).body;
    expect(mine.total).toBe(2);
    expect(mine.facets.agents).toContain("person (web UI)");
  });

  test("bad ids and bodies get clear errors", async () => {
    expect((await web.fetch("/api/edits/abc/revert", { json: {} })).status).toBe(400);
    expect((await web.fetch("/api/edits/999999/revert", { json: {} })).status).toBe(404);
    expect((await web.fetch("/api/edits/1/revert", { method: "POST", body: "{not json", headers: { "content-type": "application/json" } })).status).toBe(400);
    expect((await web.fetch("/api/proposals/999999/approve", { method: "POST" })).status).toBe(404);
    expect((await web.fetch("/api/tokens", { json: { name: "<script>", scope: "write" } })).status).toBe(400);
    expect((await web.fetch("/api/tokens", { json: { name: "ok", scope: "root" } })).status).toBe(400);
  });
});

describe("work, health, settings", () => {
  test("work lists the pending directives in the files", async () => {
    const w = (await get("/api/work")).body;
    const inFiles = notesOnDisk(s.root).flatMap((p) => file(p).split("\n").filter((l) => /^>\s*\[!ai\]/.test(l)).map(() => p));
    expect(w.directives.total).toBe(inFiles.length);
    expect(w.directives.items.map((d: any) => d.path).sort()).toEqual(inFiles.sort());
    expect(w.mentions.items.length).toBeGreaterThan(0);
  });

  test("a directive an agent claimed shows who holds its lease", async () => {
    const claimed = await s.call("await_directives", { cursor: 0, worker: "laptop/claude", timeout_ms: 1000 });
    expect(claimed.directives.length).toBeGreaterThan(0);
    const w = (await get("/api/work")).body;
    const leased = w.directives.items.filter((d: any) => d.lease);
    expect(leased.map((d: any) => `${d.path}:${d.line}`).sort()).toEqual(claimed.directives.map((d: any) => `${d.path}:${d.line}`).sort());
    for (const d of leased) expect(d.lease.worker).toBe("laptop/claude");
  });

  test("the health page records today's score in state.db", async () => {
    const h = (await get("/api/hygiene")).body;
    expect(h.health.noteCount).toBe(notesOnDisk(s.root).length);
    const row = s.vault.stateDb.query("SELECT score FROM health_history WHERE day = ?").get(localDay()) as { score: number };
    expect(row.score).toBe(h.health.score);
    expect(h.history.at(-1)).toEqual({ day: localDay(), score: h.health.score });
  });

  test("settings never show the API key", async () => {
    const saved = process.env.LETTUCE_API_KEY;
    process.env.LETTUCE_API_KEY = "sk-very-secret";
    try {
      const res = await web.fetch("/api/settings");
      const text = await res.text();
      expect(text).not.toContain("sk-very-secret");
      expect(JSON.parse(text).env.LETTUCE_API_KEY).toBe("(set)");
      expect(JSON.parse(text).immutablePaths).toEqual(["sources/"]);
    } finally {
      if (saved === undefined) delete process.env.LETTUCE_API_KEY;
      else process.env.LETTUCE_API_KEY = saved;
    }
  });
});

describe("live updates", () => {
  test("an edit on disk and a new proposal reach an open page as events", async () => {
    const res = await web.fetch("/api/events");
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const reader = res.body!.getReader();
    let text = "";
    const dec = new TextDecoder();
    const until = async (re: RegExp) => {
      const deadline = Date.now() + 10_000;
      while (!re.test(text)) {
        if (Date.now() > deadline) throw new Error(`no event matching ${re} in:\n${text}`);
        const { value, done } = await reader.read();
        if (done) break;
        text += dec.decode(value, { stream: true });
      }
    };
    await until(/event: hello/);
    writeFileSync(join(s.root, "Inbox/live.md"), "# Live\n\n> [!ai] Do a thing\n");
    await until(/event: index\ndata: \{"changed":\["Inbox\/live\.md"\]/);
    const rec = await s.call("write_note", { path: "Inbox/proposed.md", content: "# P\n" }, "propose");
    expect(rec.proposalId).toBeGreaterThan(0);
    await until(/event: state\ndata: \{"pendingProposals":\d+/);
    await reader.cancel();
  });
});

