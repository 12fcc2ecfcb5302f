// A `.base` file is anybody's file (a synced vault, a cloned repo), and its
// filters are evaluated where requests wait: at start-up, in the change feed,
// for every get_page. Formulas that each use the next one twice double the
// work (and a concatenation the value's length) at every level; a broken base
// of a megabyte was parsed again on every call. Neither may hold the server.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { evaluationBudget, MAX_NOTE_STEPS } from "../lib/bases/evaluate";
import { loadBase } from "../lib/bases/base-file";
import { allRowNotes, envFor, noteInBase, rowsOf } from "../lib/bases/rows";
import { TooCostly } from "../lib/bases/expr";
import { openStateDb } from "../lib/store/state-db";
import { createToken } from "../lib/store/tokens";
import { VaultContext } from "../lib/vault-context";
import { freePort, spawnLettuce, type LiveProcess } from "./helpers/cli";
import { connectClient, copyVault } from "./helpers/server";

/** filter formula.f0 …; f_i = f_{i+1} + f_{i+1}: 2^depth evaluations per note without a memo. */
function doublingBase(depth: number, last: string): string {
  let y = "filters:\n  and:\n    - 'formula.f0 != null'\nformulas:\n";
  for (let i = 0; i < depth; i++) y += `  f${i}: 'formula.f${i + 1} + formula.f${i + 1}'\n`;
  return y + `  f${depth}: "${last}"\nviews:\n  - type: table\n    name: t\n    order:\n      - formula.f0\n`;
}

function writeHostileBases(root: string): void {
  writeFileSync(join(root, "Numbers.base"), doublingBase(30, "1")); // 2^30: fine once each formula runs once a note
  writeFileSync(join(root, "Strings.base"), doublingBase(30, "'xy'")); // a 2^31-character string: refused
  // 200 KB of YAML (a base may have 256 KB) that breaks on its last line.
  writeFileSync(join(root, "Broken.base"), "views:\n" + "  - type: table\n    name: v\n".repeat(7_000) + "filters: [unclosed\n");
}

describe("hostile bases through a real server", () => {
  let root: string;
  let srv: LiveProcess;
  let client: Client;
  beforeAll(async () => {
    root = copyVault();
    writeHostileBases(root);
    const db = openStateDb(root);
    const token = createToken(db, "bases-test", "read").token;
    db.close();
    const port = freePort();
    srv = spawnLettuce(["serve", root, "--port", String(port)], { env: { LETTUCE_EMBED_PROVIDER: "none" } });
    // Without the bounds the start-up change feed never finished evaluating Numbers.base.
    await srv.waitForStdout(/Index current: \d+ notes/, 60_000);
    client = await connectClient(`http://127.0.0.1:${port}/mcp`, token);
  });
  afterAll(async () => {
    await client?.close().catch(() => {});
    await srv?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const call = async (name: string, args: Record<string, unknown>) => {
    const res: any = await client.callTool({ name, arguments: args }, undefined, { timeout: 30_000 });
    return { ...res, body: JSON.parse(res.content[0].text) };
  };

  test("formulas that double per level are evaluated once per note", async () => {
    const r = await call("query_database", { databaseId: "Numbers.base", fields: ["formula.f0"], limit: 3 });
    expect(r.isError, r.content[0].text).toBeFalsy();
    expect(r.body.rows.length).toBe(3);
    expect(r.body.hasMore).toBe(true);
    expect(r.body.rows[0].properties["formula.f0"]).toBe(2 ** 30);
  });

  test("a value that doubles per level is refused as unsupported-expression", async () => {
    const r = await call("query_database", { databaseId: "Strings.base", limit: 3 });
    expect(r).toMatchObject({ isError: true });
    expect(r.body.kind).toBe("unsupported-expression");
    expect(r.body.error).toMatch(/longer than/);
  });

  test("the broken base is invalid-base, and the rest of the server answers", async () => {
    const r = await call("query_database", { databaseId: "Broken.base", limit: 3 });
    expect(r.body.kind).toBe("invalid-base");
    for (const [tool, args] of [
      ["get_page", { pageId: "Projects/Lettuce.md" }],
      ["list_workspace", {}],
      ["get_changes_since", {}],
    ] as const) {
      const res = await call(tool, args);
      expect(res.isError, `${tool}: ${res.content[0].text.slice(0, 200)}`).toBeFalsy();
    }
  });
});

describe("the bounds themselves", () => {
  let root: string;
  let vault: VaultContext;
  beforeAll(async () => {
    root = copyVault();
    writeHostileBases(root);
    vault = VaultContext.open(root);
    await vault.indexer.fullScan();
  });
  afterAll(() => {
    vault?.close();
    rmSync(root, { recursive: true, force: true });
  });

  test("each formula runs once per note: 31 formulas, a few hundred steps", () => {
    const base = loadBase(root, "Numbers.base");
    const budget = evaluationBudget();
    const row = rowsOf(vault, base)[0]!;
    const env = envFor(base, row.file, budget);
    expect(env.memo).toBeInstanceOf(Map);
    const { evaluate } = require("../lib/bases/evaluate") as typeof import("../lib/bases/evaluate");
    expect(evaluate(base.formulas.get("f0") as any, env)).toBe(2 ** 30);
    expect(budget.steps).toBeLessThan(500);
    expect(budget.steps).toBeLessThan(MAX_NOTE_STEPS);
  });

  // A chain of methods spends its steps on the way down and does its work on the way up: 3,200 lower()s of a
  // 512K-character value took ~0.7 s per note with the clock never read after the first of them, so a budget of
  // 10 ms (what classifying a few notes one by one allows) ran 70 times over, on every write.
  test("a method chain on a long value stops at the budget's deadline, not after the chain", () => {
    let y = "filters: 'formula.c8.contains(\"b\")'\nformulas:\n  a0: '\"a\"'\n";
    for (let i = 1; i <= 19; i++) y += `  a${i}: 'formula.a${i - 1} + formula.a${i - 1}'\n`;
    y += "  c0: 'formula.a19'\n";
    for (let j = 1; j <= 8; j++) y += `  c${j}: 'formula.c${j - 1}${".lower()".repeat(400)}'\n`;
    writeFileSync(join(root, "Chain.base"), y);
    const base = loadBase(root, "Chain.base");
    const row = allRowNotes(vault.indexDb)[0]!;
    const budget = { steps: 0, noteSteps: 0, deadline: performance.now() + 10 };
    const t0 = performance.now();
    expect(() => noteInBase(base, row, budget)).toThrow(TooCostly);
    expect(performance.now() - t0).toBeLessThan(250);
  });

  test("a broken base and an unsupported one are each worked out once per version", () => {
    const errorOf = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e;
      }
      throw new Error("expected an error");
    };
    const b1 = errorOf(() => loadBase(root, "Broken.base"));
    expect(errorOf(() => loadBase(root, "Broken.base"))).toBe(b1); // the same error: not parsed again
    const base = loadBase(root, "Strings.base");
    const s1 = errorOf(() => rowsOf(vault, base));
    expect(errorOf(() => rowsOf(vault, base))).toBe(s1);
    // A new version is read again.
    writeFileSync(join(root, "Broken.base"), "views:\n  - type: table\n");
    expect(loadBase(root, "Broken.base").views.length).toBe(1);
  });

  // The content audit of 2026-12-05: a 2.7 KB base whose key is a map nested 400 deep held the request thread
  // 5.9 s and came back as a 1.9 MB schema (the key spelled out at every level); and past a few tens of KB,
  // a base full of YAML errors costs the square of its length to parse.
  test("a key that is a map, and a base far larger than any real one, are invalid-base", () => {
    let key = "x";
    for (let i = 0; i < 400; i++) key = `{${key}: 0}`;
    writeFileSync(join(root, "Keys.base"), `? ${key}\n: 1\nviews:\n  - type: table\n`);
    expect(() => loadBase(root, "Keys.base")).toThrow(/map or a list/);
    writeFileSync(join(root, "Large.base"), `views:\n  - type: table\n    name: "${"\\x".repeat(20_000)}"\n`);
    expect(() => loadBase(root, "Large.base")).toThrow(/larger than/);
  });
});
