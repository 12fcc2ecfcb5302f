// Issue 14, part 6: search ranks the obvious page first and its snippets are
// text. A note whose title (or alias) *is* the query comes first, ahead of
// notes whose titles merely contain the word; snippets skip Obsidian
// comments (%% … %%), HTML comments and markup-only lines (badges, images).
// On obsidian-hub, with the facts computed from the files, and on a small
// vault built for the purpose. Also on obsidian-hub: lint (the slowest read)
// runs off the event loop, so a ping sent meanwhile is answered first.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describeWithCorpus, OBSIDIAN_HUB } from "./helpers/corpora";
import { copyVault, startTestServer, type TestServer } from "./helpers/server";
import { readNoteText, walkVault } from "./helpers/vault-facts";

const MARKUP_ONLY = (s: string) => !/[\p{L}\p{N}]/u.test(s.replace(/!\[[^\]]*\]\([^)]*\)|!\[\[[^\]]*\]\]|<[^>]+>|\[!\[[^\]]*\]\([^)]*\)\]\([^)]*\)/g, " "));
const words = (s: string) => (s.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(" ");

function expectTextSnippet(snippet: string, what: string): void {
  expect(snippet, what).not.toContain("%%");
  expect(snippet, what).not.toContain("<!--");
  expect(MARKUP_ONLY(snippet), `${what}: ${snippet}`).toBe(false);
}

describeWithCorpus("obsidian-hub", "search on obsidian-hub: the exact title first, text snippets", () => {
  let s: TestServer;
  let root: string;
  // title (as the tests compute it) per note
  const titles = new Map<string, string>();
  beforeAll(async () => {
    root = copyVault(OBSIDIAN_HUB);
    for (const path of walkVault(root).notes) {
      const { frontmatter, body } = readNoteText(root, path);
      const h1 = /^# +(.+?)\s*#*\s*$/m.exec(body)?.[1];
      const name = path.slice(path.lastIndexOf("/") + 1, -3);
      titles.set(path, typeof frontmatter.title === "string" && frontmatter.title.trim() ? frontmatter.title.trim() : (h1 ?? name));
    }
    s = await startTestServer({ root });
  }, 120_000);
  afterAll(async () => {
    await s?.close();
    // A root passed in is the caller's to remove.
    if (root) rmSync(root, { recursive: true, force: true });
  });

  test("zettelkasten: the note titled Zettelkasten is first", async () => {
    const exact = [...titles].filter(([, t]) => words(t) === "zettelkasten").map(([p]) => p);
    expect(exact).toContain("05 - Concepts/Zettelkasten.md");
    const r = await s.call("search", { query: "zettelkasten" }, "read");
    expect(exact).toContain(r.items[0].path);
    // Many other titles contain the word: the ranking had a choice to make.
    expect(r.items.slice(1, 5).every((i: any) => words(i.title).includes("zettelkasten") && words(i.title) !== "zettelkasten")).toBe(true);
  });

  test("a dozen one-word titles that other titles contain: each ranks its own note first", async () => {
    const byTitle = new Map<string, string[]>();
    for (const [p, t] of titles) {
      const w = words(t);
      if (/^[a-z]{5,}$/.test(w)) byTitle.set(w, [...(byTitle.get(w) ?? []), p]);
    }
    const allTitles = [...titles.values()].map(words);
    const cases = [...byTitle.keys()]
      .filter((w) => allTitles.filter((t) => t !== w && t.split(" ").includes(w)).length >= 3)
      .sort()
      .slice(0, 12);
    expect(cases.length).toBeGreaterThanOrEqual(8);
    for (const w of cases) {
      const r = await s.call("search", { query: w, limit: 10 }, "read");
      expect(byTitle.get(w), `${w} → ${r.items[0]?.path}`).toContain(r.items[0].path);
      for (const i of r.items) expectTextSnippet(i.snippet, `${w}: ${i.path}`);
      // The spec: best first by score (lower is better), the named note put first included.
      const scores = r.items.map((i: any) => i.score);
      expect(scores, w).toEqual([...scores].sort((a, b) => a - b));
    }
  });

  test("snippets of common queries skip comments and markup-only lines", async () => {
    for (const query of ["obsidian", "plugin", "theme", "github", "daily notes", "template", "sponsor"]) {
      const r = await s.call("search", { query, limit: 50 }, "read");
      expect(r.items.length, query).toBeGreaterThan(0);
      for (const i of r.items) expectTextSnippet(i.snippet, `${query}: ${i.path}`);
    }
  });

  test("lint runs off the event loop: a ping sent meanwhile is answered first", async () => {
    const order: string[] = [];
    const lint = s.callRaw("lint", {}, "read").then(() => order.push("lint"));
    await Bun.sleep(5);
    const ping = s.rpc({ jsonrpc: "2.0", id: 1, method: "ping" }).then(async (r) => {
      expect(((await r.json()) as any).result).toEqual({});
      order.push("ping");
    });
    await Promise.all([lint, ping]);
    expect(order).toEqual(["ping", "lint"]);
  });
});

describe("snippets skip comments and markup on a vault built for it", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
    mkdirSync(join(s.root, "Snips"));
    const notes: Record<string, string> = {
      "obsidian-comment.md": "# Alpha\n\n%% kumquat in a comment\nthat spans lines %%\n\nThe kumquat grows here.\n",
      "html-comment.md": "# Beta\n\n<!-- kumquat hidden -->\n<!--\nkumquat\n-->\nA kumquat in prose.\n",
      "badges.md": "# Gamma\n\n[![kumquat](https://img.shields.io/kumquat.svg)](https://example.com/kumquat)\n![kumquat](kumquat.png) ![[kumquat.jpg]]\n<div align=\"center\"><img src=\"kumquat.png\"></div>\n\nPlain kumquat text.\n",
      "only-markup.md": "# Kumquat\n\n%% kumquat notes %%\n![kumquat](k.png)\n",
      "unclosed.md": "# Delta\n\nFirst kumquat line.\n%% kumquat starts a comment that never ends\nkumquat\n",
      "lines.md": "# Epsilon\n\nA short kumquat line.\n<!-- skip me -->\nThe next line carries on.\n\nAnd a paragraph after it.\n",
    };
    for (const [n, t] of Object.entries(notes)) writeFileSync(join(s.root, "Snips", n), t);
    await s.vault.indexer.fullScan();
  });
  afterAll(() => s?.close());

  test("the snippet is the prose, not the comment or the badge", async () => {
    const r = await s.call("search", { query: "kumquat", limit: 10 }, "read");
    const snip = (name: string) => r.items.find((i: any) => i.path === `Snips/${name}`)?.snippet as string;
    expect(snip("obsidian-comment.md")).toContain("The kumquat grows here.");
    expect(snip("html-comment.md")).toContain("A kumquat in prose.");
    expect(snip("badges.md")).toContain("Plain kumquat text.");
    expect(snip("unclosed.md")).toContain("First kumquat line.");
    expect(snip("unclosed.md")).not.toContain("never ends");
    // A short hit line is followed by the prose after it, comments left out.
    expect(snip("lines.md")).toBe("…A short kumquat line. The next line carries on. And a paragraph after it.");
    for (const i of r.items) expectTextSnippet(i.snippet, i.path);
    // A title-only match: the note's own heading, never its comment or image.
    expect(snip("only-markup.md")).toBe("# Kumquat");
    // And the note titled exactly Kumquat comes first.
    expect(r.items[0].path).toBe("Snips/only-markup.md");
  });

  test("an alias equal to the query ranks first too", async () => {
    writeFileSync(join(s.root, "Snips/aliased.md"), "---\naliases: [Quince Paste]\n---\n# Membrillo\n\nSweet.\n");
    writeFileSync(join(s.root, "Snips/quince-a.md"), "# Quince paste with cheese\n\nquince paste quince paste\n");
    writeFileSync(join(s.root, "Snips/quince-b.md"), "# Quince Paste Recipes\n\nquince paste, quince paste, quince paste\n");
    await s.vault.indexer.update(["Snips/aliased.md", "Snips/quince-a.md", "Snips/quince-b.md"]);
    const r = await s.call("search", { query: "quince paste" }, "read");
    expect(r.items[0].path).toBe("Snips/aliased.md");
    expect(r.total).toBe(3);
    // With OR there is no single "exact" title: plain BM25 order.
    const or = await s.call("search", { query: "quince OR membrillo" }, "read");
    expect(or.total).toBe(3);
  });
});
