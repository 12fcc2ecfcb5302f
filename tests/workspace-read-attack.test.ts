// Hostile input for the workspace read tools: traversal and hidden paths in
// every id, symlinks out of the vault, forged cursors, query syntax and LIKE
// wildcards, malformed frontmatter, odd resource strings; and the substring
// fallback's byte budget on a vault bigger than it. Nothing may crash, leak
// outside the vault, or hang.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withEnv } from "./helpers/env";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";
import { addWorkspaceNotes } from "./helpers/workspace-notes";

let s: TestServer;
let root: string;
let outside: string;
beforeAll(async () => {
  root = tempDir();
  outside = tempDir();
  writeFileSync(join(outside, "secret.md"), "# Secret\n\ntop secret outside the vault\n");
  mkdirSync(join(outside, "dir"));
  writeFileSync(join(outside, "dir/inner.md"), "# Inner\n\noutside too\n");
  addWorkspaceNotes(root, {
    "Notes/Plain.md": "# Plain\n\nA plain note about 100%_done progress bars.\n",
    "Notes/Odd frontmatter.md":
      "---\nsources: {resource: [1, 2]}\nstatus: [deprecated, maybe]\nupdated: not a date\nreviewed_by: {}\nknowledge: 7\nicon: 12\n---\n# Odd frontmatter\n\nProgress bars and odd properties.\n",
    "Notes/Broken yaml.md": "---\ntitle: [unclosed\nsources: - a\n---\n# Broken yaml\n\nProgress notes.\n",
    ".obsidian/app.json": "{}",
    ".hidden/Secret plan.md": "# Secret plan\n\nprogress hidden\n",
  });
  symlinkSync(join(outside, "dir"), join(root, "Notes/linked-dir"));
  symlinkSync(join(outside, "secret.md"), join(root, "Notes/linked-secret.md"));
  s = await withEnv({ LETTUCE_EMBED_PROVIDER: "none" }, () => startTestServer({ root }));
});
afterAll(async () => {
  await s?.close();
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

const BAD_IDS = ["../outside.md", "%2e%2e/%2e%2e/etc/passwd", "%252e%252e/x.md", "/etc/passwd", "C:/Windows/win.ini", "Notes\\Plain.md", "Notes/\u0000x.md", ".lettuce/state.db", ".obsidian/app.json", ".hidden/Secret plan.md", "Notes/linked-dir", "Notes/linked-dir/inner.md", "Notes/linked-secret.md", "~/x.md"];

describe("ids that point outside the vault or at hidden files", () => {
  test("get_page refuses each with path-invalid or note-not-found, and never returns outside text", async () => {
    for (const pageId of BAD_IDS) {
      const r: any = await s.callRaw("get_page", { pageId });
      expect(r.isError).toBe(true);
      expect(["path-invalid", "note-not-found"]).toContain(r.kind);
      expect(r.content[0].text).not.toContain("top secret");
      expect(r.content[0].text).not.toContain("outside too");
    }
  });

  test("an empty id is path-invalid, as an empty path is to read_note (not a protocol error)", async () => {
    for (const tool of ["get_page", "get_related_pages"]) expect(((await s.callRaw(tool, { pageId: "" })) as any).kind).toBe("path-invalid");
    expect(((await s.callRaw("read_note", { path: "" })) as any).kind).toBe("path-invalid");
  });

  test("get_pages takes 14 bad ids and one good one and fails none of the call", async () => {
    const { results } = await s.call("get_pages", { pageIds: [...BAD_IDS, "Notes/Plain.md"] });
    expect(results.filter((r: any) => r.ok).map((r: any) => r.id)).toEqual(["Notes/Plain.md"]);
    expect(JSON.stringify(results)).not.toContain("top secret");
  });

  test("list_workspace and get_related_pages refuse them too; listings never show hidden or symlinked entries", async () => {
    for (const parentId of BAD_IDS) {
      const r: any = await s.callRaw("list_workspace", { parentId });
      if (!r.isError) expect(JSON.parse(r.content[0].text).items).toEqual([]); // a note with no children
      else expect(["path-invalid", "note-not-found"]).toContain(r.kind);
      const rel: any = await s.callRaw("get_related_pages", { pageId: parentId });
      expect(rel.isError).toBe(true);
    }
    const notes = await s.call("list_workspace", { parentId: "Notes" });
    expect(notes.items.map((i: any) => i.id).filter((id: string) => !id.endsWith(".base")).sort()).toEqual(["Notes/Broken yaml.md", "Notes/Odd frontmatter.md", "Notes/Plain.md"]);
    const rootList = await s.call("list_workspace", {});
    expect(rootList.items.map((i: any) => i.id)).toEqual(["Notes"]);
  });

  test("search never finds hidden or outside notes", async () => {
    for (const query of ["secret", "top secret", "outside", "cret"]) {
      const { results } = await s.call("search_workspace", { query });
      expect(results).toEqual([]);
    }
  });
});

describe("forged cursors and query syntax", () => {
  test("cursors: garbage, another shape, an oversized one", async () => {
    const forge = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
    for (const cursor of ["", "%%%", forge({ v: 1, parent: "", group: 7, path: "x" }), forge({ v: 2 }), forge([1, 2]), forge({ v: 1, parent: "../..", group: 0, path: "" })]) {
      const r: any = await s.callRaw("list_workspace", { cursor });
      if (cursor === "") expect(r.isError).toBeFalsy(); // an empty cursor is no cursor
      else expect(r.kind).toBe("invalid-input");
    }
    const huge = await s.rpc({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_workspace", arguments: { cursor: "A".repeat(5000) } } });
    expect(((await huge.json()) as any).error.code).toBe(-32602);
  });

  test("FTS5 syntax, LIKE wildcards and control characters are just text", async () => {
    for (const query of ['title:x OR NEAR(a b', '"unbalanced', "* ^ ( ) {title}", "AND OR NOT", "\u0000\u0001\u0002", "x".repeat(500), "🙂"]) {
      const r: any = await s.callRaw("search_workspace", { query });
      expect(r.isError).toBeFalsy();
    }
    // % and _ are literal: only the note that holds "%_" matches.
    const { results } = await s.call("search_workspace", { query: "%_" });
    expect(results.map((r: any) => r.id)).toEqual(["Notes/Plain.md"]);
    const under = await s.call("search_workspace", { query: "_d" });
    expect(under.results.map((r: any) => r.id)).toEqual(["Notes/Plain.md"]);
  });

  test("an oversized .base file is refused as too-large, and still listed", async () => {
    writeFileSync(join(root, "Notes/Huge.base"), "views:\n" + "  - name: x\n".repeat(120_000));
    try {
      const r: any = await s.callRaw("get_page", { pageId: "Notes/Huge.base" });
      expect(r.kind).toBe("too-large");
      const list = await s.call("list_workspace", { parentId: "Notes" });
      expect(list.items.map((i: any) => i.id)).toContain("Notes/Huge.base");
    } finally {
      rmSync(join(root, "Notes/Huge.base"), { force: true });
    }
  });

  test("malformed frontmatter does not break packs, related pages or sources", async () => {
    const p = await s.call("prepare_context", { task: "progress bars odd properties" });
    expect(p.concepts.map((c: any) => c.id)).toContain("Notes/Odd frontmatter.md");
    const odd = p.concepts.find((c: any) => c.id === "Notes/Odd frontmatter.md");
    expect(odd.freshness.stale).toBe(false);
    expect(odd.trust).toBe("unreviewed");
    const rel = await s.call("get_related_pages", { pageId: "Notes/Odd frontmatter.md" });
    expect(rel.page.id).toBe("Notes/Odd frontmatter.md");
    const list = await s.call("list_workspace", { parentId: "Notes" });
    expect(list.items.every((i: any) => i.icon === undefined)).toBe(true);
    for (const resource of ["////", "#L1", ":42", "C:", "\\\\server\\share\\x", "http://", "x".repeat(2000), "../../etc/passwd", "\u0000"]) {
      const r = await s.call("get_related_pages", { resource });
      expect(r.pages).toEqual([]);
      expect(r.total).toBe(0);
    }
    for (const resource of ["", "x".repeat(2001)]) {
      const r = await s.rpc({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_related_pages", arguments: { resource } } });
      expect(((await r.json()) as any).error.code).toBe(-32602);
    }
  });
});

describe("the substring fallback reads a bounded number of bytes", () => {
  let big: TestServer;
  let bigRoot: string;
  beforeAll(async () => {
    bigRoot = tempDir();
    // 640 notes of ~8 KB: 5 MB of bodies, over the fallback's 4 MB budget.
    const para = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore. ".repeat(80);
    const notes: Record<string, string> = {};
    for (let i = 0; i < 640; i++) notes[`Bulk/Note ${String(i).padStart(3, "0")}.md`] = `# Note ${i}\n\n${para}\n`;
    notes["Small.md"] = "# Small\n\nfind the qz fragment\n";
    addWorkspaceNotes(bigRoot, notes);
    big = await withEnv({ LETTUCE_EMBED_PROVIDER: "none" }, () => startTestServer({ root: bigRoot }));
  });
  afterAll(async () => {
    await big?.close();
    rmSync(bigRoot, { recursive: true, force: true });
  });

  test("a fragment that is nowhere stops at the budget and says the answer is partial", async () => {
    const r = await big.call("search_workspace", { query: "zq" });
    expect(r.fallback).toBe("substring");
    expect(r.results).toEqual([]);
    expect(r.partial).toBe(true);
    // The small vault above is read whole: no partial flag there.
    const small = await s.call("search_workspace", { query: "zq" });
    expect(small.partial).toBeUndefined();
  });

  test("a common fragment fills the page early, from titles first", async () => {
    const r = await big.call("search_workspace", { query: "ote 1", limit: 5 });
    expect(r.fallback).toBe("substring");
    expect(r.results.length).toBe(5);
    expect(r.partial).toBeUndefined();
    for (const x of r.results) expect(x.matchedOn).toBe("title");
  });
});

describe("the substring fallback matches bodies folded, in linear time", () => {
  let v: TestServer;
  let vRoot: string;
  // Decomposed accents (e + U+0301) before the match: the folded body is shorter than the note, so the
  // snippet's place in the note is found again from the folded one.
  const accents = "Cafe\u0301 de\u0301ja\u0300 vu. ".repeat(300);
  beforeAll(async () => {
    vRoot = tempDir();
    const notes: Record<string, string> = {
      "Trip.md": "# Trip\n\nWe met at the Café Zürich on İstiklal street.\n",
      "Far.md": `# Far\n\n${accents}\n\nThe marker fragment sits here.\n`,
      // Past the first chunks the offset is found in (2,048 characters each), and after a character that folds to three.
      "Cyrillic.md": `# Cyrillic\n\n${"Привет мир ".repeat(600)}\n\nЗдесь ИСКОМЫЙ фрагмент.\n`,
      "Hangul.md": "# Hangul\n\n한I zqx marker\n",
    };
    // SQLite's LIKE tried the query at every place of a body: 400 "a"s and a "b" over 4 MB of "a"s took 2.2 s.
    for (let i = 0; i < 40; i++) notes[`Flat/Flat ${i}.md`] = `# Flat ${i}\n\n${"a".repeat(100_000)}\n`;
    addWorkspaceNotes(vRoot, notes);
    v = await withEnv({ LETTUCE_EMBED_PROVIDER: "none" }, () => startTestServer({ root: vRoot }));
  });
  afterAll(async () => {
    await v?.close();
    rmSync(vRoot, { recursive: true, force: true });
  });

  test("case and accents are folded in every script, as in titles", async () => {
    // Upper case with accents: LIKE folded ASCII case only, and a non-ASCII query matched as typed.
    for (const query of ["AFÉ ZÜR", "afe zur", "N İSTI"]) {
      const r = await v.call("search_workspace", { query });
      expect(r.fallback).toBe("substring");
      expect(r.results.map((x: any) => x.id)).toEqual(["Trip.md"]);
      expect(r.results[0].snippet).toContain("Café Zürich on İstiklal");
    }
  });

  test("a snippet is cut around the match in the note as written", async () => {
    const r = await v.call("search_workspace", { query: "ARKER FRAG" });
    expect(r.results.map((x: any) => x.id)).toEqual(["Far.md"]);
    expect(r.results[0].snippet).toContain("The marker fragment sits here.");
    const cyr = await v.call("search_workspace", { query: "комый фраг" });
    expect(cyr.results.map((x: any) => x.id)).toEqual(["Cyrillic.md"]);
    expect(cyr.results[0].snippet).toContain("Здесь ИСКОМЫЙ фрагмент.");
    const han = await v.call("search_workspace", { query: "i zqx" });
    expect(han.results.map((x: any) => x.id)).toEqual(["Hangul.md"]);
    expect(han.results[0].snippet).toContain("한I zqx marker");
  });

  test("a query that nearly matches everywhere costs the bodies' length, not that times the query", async () => {
    const t = performance.now();
    const r = await v.call("search_workspace", { query: `${"a".repeat(400)}b` });
    expect(r.results).toEqual([]);
    expect(performance.now() - t).toBeLessThan(1000);
  });
});
