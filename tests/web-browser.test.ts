// The web UI end to end in a real browser (Debian's Chromium driven by
// playwright-core) against a real `lettuce serve` on a copy of the Obsidian
// Help vault: log in with the link serve prints, read and follow links,
// search, the graph, approve an agent's proposal, revert an agent's edit,
// revoke a token, live updates, an XSS note that does nothing, 401 without a
// session, CSRF refusal. Screenshots of each page go to a temp folder, or to
// docs/screenshots with LETTUCE_SCREENSHOTS=1.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { appendFileSync, cpSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { chromium, type Browser, type Page } from "playwright-core";
import { freePort, spawnLettuce, type LiveProcess } from "./helpers/cli";
import { describeWithCorpus, OBSIDIAN_HELP } from "./helpers/corpora";
import { connectClient, payload, REPO, tempDir, waitFor } from "./helpers/server";
import { CHROMIUM, CHROMIUM_ARGS, describeWithBrowser } from "./web-helpers";

// Browser globals, for the functions that run inside the page (page.evaluate / waitForFunction).
declare const document: any, window: any, location: any, HTMLCanvasElement: any;

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

const XSS_NOTE = "XSS attempt.md";
const HOSTILE_NAME = "<img src=x onerror=alert(1)>.md";

describeWithCorpus("obsidian-help", "web UI in Chromium", () => {
  describeWithBrowser("web UI in Chromium on the Obsidian Help vault", () => {
    let parent: string;
    let root: string;
    let shots: string;
    let srv: LiveProcess;
    let origin: string;
    let mcpUrl: string;
    let writeToken: string;
    let browser: Browser;
    let page: Page;
    let proposeToken = "";
    const dialogs: string[] = [];
    const errors: string[] = [];
    const clients: Client[] = [];
    const file = (p: string) => readFileSync(join(root, p), "utf8");
    const shot = (name: string) => page.screenshot({ path: join(shots, `${name}.png`) });
    const go = async (path: string) => {
      await page.goto(origin + path);
      await page.waitForSelector("body[data-ready='1']");
    };

    beforeAll(async () => {
      // A folder named as the person would have it: the header shows the vault's folder name.
      parent = tempDir();
      root = join(parent, "Obsidian Help");
      cpSync(OBSIDIAN_HELP, root, { recursive: true });
      writeFileSync(
        join(root, XSS_NOTE),
        [
          "# XSS attempt",
          "<script>window.__pwned = 'script'</script>",
          '<img src="nope.png" onerror="window.__pwned = \'onerror\'">',
          "[click me](javascript:window.__pwned='link')",
          '<a href="javascript:alert(1)">raw link</a> <iframe src="javascript:alert(2)"></iframe>',
          '<svg><script>alert(3)</script></svg> <details open ontoggle="alert(4)"><summary>x</summary></details>',
          "> [!warning] <img src=x onerror=alert(5)>",
          "> Careful.",
          "",
          `A link to [[${HOSTILE_NAME.replace(/\.md$/, "")}]].`,
        ].join("\n\n"),
      );
      writeFileSync(join(root, HOSTILE_NAME), "# <script>alert(6)</script>\n\nA note with a hostile name.\n");
      writeFileSync(
        join(root, "Long lines.md"),
        `# Long lines\n\n${"a".repeat(300)}\n\nhttps://example.com/${"segment/".repeat(40)}\n\n\`${"code".repeat(80)}\`\n\n- ${"b".repeat(200)}\n\nשלום עולם, זו פסקה בעברית.\n`,
      );
      shots = process.env.LETTUCE_SCREENSHOTS === "1" ? join(REPO, "docs/screenshots") : tempDir("lettuce-shots-");
      mkdirSync(shots, { recursive: true });

      const saved = process.env.LETTUCE_EMBED_PROVIDER;
      process.env.LETTUCE_EMBED_PROVIDER = "none"; // no model work on the test machine's two cores
      const port = freePort();
      srv = spawnLettuce(["serve", root, "--port", String(port)]);
      if (saved === undefined) delete process.env.LETTUCE_EMBED_PROVIDER;
      else process.env.LETTUCE_EMBED_PROVIDER = saved;
      await srv.waitForStdout(/Index current/, 30_000);
      origin = `http://127.0.0.1:${port}`;
      mcpUrl = `${origin}/mcp`;
      writeToken = srv.stdout().match(/shown only this once:\s+(\S+)/)![1]!;

      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      await context.addInitScript(() => {
        document.addEventListener("securitypolicyviolation", (e: any) => {
          ((window as any).__csp ??= []).push(`${e.violatedDirective} ${e.blockedURI}`);
        });
      });
      page = await context.newPage();
      page.on("dialog", (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });
      page.on("pageerror", (e) => errors.push(e.message));
    });

    afterAll(async () => {
      for (const c of clients) await c.close().catch(() => {});
      await browser?.close();
      await srv?.stop();
      rmSync(parent, { recursive: true, force: true });
      if (process.env.LETTUCE_SCREENSHOTS !== "1") rmSync(shots, { recursive: true, force: true });
    });

    async function client(token: string): Promise<Client> {
      const c = await connectClient(mcpUrl, token, "browser-test-agent");
      clients.push(c);
      return c;
    }

    test("log in with the link serve printed", async () => {
      const link = srv.stdout().match(/(http:\/\/127\.0\.0\.1:\d+\/login\?code=[\w-]+)/)![1]!;
      await page.goto(link);
      await page.waitForSelector("body[data-ready='1']");
      expect(new URL(page.url()).pathname).toBe("/");
      expect(await page.textContent("nav.side")).toContain("Proposals");
      const cookies = await page.context().cookies();
      expect(cookies.length).toBe(1);
      expect(cookies[0]!.httpOnly).toBe(true);
      expect(cookies[0]!.sameSite).toBe("Strict");
      await page.waitForSelector("nav.tree li");
      await shot("notes");
    });

    test("open a note and follow a wikilink", async () => {
      await go("/notes/Home.md");
      await page.waitForSelector(".markdown a.wikilink");
      expect(await page.textContent("h1.note-title")).toBe("Obsidian Help");
      const link = page.locator(".markdown a.wikilink:not(.unresolved)").first();
      const text = (await link.textContent())!;
      // Where it must lead, worked out from the files: the note with that name.
      const target = notesOnDisk(root).find((p) => p.endsWith(`/${text}.md`) || p === `${text}.md`)!;
      expect(target).toBeTruthy();
      const h1 = file(target).match(/^# (.+)$/m)?.[1] ?? text;
      await link.click();
      await page.waitForFunction((t) => document.querySelector("h1.note-title")?.textContent === t, h1);
      expect(decodeURIComponent(new URL(page.url()).pathname)).toBe(`/notes/${target}`);
      expect(await page.locator(".backlinks li", { hasText: "Home" }).count()).toBeGreaterThan(0);
      await go("/notes/Linking notes and files/Embed files.md");
      await page.waitForSelector(".markdown");
      await shot("note");
      await page.click("button[aria-label='Switch light or dark mode']");
      await shot("note-dark");
      await page.click("button[aria-label='Switch light or dark mode']");
    });

    test("search as you type, from the keyboard", async () => {
      await go("/");
      await page.keyboard.press("/");
      await page.keyboard.type("canvas", { delay: 40 });
      await page.waitForSelector(".results li");
      expect(new URL(page.url()).pathname).toBe("/search");
      const paths = await page.locator(".results li .muted").allTextContents();
      expect(paths.length).toBeGreaterThan(0);
      for (const p of paths) expect(file(p).toLowerCase()).toContain("canvas");
      await shot("search");
    });

    test("search results read as text: the query's words marked, no Markdown or HTML left in the snippet", async () => {
      await go("/search?q=callout");
      await page.waitForSelector(".results li .snippet mark");
      const snippets = await page.locator(".results li .snippet").allTextContents();
      for (const t of snippets) expect(t).not.toMatch(/\[\[|\]\]|\*\*|<[a-z]/i);
      const marks = await page.locator(".results li .snippet mark").allTextContents();
      for (const m of marks) expect(m.toLowerCase()).toStartWith("callout");
    });

    test("a long note keeps its outline in view while it scrolls", async () => {
      await go("/notes/Editing and formatting/Basic formatting syntax.md");
      await page.waitForSelector(".note-aside .outline a");
      await page.evaluate(() => document.querySelector("main").scrollTo(0, 3000));
      await page.waitForTimeout(100);
      const box = await page.locator(".note-aside .outline").boundingBox();
      expect(box).not.toBeNull();
      expect(box!.y).toBeGreaterThanOrEqual(0);
      expect(box!.y).toBeLessThan(800);
    });

    test("on a phone (390 px) nothing runs off the side: the header wraps, the tree is usable, tables scroll inside", async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      try {
        for (const path of ["/", "/notes/Home.md", "/proposals", "/timeline", "/tokens"]) {
          await go(path);
          const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
          expect(overflow, path).toBeLessThanOrEqual(0);
          const logout = await page.getByRole("button", { name: "Log out" }).boundingBox();
          expect(logout, path).not.toBeNull();
          expect(logout!.x + logout!.width, path).toBeLessThanOrEqual(390);
        }
        await go("/");
        const tree = await page.locator("nav.tree").boundingBox();
        expect(tree!.width).toBeGreaterThan(300);
        await shot("phone-home");
      } finally {
        await page.setViewportSize({ width: 1280, height: 800 });
      }
    });

    test("long words, web addresses and inline code wrap inside the note's column, on a desktop and a phone", async () => {
      try {
        for (const width of [1280, 390]) {
          await page.setViewportSize({ width, height: 844 });
          await go(`/notes/${encodeURIComponent("Long lines.md")}`);
          const spill = await page.evaluate(() => {
            const m = document.querySelector(".markdown")!;
            return m.scrollWidth - m.clientWidth;
          });
          expect(spill, `${width} px`).toBeLessThanOrEqual(0);
          await shot(`long-lines-${width}`);
        }
        // A Hebrew paragraph runs right to left.
        const dir = await page.evaluate(() => (globalThis as any).getComputedStyle([...document.querySelectorAll(".markdown p")].find((p) => p.textContent!.includes("שלום"))!).unicodeBidi);
        expect(dir).toBe("plaintext");
      } finally {
        await page.setViewportSize({ width: 1280, height: 800 });
      }
    });

    test("the graph is drawn with one node per note", async () => {
      await go("/");
      await page.keyboard.press("g");
      await page.keyboard.press("g");
      await page.waitForSelector("#graph[data-ready='1']", { timeout: 30_000 });
      expect(new URL(page.url()).pathname).toBe("/graph");
      const count = Number(await page.getAttribute("#graph", "data-node-count"));
      expect(count).toBe(notesOnDisk(root).length);
      await page.waitForTimeout(300);
      const inked = await page.evaluate(() => {
        let n = 0;
        for (const c of document.querySelectorAll("#graph canvas")) {
          const ctx = c.getContext("2d");
          if (!ctx || !c.width || !c.height) continue;
          const d = ctx.getImageData(0, 0, c.width, c.height).data;
          for (let i = 3; i < d.length; i += 4) if (d[i]! > 0) n++;
        }
        return n;
      });
      expect(inked).toBeGreaterThan(1000); // sigma's label layer (2D); nodes and links are on its WebGL layers
      // The WebGL layers cannot be read back; a picture of the drawn graph compresses far worse than an empty box.
      const png = await page.locator("#graph").screenshot();
      expect(png.length).toBeGreaterThan(30_000);
      await shot("graph");
    });

    test("create a propose token in the UI", async () => {
      await go("/tokens");
      await page.fill("input[name='name']", "ui-agent");
      await page.selectOption("select[name='scope']", "propose");
      await page.click("form.inline-form button[type='submit']");
      proposeToken = ((await page.textContent("#new-token")) ?? "").trim();
      expect(proposeToken).toMatch(/^[\w-]{43}$/);
      await page.waitForSelector("tr[data-token='ui-agent']");
      await shot("tokens");
    });

    test("a proposal from the propose token appears live; approving it changes the file on disk", async () => {
      await go("/proposals");
      const agent = await client(proposeToken);
      const rec = payload(
        await agent.callTool({ name: "apply_edits", arguments: { path: "Home.md", edits: [{ find: "Welcome to the official Obsidian Help site", replace: "Welcome to our Obsidian Help copy" }] } }),
      );
      expect(file("Home.md")).toContain("Welcome to the official Obsidian Help site"); // queued, not applied
      await page.waitForSelector(`a[href="/proposals/${rec.proposalId}"]`); // no reload: the page heard it
      await shot("proposals");
      await page.click(`td a[href="/proposals/${rec.proposalId}"]`);
      await page.waitForSelector("pre.diff .add");
      await shot("proposal");
      await page.click("#approve");
      await waitFor(() => file("Home.md").includes("Welcome to our Obsidian Help copy"), { what: "the approved edit on disk" });
      await page.waitForSelector(".pill.approved");
    });

    test("revert an agent edit from the timeline; after a person's edit only with a confirmation", async () => {
      const agent = await client(writeToken);
      const original = file("Help and support.md");
      const edit = (find: string, replace: string) =>
        agent.callTool({ name: "apply_edits", arguments: { path: "Help and support.md", edits: [{ find, replace }] } }).then(payload);
      const first = original.match(/^## .+$/m)![0]; // the first section heading: one line, once in the file
      const w = await edit(first, `${first} (edited by an agent)`);
      await go(`/timeline?path=${encodeURIComponent("Help and support.md")}`);
      await page.click(`details[data-edit="${w.editId}"] summary`);
      await page.waitForSelector(`details[data-edit="${w.editId}"] button.revert`);
      await shot("timeline");
      await page.click(`details[data-edit="${w.editId}"] button.revert`);
      await waitFor(() => file("Help and support.md") === original, { what: "the revert on disk" });

      const w2 = await edit(first, `${first} (again)`);
      appendFileSync(join(root, "Help and support.md"), "\nA line the person wrote.\n");
      await go(`/timeline?path=${encodeURIComponent("Help and support.md")}`);
      await page.click(`details[data-edit="${w2.editId}"] summary`);
      await page.click(`details[data-edit="${w2.editId}"] button.revert`);
      await page.waitForSelector("dialog.modal[open]");
      expect(file("Help and support.md")).toContain("A line the person wrote."); // refused until confirmed
      await page.click("dialog.modal button.danger");
      await waitFor(() => file("Help and support.md") === original, { what: "the forced revert on disk" });
    });

    test("revoke a token in the UI and /mcp refuses it", async () => {
      const call = () =>
        fetch(mcpUrl, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${proposeToken}` },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
        });
      expect((await call()).status).toBe(200);
      await go("/tokens");
      await page.click("button[aria-label='Revoke ui-agent']");
      await page.click("dialog.modal button.danger");
      await page.waitForSelector("tr.revoked[data-token='ui-agent']");
      expect((await call()).status).toBe(401);
    });

    test("the work page shows a new directive without a reload", async () => {
      await go("/work");
      await page.waitForSelector("h1");
      appendFileSync(join(root, "Home.md"), "\n> [!ai] Summarise the plugins section\n> Three lines.\n");
      await page.waitForSelector("#directives >> text=Summarise the plugins section", { timeout: 15_000 });
      await shot("work");
    });

    test("health and settings", async () => {
      await go("/hygiene");
      await page.waitForSelector(".score .big");
      await page.waitForSelector("svg.chart");
      expect(await page.locator("details.rule").count()).toBeGreaterThan(0);
      await shot("health");
      await go("/settings");
      await page.waitForSelector("dl.facts");
      expect(await page.textContent("main")).toContain("sources/");
      await shot("settings");
    });

    test("an XSS note and a hostile file name run nothing", async () => {
      await go(`/notes/${encodeURIComponent(XSS_NOTE)}`);
      await page.waitForSelector(".markdown .callout");
      expect(await page.locator(".markdown script, .markdown iframe, .markdown [onerror], .markdown [ontoggle], .markdown a[href^='javascript']").count()).toBe(0);
      await page.click(".markdown a.wikilink");
      await page.waitForFunction(() => document.querySelector("h1.note-title")?.textContent === "<script>alert(6)</script>");
      await go("/search?q=hostile");
      await page.waitForSelector(".results li");
      await go("/graph");
      await page.waitForSelector("#graph[data-ready='1']");
      await page.click("details.graph-list summary");
      expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined();
      expect(dialogs).toEqual([]);
      expect(errors).toEqual([]);
      expect(await page.evaluate(() => (window as any).__csp ?? [])).toEqual([]);
    });

    test("no session: the pages answer 401 with how to get a link", async () => {
      const fresh = await browser.newContext();
      const p = await fresh.newPage();
      const res = await p.goto(origin + "/graph");
      expect(res!.status()).toBe(401);
      expect(await p.textContent("body")).toContain("lettuce login");
      const api = await p.goto(origin + "/api/session");
      expect(api!.status()).toBe(401);
      await p.goto(origin + "/login?code=not-a-code");
      expect(await p.textContent("body")).toContain("not valid");
      await fresh.close();
    });

    test("a change without the CSRF token is refused", async () => {
      await go("/tokens");
      const status = await page.evaluate(async () => {
        const r = await fetch("/api/tokens", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "csrf-less", scope: "write" }) });
        return r.status;
      });
      expect(status).toBe(403);
      await page.reload();
      await page.waitForSelector("body[data-ready='1']");
      expect(await page.locator("tr[data-token='csrf-less']").count()).toBe(0);
    });
  });
});
