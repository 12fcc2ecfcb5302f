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
};

const BASES: Record<string, string> = {
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
});
