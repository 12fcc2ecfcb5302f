// Databases are Obsidian Bases: get_database_schema and query_database through
// the real server, over .base files written as Obsidian writes them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { basesContainingNote, databaseRowInfo, listBases } from "../lib/bases";
import { describeWithCorpus } from "./helpers/corpora";
import { copyVault, OBSIDIAN_HELP, startTestServer, waitFor, type TestServer } from "./helpers/server";
import { EXPECTED, makeProjectVault, TASKS, taskContent, write } from "./helpers/workspace-data";

const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

async function allRows(s: TestServer, args: Record<string, unknown>, limit = 2) {
  const out: any[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 100; i++) {
    const page = await s.call("query_database", { ...args, limit, ...(cursor ? { cursor } : {}) });
    out.push(...page.rows);
    if (!page.hasMore) {
      expect(page.nextCursor).toBeUndefined();
      return out;
    }
    expect(typeof page.nextCursor).toBe("string");
    cursor = page.nextCursor;
  }
  throw new Error("paging did not end");
}

describe("Bases over a project vault", () => {
  let s: TestServer;
  let root: string;
  beforeAll(async () => {
    root = makeProjectVault();
    s = await startTestServer({ root, watch: true });
  });
  afterAll(async () => {
    await s?.close();
    rmSync(root, { recursive: true, force: true });
  });

  test("rows are the notes the base's filters select (inFolder + ext), in path order", async () => {
    const res = await s.call("query_database", { databaseId: "Tasks.base" });
    expect(ids(res.rows)).toEqual(EXPECTED.tasks());
    expect(res.hasMore).toBe(false);
    const fix = res.rows.find((r: any) => r.id === "Tasks/Fix login bug.md");
    expect(fix.title).toBe("Fix login bug");
    expect(fix.properties).toMatchObject({ status: "doing", priority: 1, due: "2026-03-01", tags: ["bug", "auth"], done: false, owner: "Ada", "file.name": "Fix login bug.md" });
    expect(fix.content).toBeUndefined();
  });

  test("and / or / not, hasTag (nested and inline tags), comparisons", async () => {
    expect(ids((await s.call("query_database", { databaseId: "Boards/Auth.base" })).rows)).toEqual(EXPECTED.auth());
    expect(ids((await s.call("query_database", { databaseId: "Ships.base" })).rows)).toEqual(EXPECTED.ships());
  });

  test("schema: configured properties with display names, view columns, then frontmatter keys, with inferred types", async () => {
    const res = await s.call("get_database_schema", { databaseId: "Tasks.base" });
    expect(res.name).toBe("Tasks");
    const byId = Object.fromEntries(res.schema.map((c: any) => [c.id, c]));
    expect(res.schema.slice(0, 3).map((c: any) => c.id)).toEqual(["status", "file.name", "priority"]);
    expect(byId.status).toMatchObject({ name: "Status", type: "select" });
    expect([...byId.status.options].sort()).toEqual([...new Set(TASKS.map((t) => t.fm.status))].sort());
    expect(byId["file.name"]).toMatchObject({ name: "Task", type: "text" });
    expect(byId.priority).toMatchObject({ name: "Priority", type: "number" });
    expect(byId.due.type).toBe("date");
    expect(byId.done.type).toBe("checkbox");
    expect(byId.tags.type).toBe("multi_select");
    expect([...byId.tags.options].sort()).toEqual([...new Set(TASKS.flatMap((t) => t.fm.tags ?? []))].sort());
    expect(res.views.map((v: any) => v.id)).toEqual(["All tasks", "Open"]);
    expect(res.views[1].config).toMatchObject({ type: "table", filters: { and: ['status != "done"'] }, order: ["file.name", "status"], limit: 20 });
    expect(res.views[0].config.sort).toEqual([{ property: "due", direction: "ASC" }]);
  });

  test("a base with no views has an implicit Table view", async () => {
    const res = await s.call("get_database_schema", { databaseId: "Ships.base" });
    expect(res.views).toEqual([{ id: "Table", name: "Table", config: { type: "table" } }]);
  });

  test("filters by select, multi-select (every value), number, boolean and null; fields by id or name", async () => {
    const q = (filters: object, fields?: string[]) => s.call("query_database", { databaseId: "Tasks.base", filters, ...(fields ? { fields } : {}) });
    expect(ids((await q({ status: "TODO" })).rows)).toEqual(TASKS.filter((t) => t.fm.status === "todo").map((t) => t.path).sort());
    expect(ids((await q({ Status: "done" })).rows)).toEqual(TASKS.filter((t) => t.fm.status === "done").map((t) => t.path).sort());
    expect(ids((await q({ tags: ["auth", "security"] })).rows)).toEqual(TASKS.filter((t) => t.fm.tags?.includes("auth") && t.fm.tags.includes("security")).map((t) => t.path));
    expect(ids((await q({ priority: 2 })).rows)).toEqual(TASKS.filter((t) => t.fm.priority === 2).map((t) => t.path).sort());
    expect(ids((await q({ done: true })).rows)).toEqual(TASKS.filter((t) => t.fm.done).map((t) => t.path).sort());
    expect(ids((await q({ due: null })).rows)).toEqual(TASKS.filter((t) => !t.fm.due).map((t) => t.path).sort());
    const projected = await q({ owner: "ada" }, ["Status", "PRIORITY"]);
    expect(projected.schema.map((c: any) => c.id)).toEqual(["status", "priority"]);
    for (const r of projected.rows) expect(Object.keys(r.properties).sort()).toEqual(["priority", "status"]);
    expect(projected.rows.every((r: any) => typeof r.title === "string" && r.content === undefined)).toBe(true);
  });

  test('row bodies only with "content" in fields', async () => {
    const res = await s.call("query_database", { databaseId: "Tasks.base", fields: ["content"], filters: { owner: "Grace" } });
    expect(res.schema).toEqual([]);
    for (const r of res.rows) {
      const t = TASKS.find((x) => x.path === r.id)!;
      expect(r.content).toBe(`# ${t.title}\n\n${t.body}`);
      expect(r.properties).toEqual({});
    }
  });

  test("cursor paging covers every row once, and stays stable while notes are created and deleted", async () => {
    const first = await s.call("query_database", { databaseId: "Tasks.base", limit: 2 });
    expect(first.hasMore).toBe(true);
    // Between pages: delete a row already served, delete one not yet served, add one after the cursor.
    const served = ids(first.rows);
    const expected = EXPECTED.tasks();
    const notYet = expected.filter((p) => p > served[served.length - 1]!);
    unlinkSync(join(root, served[0]!));
    unlinkSync(join(root, notYet[notYet.length - 1]!));
    write(root, "Tasks/Zebra.md", "---\nstatus: todo\n---\n# Zebra\n");
    await waitFor(async () => (await s.call("query_database", { databaseId: "Tasks.base", filters: { status: "todo" }, fields: [] })).rows.some((r: any) => r.id === "Tasks/Zebra.md"), { what: "the watcher" });
    const rest: string[] = [];
    let cursor = first.nextCursor;
    while (cursor) {
      const page = await s.call("query_database", { databaseId: "Tasks.base", limit: 2, cursor });
      rest.push(...ids(page.rows));
      cursor = page.hasMore ? page.nextCursor : undefined;
    }
    const seen = [...served, ...rest];
    expect(new Set(seen).size).toBe(seen.length);
    expect(rest).toEqual([...notYet.slice(0, -1), "Tasks/Zebra.md"]);
    // restore
    for (const t of TASKS) if (t.path === served[0] || t.path === notYet[notYet.length - 1]) write(root, t.path, taskContent(t));
    unlinkSync(join(root, "Tasks/Zebra.md"));
    await waitFor(async () => ids((await s.call("query_database", { databaseId: "Tasks.base" })).rows).join() === EXPECTED.tasks().join(), { what: "restore" });
  });

  test("full paging with a small limit returns exactly the unpaged rows", async () => {
    expect(ids(await allRows(s, { databaseId: "Boards/Auth.base" }, 1))).toEqual(EXPECTED.auth());
  });

  test("an unsupported expression is reported by name, never treated as match-all", async () => {
    for (const tool of ["query_database", "get_database_schema"]) {
      const res = await s.callRaw(tool, { databaseId: "Broken/Linked.base" });
      expect(res.isError).toBe(true);
      expect(res.kind).toBe("unsupported-expression");
      const body = JSON.parse(res.content[0].text);
      expect(body.expression).toBe("file.hasLink(this.file)");
      expect(body.unsupported).toContain("this");
    }
  });

  test("bad YAML is invalid-base; missing, non-base and escaping ids are refused", async () => {
    const bad = await s.callRaw("query_database", { databaseId: "Broken/Garbled.base" });
    expect(bad.kind).toBe("invalid-base");
    expect((await s.callRaw("get_database_schema", { databaseId: "Nope.base" })).kind).toBe("database-not-found");
    expect((await s.callRaw("get_database_schema", { databaseId: "Projects/Lettuce.md" })).kind).toBe("database-not-found");
    expect((await s.callRaw("get_database_schema", { databaseId: "../../etc/passwd.base" })).kind).toBe("path-invalid");
    expect((await s.callRaw("get_database_schema", { databaseId: "%2e%2e/x.base" })).kind).toBe("path-invalid");
    // ".base" may be left off, as agents do.
    expect((await s.call("get_database_schema", { databaseId: "Tasks" })).name).toBe("Tasks");
  });

  test("bad filters, fields and cursors get invalid-input; wrong types are protocol errors", async () => {
    expect((await s.callRaw("query_database", { databaseId: "Tasks.base", filters: { nosuch: "x" } })).kind).toBe("invalid-input");
    expect((await s.callRaw("query_database", { databaseId: "Tasks.base", fields: ["nosuch"] })).kind).toBe("invalid-input");
    expect((await s.callRaw("query_database", { databaseId: "Tasks.base", cursor: "garbage!!" })).kind).toBe("invalid-input");
    const other = await s.call("query_database", { databaseId: "Boards/Auth.base", limit: 1 });
    expect((await s.callRaw("query_database", { databaseId: "Tasks.base", cursor: other.nextCursor })).kind).toBe("invalid-input");
    const res = await s.rpc({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "query_database", arguments: { databaseId: "Tasks.base", filters: { status: { $gt: 1 } } } } });
    expect(((await res.json()) as any).error.code).toBe(-32602);
  });

  test("dates, contains, formulas: evaluated; a formula Lettuce cannot evaluate is a column with an error, not a guess", async () => {
    write(
      root,
      "Views/Due.base",
      [
        "filters:",
        "  and:",
        '    - file.inFolder("Tasks")',
        '    - \'due >= date("2026-01-01") && due < "2026-04-01"\'',
        '    - \'!tags.contains("release") || owner.lower() == "ada"\'',
        "formulas:",
        "  score: 'priority * 10 + (done ? 1 : 0)'",
        "  weight: 'priority * 10'",
        "  week_after: 'date(due) + \"1w\"'",
        "views:",
        "  - type: table",
        "    name: Due soon",
        "    order: [file.name, formula.weight, formula.week_after, formula.score]",
        "",
      ].join("\n"),
    );
    await waitFor(async () => (await s.callRaw("get_database_schema", { databaseId: "Views/Due.base" })).isError !== true, { what: "the watcher" });
    const res = await s.call("query_database", { databaseId: "Views/Due.base" });
    const want = TASKS.filter((t) => t.fm.due && t.fm.due >= "2026-01-01" && t.fm.due < "2026-04-01" && (!t.fm.tags?.includes("release") || t.fm.owner === "Ada"));
    expect(ids(res.rows)).toEqual(want.map((t) => t.path).sort());
    for (const r of res.rows) {
      const t = TASKS.find((x) => x.path === r.id)!;
      expect(r.properties["formula.weight"]).toBe(t.fm.priority! * 10);
      const d = new Date(Date.parse(t.fm.due!) + 7 * 86_400_000).toISOString().slice(0, 10);
      expect(r.properties["formula.week_after"]).toBe(d);
      expect(r.properties["formula.score"]).toBeUndefined();
    }
    const schema = await s.call("get_database_schema", { databaseId: "Views/Due.base" });
    const col = (id: string) => schema.schema.find((c: any) => c.id === id);
    expect(col("formula.weight").type).toBe("number");
    expect(col("formula.week_after").type).toBe("date");
    expect(col("formula.score").error).toContain("?");
  });

  test("the lib/bases API the workspace tools use: a row's database and siblings; a plain page has none", () => {
    const info = databaseRowInfo(s.vault, "Tasks/Triage inbox.md");
    const others = EXPECTED.tasks().filter((p) => p !== "Tasks/Triage inbox.md");
    expect(info).toEqual({
      databaseId: "Tasks.base",
      databaseTitle: "Tasks",
      siblings: { total: others.length, items: others.slice(0, 10).map((id) => ({ id, title: TASKS.find((t) => t.path === id)!.title })) },
    });
    expect(databaseRowInfo(s.vault, "Projects/Lettuce.md")).toBeNull();
    const containing = basesContainingNote(s.vault, "Tasks/Fix login bug.md").map((b) => b.id);
    expect(containing.slice(0, 2)).toEqual(["Boards/Auth.base", "Tasks.base"]);
    expect(containing).not.toContain("Ships.base");
    expect(containing).not.toContain("Broken/Linked.base"); // its filter cannot be evaluated
    expect(listBases(s.vault).map((b) => b.id)).toEqual(expect.arrayContaining(["Tasks.base", "Boards/Auth.base", "Broken/Garbled.base"]));
  });

  test("a hostile base cannot stall the server: deep nesting, long expressions, alias bombs", async () => {
    write(root, "Hostile/Deep.base", `filters: '${"(".repeat(5000)}1${")".repeat(5000)}'\n`);
    write(root, "Hostile/Bomb.base", `a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n`);
    write(root, "Hostile/Proto.base", `filters: 'note.__proto__ == null && constructor.name == "Object"'\n`);
    write(root, "Hostile/Cycle.base", `filters: 'formula.a'\nformulas:\n  a: 'formula.b'\n  b: 'formula.a'\n`);
    const chain = Array.from({ length: 500 }, (_, i) => `  f${i}: 'formula.f${i + 1} + 1'`).join("\n");
    write(root, "Hostile/Chain.base", `filters: 'formula.f0 > 0'\nformulas:\n${chain}\n  f500: '1'\n`);
    await waitFor(async () => (await s.callRaw("get_database_schema", { databaseId: "Hostile/Proto.base" })).isError !== true, { what: "the watcher" });
    const deep = await s.callRaw("query_database", { databaseId: "Hostile/Deep.base" });
    expect(deep.kind).toBe("unsupported-expression");
    const bomb = await s.callRaw("query_database", { databaseId: "Hostile/Bomb.base" });
    expect(bomb.kind).toBe("invalid-base");
    // __proto__ and constructor are plain (absent) properties: no row has them.
    await waitFor(async () => (await s.callRaw("get_database_schema", { databaseId: "Hostile/Chain.base" })).kind !== "database-not-found", { what: "the watcher" });
    for (const id of ["Hostile/Cycle.base", "Hostile/Chain.base"]) expect((await s.callRaw("query_database", { databaseId: id })).kind).toBe("unsupported-expression");
    const proto = await s.call("query_database", { databaseId: "Hostile/Proto.base" });
    expect(proto.rows).toEqual([]);
    expect((await s.call("get_vault_info")).noteCount).toBeGreaterThan(0);
  });
});

describeWithCorpus("obsidian-help", "Bases over a copy of Obsidian Help", () => {
  let s: TestServer;
  let root: string;
  let expected: { path: string; fm: Record<string, unknown> }[];
  beforeAll(async () => {
    root = copyVault(OBSIDIAN_HELP);
    write(root, "Help.base", `filters:\n  and:\n    - file.inFolder("Bases")\n    - 'file.ext == "md"'\nviews:\n  - type: table\n    name: Pages\n`);
    const walk = (dir: string): string[] =>
      readdirSync(join(root, dir)).flatMap((n) => (statSync(join(root, dir, n)).isDirectory() ? walk(`${dir}/${n}`) : n.endsWith(".md") ? [`${dir}/${n}`] : []));
    expected = walk("Bases")
      .sort()
      .map((path) => {
        const m = /^---\n([\s\S]*?)\n---/.exec(readFileSync(join(root, path), "utf8"));
        return { path, fm: (m ? parseYaml(m[1]!) : {}) ?? {} };
      });
    s = await startTestServer({ root });
  });
  afterAll(async () => {
    await s?.close();
    rmSync(root, { recursive: true, force: true });
  });

  test("rows are the Bases/ pages; columns are their frontmatter keys with real types", async () => {
    const res = await s.call("query_database", { databaseId: "Help.base", limit: 500 });
    expect(ids(res.rows)).toEqual(expected.map((e) => e.path));
    const keys = new Set(expected.flatMap((e) => Object.keys(e.fm)));
    const schema = await s.call("get_database_schema", { databaseId: "Help.base" });
    expect(new Set(schema.schema.map((c: any) => c.id))).toEqual(keys);
    const type = (id: string) => schema.schema.find((c: any) => c.id === id)?.type;
    if (keys.has("permalink")) expect(type("permalink")).toBe("text");
    if (keys.has("publish")) expect(type("publish")).toBe("checkbox");
    for (const e of expected) {
      const row = res.rows.find((r: any) => r.id === e.path);
      if (typeof e.fm.permalink === "string") expect(row.properties.permalink).toBe(e.fm.permalink);
    }
  });
});
