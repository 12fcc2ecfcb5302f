// Hostile note text through the tools (the audit of 2026-12-05, afternoon): code beyond the parser that
// reads one note's text on the thread answering every caller, or in a read worker. Each case is sized
// so that the old code runs well past its test's time limit; the fixed code takes a small part of it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MAX_INDEXED_ROWS } from "../lib/store/index-db";
import { SemanticService } from "../lib/semantic/service";
import { parseSearchQuery } from "../lib/retrieval/fts-query";
import { buildSnippet } from "../lib/retrieval/snippet";
import { findAll, findText } from "../lib/text-find";
import { startTestServer, type TestServer } from "./helpers/server";

describe("hostile text through the tools", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s?.close());

  /** Write notes straight to disk and index them, as a person's save (or another tool) would leave them. */
  async function put(files: Record<string, string>): Promise<void> {
    for (const [path, text] of Object.entries(files)) writeFileSync(join(s.root, path), text);
    await s.vault.indexer.update(Object.keys(files));
  }

  /** The slowest ping another caller waited for while `work` ran, and how long the work took. */
  async function worstPing<T>(work: () => Promise<T>): Promise<{ result: T; worst: number; took: number }> {
    let worst = 0;
    let busy = true;
    const t0 = performance.now();
    const running = work().finally(() => (busy = false));
    while (busy) {
      const t = performance.now();
      await s.rpc({ jsonrpc: "2.0", id: 1, method: "ping" });
      worst = Math.max(worst, performance.now() - t);
    }
    const result = await running;
    return { result, worst, took: performance.now() - t0 };
  }

  // The link rewriter's own Markdown-link and code-span patterns rescanned a line from every '[' or '`':
  // a 250 KB line took 36 s per backlinking note.
  test("move_note rewrites links in a note with a 250 KB line of '['", async () => {
    // And a line of 100,000 links to it: each rewrite was spliced in by copying the rest of the line (1 MB: ~30 s).
    await put({
      "Moved.md": "# Moved\n",
      "Linker.md": `[[Moved]] ${"[".repeat(250_000)}\n`,
      "Ticks.md": `[[Moved]] ${"`".repeat(250_000)}\n`,
      "Many links.md": `${"[[Moved]] ".repeat(100_000)}\n`,
    });
    const res = await s.call("move_note", { from: "Moved.md", to: "Sub/Moved here.md" });
    expect(res.path).toBe("Sub/Moved here.md");
    expect(res.notesUpdated.sort()).toEqual(["Linker.md", "Many links.md", "Ticks.md"]);
    expect(res.linksUpdated).toBe(100_002);
    expect(readFileSync(join(s.root, "Linker.md"), "utf8").startsWith("[[Moved here]] [[[")).toBe(true);
    expect(readFileSync(join(s.root, "Ticks.md"), "utf8").startsWith("[[Moved here]] ```")).toBe(true);
  }, 10_000);

  // move_note parsed each backlinking note on the request thread (linear: an 8 MB note ~0.6 s); with many
  // big ones, other callers waited for all of them. They now get a turn between notes (and a big one is
  // parsed in a read worker: the next test).
  test("other callers get turns while move_note reads many big backlinking notes", async () => {
    const files: Record<string, string> = { "Hub target.md": "# Hub target\n" };
    // Notes as people write them (lists, nested items, code), which take the parser's full path.
    const filler = "- an item with `code`\n    - a nested item\n\n```\ncode\n```\n\nA paragraph of prose.\n".repeat(25_000);
    for (let i = 0; i < 8; i++) files[`Big backlink ${i}.md`] = `See [[Hub target]].\n\n${filler}`;
    await put(files);
    const { result: res, worst, took } = await worstPing(() => s.call("move_note", { from: "Hub target.md", to: "Moved/Hub renamed.md" }));
    expect(res.notesUpdated.length).toBe(8);
    // Out of the way of the later tests' whole-vault passes.
    for (const path of res.notesUpdated) rmSync(join(s.root, path));
    await s.vault.indexer.update(res.notesUpdated);
    // Measured: the worst ping a tenth of the move's time with turns, two fifths without (the parse of all eight).
    expect(worst).toBeLessThan(took / 4);
  }, 30_000);

  // One huge backlinking note: turns between notes do not help, so it is parsed in a read worker.
  test("other callers are answered while move_note parses one huge backlinking note", async () => {
    const filler = "- an item with `code` and *emphasis*\n    - a nested item\n\n```\ncode\n```\n\nA paragraph of prose.\n".repeat(60_000);
    await put({ "Huge target.md": "# Huge target\n", "Huge backlink.md": `See [[Huge target]].\n\n${filler}\nAnd [[Huge target|again]].\n` });
    const { result: res, worst, took } = await worstPing(() => s.call("move_note", { from: "Huge target.md", to: "Moved/Huge renamed.md" }));
    expect(res.notesUpdated).toEqual(["Huge backlink.md"]);
    expect(res.linksUpdated).toBe(2);
    const text = readFileSync(join(s.root, "Huge backlink.md"), "utf8");
    expect(text.startsWith("See [[Huge renamed]].")).toBe(true);
    expect(text.endsWith("And [[Huge renamed|again]].\n")).toBe(true);
    // Out of the way of the later tests' whole-vault passes.
    rmSync(join(s.root, "Huge backlink.md"));
    await s.vault.indexer.update(["Huge backlink.md"]);
    // Measured (5 MB): the worst ping half the move's time with the parse here, a twentieth with it in a worker.
    expect(worst).toBeLessThan(took / 4);
  }, 30_000);

  // Each link, tag, heading, @mention and directive is a row written on the thread answering every caller:
  // a write token saving 2 MiB notes of 340,000 links held it 0.9 s a write. The index keeps 20,000 of each.
  test("other callers are answered while an agent writes notes of hundreds of thousands of links, headings and tags", async () => {
    const shapes = {
      links: "[[a]] ".repeat(340_000),
      headings: "# h\n".repeat(500_000),
      tags: Array.from({ length: 200_000 }, (_, i) => `#t${i}`).join(" "),
      mentions: "@someone said\n".repeat(140_000),
    };
    let worst = 0;
    let took = 0;
    for (const [name, content] of Object.entries(shapes)) {
      const one = await worstPing(() => s.call("write_note", { path: `Rows/${name}.md`, content }));
      worst = Math.max(worst, one.worst);
      took = Math.max(took, one.took);
    }
    const rows = s.vault.indexDb.query("SELECT count(*) AS n FROM links l JOIN notes n ON n.id = l.note_id WHERE n.path = 'Rows/links.md'").get() as { n: number };
    expect(rows.n).toBe(MAX_INDEXED_ROWS);
    // Measured: the worst ping most of a write's time with every row, a fifth of it with the cap.
    expect(worst).toBeLessThan(took / 2);
    for (const name of Object.keys(shapes)) rmSync(join(s.root, `Rows/${name}.md`));
    await s.vault.indexer.update(Object.keys(shapes).map((n) => `Rows/${n}.md`));
  }, 60_000);

  // A link past the index's cap is no backlink row: move_note reads the notes at the cap whole as well.
  test("move_note rewrites a link that comes after a note's first 20,000", async () => {
    await put({ "Late.md": "# Late\n", "Capped.md": `${"[[Elsewhere]] ".repeat(MAX_INDEXED_ROWS)}\nand [[Late]]\n`, "Small.md": "[[Late]]\n" });
    const res = await s.call("move_note", { from: "Late.md", to: "Later.md" });
    expect(res.notesUpdated.sort()).toEqual(["Capped.md", "Small.md"]);
    expect(readFileSync(join(s.root, "Capped.md"), "utf8").endsWith("and [[Later]]\n")).toBe(true);
    for (const path of ["Capped.md", "Small.md", "Later.md"]) rmSync(join(s.root, path));
    await s.vault.indexer.update(["Capped.md", "Small.md", "Later.md"]);
  });

  // The snippet's markup test scanned to the line's end from every "![" or "<a": ~1 s per hit.
  test("search_workspace over ten notes of 64 KB lines of '![' and '<a'", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 10; i++) files[`Markup ${i}.md`] = `zyxmarkup ${(i % 2 ? "<a" : "![").repeat(32 * 1024)}\n`;
    await put(files);
    const res = await s.call("search_workspace", { query: "zyxmarkup" }, "read");
    expect(res.results.filter((r: { id: string }) => r.id.startsWith("Markup")).length).toBe(10);
  }, 3_000);

  // String `contains` in a base costs the product of the lengths natively: a 128 KB value and a 64 KB needle that
  // nearly matches took seconds per note, and the pass's clock is read only every 1,024 steps.
  test("a base whose filter looks for a long near-match in a long value", async () => {
    const K = 17;
    let y = `filters: 'formula.a${K}.contains(formula.needle)'\nformulas:\n  a0: '"a"'\n`;
    for (let i = 1; i <= K; i++) y += `  a${i}: 'formula.a${i - 1} + formula.a${i - 1}'\n`;
    y += `  needle: 'formula.a${K - 2} + "b" + formula.a${K - 2}'\n`;
    writeFileSync(join(s.root, "Near match.base"), y);
    await s.vault.indexer.update(["Near match.base"]);
    const res = await s.call("list_workspace", {}, "read");
    expect(JSON.stringify(res)).toContain("Near match");
  }, 5_000);

  /** A base whose formula c8 lowers a 512 KB value 3,200 times: about a second a row. */
  function costlyBase(filter: string): string {
    let y = `filters: '${filter}'\nformulas:\n  a0: '"a"'\n`;
    for (let i = 1; i <= 19; i++) y += `  a${i}: 'formula.a${i - 1} + formula.a${i - 1}'\n`;
    y += "  c0: 'formula.a19'\n";
    for (let j = 1; j <= 8; j++) y += `  c${j}: 'formula.c${j - 1}${".lower()".repeat(400)}'\n`;
    return y;
  }

  // A filter past its budget was evaluated again, a second each time, after every write to the vault.
  test("a base whose filter runs past its budget is not evaluated again after each write", async () => {
    await put({ "Costly filter.base": costlyBase('formula.c8.contains("b")'), "Row 1.md": "# Row 1\n" });
    const first = await s.callRaw("get_database_schema", { databaseId: "Costly filter.base" }, "read");
    expect(JSON.parse(first.content[0].text).kind).toBe("unsupported-expression");
    const t0 = performance.now();
    for (let i = 2; i <= 4; i++) {
      await put({ [`Row ${i}.md`]: `# Row ${i}\n` });
      const again = await s.callRaw("get_database_schema", { databaseId: "Costly filter.base" }, "read");
      expect(JSON.parse(again.content[0].text).kind).toBe("unsupported-expression");
    }
    expect(performance.now() - t0).toBeLessThan(1_500); // three writes and calls, no second second
  }, 10_000);

  // A computed column was read with a budget per row (a second each), and again on each filter or sort.
  test("a costly computed column costs a budget once, not a budget a row, and not again after each write", async () => {
    const rows: Record<string, string> = {};
    rows["Costly column.base"] = `${costlyBase('file.name.startsWith("Column row")')}views:\n  - type: table\n    name: T\n    order: [file.name, formula.c8]\n`;
    for (let i = 0; i < 8; i++) rows[`Column row ${i}.md`] = `# Column row ${i}\n`;
    await put(rows);
    const t0 = performance.now();
    const schema = await s.call("get_database_schema", { databaseId: "Costly column.base" }, "read");
    const first = performance.now() - t0;
    const c8 = schema.schema.find((c: { id: string }) => c.id === "formula.c8");
    expect(c8.error).toMatch(/takes more than/);
    const page = await s.call("query_database", { databaseId: "Costly column.base" }, "read");
    expect(page.rows.length).toBe(8);
    // After a write, the column's verdict stands (as a costly filter's does): not its budget paid again.
    await put({ "Column row 8.md": "# Column row 8\n" });
    const t1 = performance.now();
    const again = await s.call("get_database_schema", { databaseId: "Costly column.base" }, "read");
    expect(again.schema.find((c: { id: string }) => c.id === "formula.c8").error).toMatch(/takes more than/);
    expect(performance.now() - t1).toBeLessThan(first / 3);
  }, 10_000);

  // One find that nearly matches everywhere in a long note: the native search cost 1 MB × 40 KB.
  test("apply_edits with a 40 KB find that nearly matches everywhere in a 1 MB note", async () => {
    await put({ "Long.md": `${"a".repeat(1_000_000)}\n` });
    const find = `${"a".repeat(20_000)}b${"a".repeat(20_000)}`;
    const res = await s.callRaw("apply_edits", { path: "Long.md", edits: [{ find, replace: "x" }] });
    expect(res.isError).toBe(true);
    expect(JSON.parse(res.content[0].text).kind).toBe("edit-no-match");
  }, 5_000);

  // The anchor pass found each link's line by scanning from the link to the line's ends: a 2 MB line of
  // links, 9 s on the request thread (in the keyword sync before a hybrid search, and serve's warm-up).
  test("the keyword sync reads anchor text from a 2 MB line of links", async () => {
    await put({ "Target note.md": "# Target note\n", "Link wall.md": `${"[[Target note]]".repeat(140_000)}\n` });
    await SemanticService.for(s.vault).syncKeywords();
    const anchors = s.vault.indexDb.query("SELECT count(*) AS n FROM anchor_lines").get() as { n: number };
    expect(anchors.n).toBeGreaterThan(0);
    // 8 s: writing and indexing the note's 140,000 links takes ~3.5 s of it on a quiet 2-core machine, up to
    // 5 s under load; the scan this guards against took 9 s for the sync alone.
  }, 8_000);

  // Its masks scanned to the line's end from every '[' or '<' (10 s for 128 KB), holding a read worker.
  test("suggest_links on a note of a 250 KB line of '[' and '<'", async () => {
    await put({ "Brackets.md": `# Brackets\n\nTarget note ${"[<".repeat(125_000)}\n` });
    const res = await s.call("suggest_links", { path: "Brackets.md" }, "read");
    expect(res.items.map((i: { targetPath: string }) => i.targetPath)).toContain("Target note.md");
  }, 5_000);
});

describe("snippets", () => {
  // An image line is markup, not prose, with one level of parentheses in its URL (the first mend's pattern
  // refused any) and at the length of a pasted image within the snippet's window.
  test("image lines, a pasted data: image among them, are not a snippet's text", () => {
    const terms = parseSearchQuery("zebra")!.positives;
    const body = `![](https://upload.wikimedia.org/wiki/File_(1))\n![](data:image/png;base64,${"QUJD".repeat(12_000)})\nThe zebra line.\n`;
    expect(buildSnippet(body.replace("The zebra line.", "No match here."), terms)).toBe("No match here.");
    expect(buildSnippet(body, terms)).toContain("zebra");
  });
});

describe("linear substring search", () => {
  test("the same answers as indexOf, overlapping matches included", () => {
    let seed = 3;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let k = 0; k < 3_000; k++) {
      const hay = Array.from({ length: Math.floor(rnd() * 400) }, () => "ab"[Math.floor(rnd() * 2)]).join("");
      const start = Math.floor(rnd() * hay.length);
      const needle = rnd() < 0.5 ? hay.slice(start, start + 65 + Math.floor(rnd() * 40)) : "ab".repeat(40).slice(Math.floor(rnd() * 2));
      if (needle.length <= 64) continue;
      const expected: number[] = [];
      for (let i = hay.indexOf(needle); i !== -1; i = hay.indexOf(needle, i + 1)) expected.push(i);
      expect(findAll(hay, needle, 1000)).toEqual(expected);
      expect(findText(hay, needle, 7)).toBe(hay.indexOf(needle, 7));
    }
  });
});
