// Obsidian Bases as Obsidian's own help writes them (corpora obsidian-help/en/Bases/): formula names
// that are not identifiers, dates read from frontmatter, file properties, paging order. Through the
// real server over a temp vault.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";
import { write } from "./helpers/workspace-data";

const NOTES: Record<string, string> = {
  "Tasks/Alpha.md": "---\npriority: 2\ndue: 2026-03-01\nstart: 2026-03-01T10:00:00Z\n---\n# Alpha\n\nSee [[Beta]] and ![[Gamma]].\n",
  "Tasks/Beta.md": "---\npriority: 5\ndue: 2026-04-15\n---\n# Beta\n\nBack to [[Alpha]].\n",
  "Tasks/Gamma.md": "---\npriority: 1\n---\n# Gamma\n",
  "Tasks/Delta.md": "# Delta\n\nNobody links here.\n",
  "Paging/😀 Emoji.md": "# Emoji\n",
  "Paging/Ｆull.md": "# Full\n",
  "Paging/plain.md": "# plain\n",
  "Case/A.md": "---\nOwner: Ada\nStatus: open\n---\n# A\n",
  "Case/B.md": "---\nowner: Bob\nstatus: done\n---\n# B\n",
  "Case/C.md": "---\nowner: Cy\n---\n# C\n",
  "Paging/𐀀 Linear B.md": "# Linear B\n",
  "Odd/Bad.md": "---\ndue: 2026-02-30\n---\n# Bad\n",
};

const BASES: Record<string, string> = {
  // A day the calendar lacks is text, not the day it rolls over to (review of the change).
  "Odd.base": `filters: 'file.inFolder("Odd")'
formulas:
  year: 'due.year'
  next: 'due + "1d"'
  rolled: 'due == date("2026-03-02")'
views:
  - type: table
    name: T
    order: [due, formula.year, formula.next, formula.rolled]
`,
  "Names.base": `filters: 'file.inFolder("Tasks")'
formulas:
  My Formula: 'priority * 2'
  price-per: 'priority + 1'
  1x: 'priority'
properties:
  formula.My Formula:
    displayName: Doubled
views:
  - type: table
    name: T
    order: [file.name, formula.My Formula, formula.price-per, formula.1x]
`,
  // Formulas.md's deadline example (start_date + "2w") and Bases syntax.md's date arithmetic and fields, over dates as
  // frontmatter holds them: strings.
  "Dates.base": `filters: 'file.inFolder("Tasks")'
formulas:
  deadline: 'due + "2w"'
  year: 'due.year'
  days: '(due - date("2026-02-27")) / 86400000'
  left: '(due - today()) / 86400000'
  ms: 'number(due)'
  day: 'start.date()'
  same: 'due'
  march: 'due.contains("-03-")'
  label: 'due + "!"'
views:
  - type: table
    name: T
    order: [due, start, formula.deadline, formula.year, formula.days, formula.left, formula.ms, formula.day, formula.same, formula.march, formula.label]
`,
  "Soon.base": `filters:
  and:
    - file.inFolder("Tasks")
    - 'due + "30d" > date("2026-04-01")'
`,
  "Linked.base": `filters:
  and:
    - file.inFolder("Tasks")
    - file.backlinks.length > 0
views:
  - type: table
    name: T
    order: [file.backlinks, file.embeds, file.nosuch]
`,
  "Paging.base": `filters: 'file.inFolder("Paging")'\n`,
  "Chain.base": `filters: 'file.inFolder("Tasks")'
formulas:
  a: 'file.hasLink(this.file)'
  b: 'formula.a + "!"'
  c: 'formula.nope + 1'
  d: 'priority + 1'
views:
  - type: table
    name: T
    order: [formula.b, formula.c, formula.d]
`,
  "NopeFilter.base": `filters: 'formula.nope == null'\n`,
  "Case.base": `filters: 'file.inFolder("Case")'\n`,
  "Numbers.base": `filters: 'file.inFolder("Case")'
formulas:
  s: '123.toString()'
  t: '1.isTruthy()'
  f: '2.5.toFixed(2)'
  n: '1.5 + .5'
views:
  - type: table
    name: T
    order: [formula.s, formula.t, formula.f, formula.n]
`,
  "Far.base": `filters:
  and:
    - file.inFolder("Tasks")
    - 'now() + "999999999999y" + "x" != ""'
formulas:
  far: 'due + "9999999999y"'
views:
  - type: table
    name: T
    order: [formula.far]
`,
  "FileFile.base": `filters: 'file.file == null'\n`,
  "FileIndex.base": `filters: 'file["nosuch"] == null'\n`,
};

describe("Bases as Obsidian's help writes them", () => {
  let s: TestServer;
  let root: string;
  beforeAll(async () => {
    root = tempDir("lettuce-bases-obsidian-");
    for (const [p, c] of Object.entries(NOTES)) write(root, p, c);
    for (const [p, c] of Object.entries(BASES)) write(root, p, c);
    s = await startTestServer({ root });
  });
  afterAll(async () => {
    await s?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const rowsOf = async (databaseId: string, extra: Record<string, unknown> = {}) => {
    const res = await s.call("query_database", { databaseId, limit: 500, ...extra });
    return Object.fromEntries(res.rows.map((r: any) => [r.id, r.properties]));
  };

  test("a formula whose name is not an identifier (a space, a dash, a leading digit) is a column by that name", async () => {
    const schema = await s.call("get_database_schema", { databaseId: "Names.base" });
    const byId = Object.fromEntries(schema.schema.map((c: any) => [c.id, c]));
    expect(byId["formula.My Formula"]).toMatchObject({ name: "Doubled", type: "number" });
    for (const id of ["formula.My Formula", "formula.price-per", "formula.1x"]) expect(byId[id].error).toBeUndefined();
    const rows = await rowsOf("Names.base");
    expect(rows["Tasks/Alpha.md"]).toMatchObject({ "formula.My Formula": 4, "formula.price-per": 3, "formula.1x": 2 });
    expect(rows["Tasks/Beta.md"]).toMatchObject({ "formula.My Formula": 10, "formula.price-per": 6, "formula.1x": 5 });
  });

  test("a frontmatter date (YYYY-MM-DD or a date-time) is a date in formulas and filters, and keeps its text", async () => {
    const rows = await rowsOf("Dates.base");
    const alpha = rows["Tasks/Alpha.md"];
    expect(alpha).toMatchObject({ due: "2026-03-01", start: "2026-03-01T10:00:00Z" });
    expect(alpha["formula.deadline"]).toBe("2026-03-15");
    expect(alpha["formula.year"]).toBe(2026);
    expect(alpha["formula.days"]).toBe(2);
    expect(typeof alpha["formula.left"]).toBe("number");
    expect(alpha["formula.ms"]).toBe(new Date(2026, 2, 1).getTime());
    const local = new Date(Date.parse("2026-03-01T10:00:00Z"));
    const two = (n: number) => String(n).padStart(2, "0");
    expect(alpha["formula.day"]).toBe(`${local.getFullYear()}-${two(local.getMonth() + 1)}-${two(local.getDate())}`);
    expect(alpha["formula.same"]).toBe("2026-03-01");
    expect(alpha["formula.march"]).toBe(true);
    expect(alpha["formula.label"]).toBe("2026-03-01!");
    expect(rows["Tasks/Beta.md"]["formula.deadline"]).toBe("2026-04-29");
    expect(rows["Tasks/Gamma.md"]["formula.year"]).toBeUndefined();
    const schema = await s.call("get_database_schema", { databaseId: "Dates.base" });
    expect(schema.schema.find((c: any) => c.id === "formula.same").type).toBe("date");
    expect(Object.keys(await rowsOf("Soon.base"))).toEqual(["Tasks/Beta.md"]);
  });

  test("a frontmatter day the calendar lacks (2026-02-30) is text, not March 2nd", async () => {
    const bad = (await rowsOf("Odd.base"))["Odd/Bad.md"];
    expect(bad["formula.year"]).toBeUndefined();
    expect(bad["formula.next"]).toBe("2026-02-301d");
    expect(bad["formula.rolled"]).toBe(false);
  });

  test("file.backlinks and file.embeds are lists of paths; any other file.x is unsupported-expression naming it", async () => {
    const rows = await rowsOf("Linked.base");
    expect(Object.keys(rows)).toEqual(["Tasks/Alpha.md", "Tasks/Beta.md", "Tasks/Gamma.md"]);
    expect(rows["Tasks/Alpha.md"]).toMatchObject({ "file.backlinks": ["Tasks/Beta.md"], "file.embeds": ["Tasks/Gamma.md"] });
    expect(rows["Tasks/Gamma.md"]["file.backlinks"]).toEqual(["Tasks/Alpha.md"]);
    expect(rows["Tasks/Beta.md"]["file.embeds"]).toBeUndefined();
    const schema = await s.call("get_database_schema", { databaseId: "Linked.base" });
    const col = schema.schema.find((c: any) => c.id === "file.nosuch");
    expect(col.error).toContain("file.nosuch");
    for (const [id, what] of [["FileFile.base", "file.file"], ["FileIndex.base", "file.nosuch"]]) {
      for (const tool of ["query_database", "get_database_schema"]) {
        const res: any = await s.callRaw(tool, { databaseId: id });
        expect(res.kind).toBe("unsupported-expression");
        expect(res.content[0].text).toContain(what);
      }
    }
  });

  test("paging with limit 1 returns every row when paths mix emoji and characters in U+E000–U+FFFF", async () => {
    const all = Object.keys(await rowsOf("Paging.base"));
    expect(all.length).toBe(4);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 10; i++) {
      const page = await s.call("query_database", { databaseId: "Paging.base", limit: 1, ...(cursor ? { cursor } : {}) });
      seen.push(...page.rows.map((r: any) => r.id));
      if (!page.hasMore) break;
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(all);
    expect(seen).toContain("Paging/😀 Emoji.md");
  });

  test("a formula using one that cannot be evaluated, or one that does not exist, has an error; a filter naming a missing formula is refused", async () => {
    const schema = await s.call("get_database_schema", { databaseId: "Chain.base" });
    const byId = Object.fromEntries(schema.schema.map((c: any) => [c.id, c]));
    expect(byId["formula.b"].error).toContain("this");
    expect(byId["formula.c"].error).toContain("nope");
    expect(byId["formula.d"].error).toBeUndefined();
    const rows = await rowsOf("Chain.base");
    expect(rows["Tasks/Alpha.md"]).toEqual({ "formula.d": 3, priority: 2, due: "2026-03-01", start: "2026-03-01T10:00:00Z" });
    for (const tool of ["query_database", "get_database_schema"]) {
      const res: any = await s.callRaw(tool, { databaseId: "NopeFilter.base" });
      expect(res.kind).toBe("unsupported-expression");
      expect(res.content[0].text).toContain("formula.nope");
    }
  });

  test("property names differing only in case are one column, spelt as most rows spell it (the first seen on a tie)", async () => {
    const schema = await s.call("get_database_schema", { databaseId: "Case.base" });
    expect(schema.schema.map((c: any) => c.id)).toEqual(["owner", "Status"]);
    const rows = await rowsOf("Case.base");
    expect(rows).toEqual({
      "Case/A.md": { owner: "Ada", Status: "open" },
      "Case/B.md": { owner: "Bob", Status: "done" },
      "Case/C.md": { owner: "Cy" },
    });
  });

  test("a number followed by a method is a method call (123.toString(), 1.isTruthy())", async () => {
    const schema = await s.call("get_database_schema", { databaseId: "Numbers.base" });
    for (const c of schema.schema) expect(c.error).toBeUndefined();
    const rows = await rowsOf("Numbers.base");
    expect(rows["Case/C.md"]).toMatchObject({ "formula.s": "123", "formula.t": true, "formula.f": "2.50", "formula.n": 2 });
  });

  test("a date moved past the calendar's end is no date (null, \"Invalid Date\" as text), never an internal error", async () => {
    const rows = await rowsOf("Far.base");
    expect(Object.keys(rows).length).toBe(4);
    expect(rows["Tasks/Alpha.md"]["formula.far"]).toBeUndefined();
  });
});
