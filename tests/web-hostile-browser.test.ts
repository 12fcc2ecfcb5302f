// Hostile vault content and hostile agents against the person's browser (Debian's Chromium driven by
// playwright-core, a real server on an ephemeral port): a note's raw <img> tags pointing at the web
// UI's own API fired credentialed GETs on opening it (forty never-ending /api/events streams held every
// connection Chromium allows per host, and the page's own calls waited 7-10 s), and the timeline showed
// an edit by the agent's self-declared label alone.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { createLoginCode } from "../lib/web/sessions";
import { WEB_AGENT } from "../lib/web/agent-label";
import { copyVault, startTestServer, type TestServer } from "./helpers/server";
import { CHROMIUM, CHROMIUM_ARGS, describeWithBrowser } from "./web-helpers";

declare const document: any;

const STREAMS = 40;
const HOSTILE = [
  "# Hostile",
  "",
  "Just a note.",
  "",
  ...Array.from({ length: STREAMS }, (_, i) => `<img src="/api/events?i=${i}" alt="x">`),
  '<img src="/api/session?via=img"> <img src="api/events?relative"> <img src="/\\evil.example/x.png">',
  '<img srcset="/api/events?via=srcset 1x" alt="s"> <picture><source srcset="/api/events?via=picture"><img alt="p"></picture>',
  '<video src="/api/events?via=video" poster="/api/events?via=poster"></video> <audio src="/api/events?via=audio"></audio>',
  '<div style="background:url(/api/events?via=style)">styled</div> <table background="/api/events?via=table"><tr><td>t</td></tr></table>',
  '<link rel="stylesheet" href="/api/events?via=link"> <input type="image" src="/api/events?via=input">',
  "",
  "A vault image still shows: ![[diagram.png]]",
  "",
  '<img alt="inline" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">',
  "",
].join("\n");

describeWithBrowser("hostile notes and agents in the person's browser", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  let origin: string;
  const requests: { url: string; type: string }[] = [];

  beforeAll(async () => {
    const root = copyVault();
    writeFileSync(join(root, "Hostile.md"), HOSTILE);
    s = await startTestServer({ root });
    origin = new URL(s.url).origin;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await (await browser.newContext()).newPage();
    page.on("request", (r) => requests.push({ url: r.url(), type: r.resourceType() }));
    await page.goto(`${origin}/login?code=${createLoginCode(s.vault.stateDb).code}`);
    await page.waitForSelector("body[data-ready='1']");
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  test("opening a note whose HTML points images at the API loads only vault images, and the page's own calls go through", async () => {
    requests.length = 0;
    await page.goto(`${origin}/notes/Hostile.md`);
    await page.waitForSelector(".markdown img[src^='/api/file']");
    await page.waitForFunction(() => [...document.querySelectorAll(".markdown img[src^='/api/file']")].every((i: any) => i.complete && i.naturalWidth > 0));
    await Bun.sleep(1000);
    // What the browser fetched by itself for the note: images and media, never an API route but /api/file.
    const loaded = requests.filter((r) => !["document", "script", "stylesheet", "fetch", "xhr", "eventsource", "font"].includes(r.type));
    expect(loaded.filter((r) => !new URL(r.url).pathname.startsWith("/api/file") && !r.url.startsWith("data:"))).toEqual([]);
    expect(loaded.some((r) => r.url.includes("/api/file?path=") && r.url.includes("diagram.png"))).toBe(true);
    // At most the page's own live-update stream.
    expect(requests.filter((r) => new URL(r.url).pathname === "/api/events").length).toBeLessThanOrEqual(1);
    const srcs: string[] = await page.evaluate(() => [...document.querySelectorAll(".markdown img")].map((i: any) => i.getAttribute("src") ?? ""));
    expect(srcs.filter((src) => src && !src.startsWith("/api/file?path=") && !src.startsWith("data:image/"))).toEqual([]);
    expect(srcs.some((src) => src.startsWith("data:image/gif"))).toBe(true);
    const t0 = performance.now();
    expect(await page.evaluate(async () => (await fetch("/api/session")).status)).toBe(200);
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  test("the timeline shows the token beside the label an agent gave itself, and a claimed person's label as claimed", async () => {
    const res = await s.rpc({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "write_note", arguments: { path: "Spoofed.md", content: "# Spoofed\n" } } }, { "x-lettuce-agent": WEB_AGENT });
    expect(res.status).toBe(200);
    const tokenName = (s.vault.stateDb.query("SELECT name FROM tokens WHERE scope = 'write'").get() as { name: string }).name;
    await page.goto(`${origin}/timeline?path=Spoofed.md`);
    await page.waitForSelector("body[data-ready='1']");
    await page.waitForSelector("details.edit .who");
    const who = await page.textContent("details.edit .who");
    expect(who).toContain(`(token ${tokenName})`);
    expect(who).toContain(`claimed by token ${tokenName}`);
    expect(who).not.toBe(`by ${WEB_AGENT}`);
  });
});
