// A note's values reach the Bases evaluator from anybody's frontmatter, and a base's schema lists what the
// rows hold: neither may hold the thread for seconds or answer megabytes (the review of 2026-12-07).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { parseDuration } from "../lib/bases/values";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";
import { write } from "./helpers/workspace-data";

const DIGITS = "1".repeat(40_000);
const SLASHES = "x" + "/".repeat(50_000) + "y";
const WIDE_KEYS = 300;

/** A list of 1,024 copies of a 512K-character string, as text: half a gigabyte unless refused first. */
function listTextBase(): string {
  let y = `filters: 'formula.l10.toString().length > 0'\nformulas:\n  s0: '"ab"'\n`;
  for (let i = 1; i <= 18; i++) y += `  s${i}: 'formula.s${i - 1} + formula.s${i - 1}'\n`;
  y += "  l0: '[formula.s18]'\n";
  for (let i = 1; i <= 10; i++) y += `  l${i}: 'formula.l${i - 1} + formula.l${i - 1}'\n`;
  return y;
}

describe("hostile note values and wide schemas through the server", () => {
  let s: TestServer;
  let root: string;
  beforeAll(async () => {
    root = tempDir();
    write(root, "Digits.md", `---\nd: "${DIGITS}"\nf: "${SLASHES}"\nstatus: open\n---\n# Digits\n`);
    for (let i = 0; i < 5; i++) write(root, `Notes/n${i}.md`, `---\nstatus: open\nitems: ["short", "${"x".repeat(5000)}${i}"]\n---\n# n${i}\n`);
    write(root, "Wide.md", "---\n" + Array.from({ length: WIDE_KEYS }, (_, i) => `key_${i}: v${i}`).join("\n") + "\n---\n# Wide\n");
    write(root, "Durations.base", `formulas:\n  dur: 'duration(note.d)'\n  later: 'file.mtime + note.d'\nviews:\n  - type: table\n    name: T\n    order: [formula.dur, formula.later]\n`);
    write(root, "Folders.base", `filters: 'file.inFolder(note.f)'\nviews:\n  - type: table\n    name: T\n`);
    write(root, "All.base", `views:\n  - type: table\n    name: T\n`);
    write(root, "ListText.base", listTextBase());
    s = await startTestServer({ root });
  });
  afterAll(async () => {
    await s?.close();
    rmSync(root, { recursive: true, force: true });
  });

  // The unanchored duration scan was retried from every digit: 30,000 digits took 4.3 s in one step.
  test("duration() and date + string on a 40,000-digit value answer at once, as no duration", async () => {
    const t0 = performance.now();
    const res = await s.call("query_database", { databaseId: "Durations.base", fields: ["formula.dur", "formula.later"], filters: { status: "open" } });
    expect(performance.now() - t0).toBeLessThan(1_500);
    const row = res.rows.find((r: any) => r.id === "Digits.md");
    expect(row.properties["formula.dur"]).toBeUndefined();
    // No duration: date + string is the two as text, as in Obsidian.
    expect(row.properties["formula.later"]).toEndWith(DIGITS);
  });

  // /^\/+|\/+$/g retried the trailing run from each of its slashes: 50,000 of them took 5 s.
  test("inFolder() of a value with a long run of slashes answers at once", async () => {
    const t0 = performance.now();
    const res = await s.callRaw("query_database", { databaseId: "Folders.base" });
    expect(performance.now() - t0).toBeLessThan(1_500);
    expect(res.isError, res.content[0].text.slice(0, 300)).toBeFalsy();
    // A note without f is in every folder (inFolder("")); Digits.md's folder is no run of slashes.
    const rows = JSON.parse(res.content[0].text).rows.map((r: any) => r.id);
    expect(rows).toContain("Wide.md");
    expect(rows).not.toContain("Digits.md");
  });

  test("a list is refused as text before it is spelt out past the longest value", async () => {
    const res = await s.callRaw("query_database", { databaseId: "ListText.base" });
    expect(res.kind).toBe("unsupported-expression");
    expect(JSON.parse(res.content[0].text).error).toMatch(/a list as text.*longer than/);
  });

  test("a schema shows at most 100 columns and says how many there are; the rest still answer to fields and filters", async () => {
    const schema = await s.call("get_database_schema", { databaseId: "All.base" });
    expect(schema.schema.length).toBe(100);
    expect(schema.schemaTotal).toBe(WIDE_KEYS + 4); // + d, f, status, items
    const ids = schema.schema.map((c: any) => c.id);
    expect(ids.slice(0, 2)).toEqual(["status", "items"]); // the most used first
    const one = await s.callRaw("query_database", { databaseId: "All.base", limit: 1, filters: { key_0: "v0" } });
    expect(one.content[0].text.length).toBeLessThan(40_000);
    const body = JSON.parse(one.content[0].text);
    expect(body.schema.length).toBe(100);
    expect(body.schemaTotal).toBe(WIDE_KEYS + 4);
    const hidden = `key_${WIDE_KEYS - 1}`;
    expect(ids).not.toContain(hidden);
    const picked = await s.call("query_database", { databaseId: "All.base", fields: [hidden], filters: { [hidden]: `v${WIDE_KEYS - 1}` } });
    expect(picked.rows.map((r: any) => r.id)).toEqual(["Wide.md"]);
    expect(picked.rows[0].properties).toEqual({ [hidden]: `v${WIDE_KEYS - 1}` });
    expect(picked.schema).toEqual([{ id: hidden, name: hidden, type: "select", options: [`v${WIDE_KEYS - 1}`] }]);
    expect(picked.schemaTotal).toBeUndefined();
    const bad = await s.callRaw("query_database", { databaseId: "All.base", fields: ["nosuch"] });
    expect(JSON.parse(bad.content[0].text).error).toMatch(/and 204 more/);
  });

  test("multi_select options longer than a select's are left out of the schema", async () => {
    const schema = await s.call("get_database_schema", { databaseId: "All.base" });
    const items = schema.schema.find((c: any) => c.id === "items");
    expect(items).toEqual({ id: "items", name: "items", type: "multi_select", options: ["short"] });
  });
});

describe("parseDuration", () => {
  test("reads what it read before", () => {
    const d = (s: string) => {
      const v = parseDuration(s);
      return v && [v.months, v.ms];
    };
    expect(d("1d 2h")).toEqual([0, 86_400_000 + 7_200_000]);
    expect(d(" 2 weeks ")).toEqual([0, 14 * 86_400_000]);
    expect(d("1y2M")).toEqual([14, 0]);
    expect(d("1.5h")).toEqual([0, 5_400_000]);
    expect(d("-1d")).toEqual([0, -86_400_000]);
    expect(d("1d-2h")).toEqual([0, 86_400_000 - 7_200_000]);
    for (const bad of ["", "d", "1", "1x", "d1", "1d x", "x 1d", "1.5.3d", "1dd"]) expect(d(bad)).toBeNull();
  });

  test("refuses what no duration is, at once", () => {
    const t0 = performance.now();
    expect(parseDuration(DIGITS)).toBeNull();
    expect(parseDuration("1d ".repeat(20_000))).toBeNull();
    expect(parseDuration("1".repeat(20_000) + "d")).toBeNull();
    expect(performance.now() - t0).toBeLessThan(50);
  });
});
