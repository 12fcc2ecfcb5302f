// An agent pays for every byte. A note can name itself at any length (a
// one-line note starting "# " is all title), carry thousands of links or
// headings, or hold a 50,000-character directive; each listing repeats those.
// An audit measured answers of 6 MB (list_notes, default arguments), 10 MB
// (read_note of a log), 23 MB (get_pages) and 7 MB (pending_directives).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
const size = async (tool: string, args: Record<string, unknown>) => {
  const res: any = await s.callRaw(tool, args, "read");
  expect(res.isError, `${tool}: ${res.content[0].text.slice(0, 200)}`).toBeFalsy();
  return { bytes: res.content[0].text.length, body: JSON.parse(res.content[0].text) };
};

beforeAll(async () => {
  s = await startTestServer();
  mkdirSync(join(s.root, "Big"));
  const w = (p: string, t: string) => writeFileSync(join(s.root, p), t);
  w("Big/AllTitle.md", `# ${"sizemarker ".repeat(150_000)}\n`); // 1.65 MB of title
  w("Big/LongTag.md", `# Long tag\n\nsizemarker #${"t".repeat(100_000)} #short\n`);
  w("Big/Links.md", `# Links\n\n${Array.from({ length: 5000 }, (_, i) => `[[Target ${i}]]`).join(" ")}\n`);
  w("Big/Headings.md", Array.from({ length: 5000 }, (_, i) => `## Heading ${i}\n\nline ${i}\n`).join("\n"));
  for (let i = 0; i < 3; i++) w(`Big/Page${i}.md`, `# Page ${i}\n\n${"words and more words ".repeat(30_000)}\n`); // 600 KB each
  w("Big/Directive.md", `# Work\n\n> [!ai] ${"do this ".repeat(5000)}\n> ${"and this ".repeat(10_000)}\n`);
  await s.vault.indexer.fullScan();
});
afterAll(() => s?.close());

test("titles, headings and tags are bounded where they are parsed: listings stay small", async () => {
  const notes = await size("list_notes", { limit: 50 });
  expect(notes.bytes).toBeLessThan(64_000);
  const all = notes.body.items.find((n: any) => n.path === "Big/AllTitle.md");
  expect(all.title.length).toBeLessThanOrEqual(300);
  expect(all.title.endsWith("…")).toBe(true);
  const tagged = notes.body.items.find((n: any) => n.path === "Big/LongTag.md");
  expect(tagged.tags).toEqual(["short"]); // a 100,000-character "tag" is no tag
  expect((await size("search", { query: "sizemarker" })).bytes).toBeLessThan(16_000);
  const ws = await size("search_workspace", { query: "sizemarker" });
  expect(ws.bytes).toBeLessThan(16_000);
  for (const r of ws.body.results) expect(r.snippet.length).toBeLessThanOrEqual(400);
  expect((await size("list_tags", { limit: 1000 })).body.items.every((t: any) => t.tag.length <= 200)).toBe(true);
});

test("read_note lists the first 200 links and says how many there are", async () => {
  const { body } = await size("read_note", { path: "Big/Links.md" });
  expect(body.outgoingLinks.length).toBe(200);
  expect(body.outgoingLinksTotal).toBe(5000);
  const small = await size("read_note", { path: "Projects/Lettuce.md" });
  expect(small.body).not.toHaveProperty("outgoingLinksTotal");
});

test("an outline stops after 200 headings; a get_pages batch stops at a million characters", async () => {
  const outline = await size("get_page", { pageId: "Big/Headings.md", mode: "outline" });
  expect(outline.body.content).toContain("… 4800 more headings");
  expect(outline.bytes).toBeLessThan(32_000);
  const batch = await size("get_pages", { pageIds: ["Big/Page0.md", "Big/Page1.md", "Big/Page2.md", "Projects/Lettuce.md"] });
  expect(batch.body.results.map((r: any) => r.ok)).toEqual([true, false, false, true]);
  expect(batch.body.results[1].kind).toBe("too-large");
  expect(batch.bytes).toBeLessThan(1_100_000);
});

test("a directive's title and body are cut for pending_directives; read_note has them whole", async () => {
  const { body } = await size("pending_directives", { path: "Big/Directive.md" });
  const d = (Array.isArray(body) ? body : body.items)[0];
  expect(d.title.length).toBeLessThanOrEqual(300);
  expect(d.body.length).toBeLessThanOrEqual(4000);
  expect((await size("read_note", { path: "Big/Directive.md" })).body.content.length).toBeGreaterThan(100_000);
});
