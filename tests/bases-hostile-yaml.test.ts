// A `.base` file is parsed where requests wait, each time it changes and once per version otherwise. Under
// the size limit, hostile but short YAML held the thread 0.3–0.5 s per parse (the review of 2026-12-07), and
// a vault of more than 500 bases parsed all of them again on every survey.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { loadBase, MAX_BASE_BYTES } from "../lib/bases/base-file";
import { ToolError } from "../lib/errors";
import { tempDir } from "./helpers/server";

const fill = (s: string) => s.slice(0, MAX_BASE_BYTES - 10);
const SHAPES: Record<string, string> = {
  colons: fill("a: " + "a: ".repeat(12_000)),
  tabs: fill("a:\n" + "\t- x\n".repeat(8_000)),
  escapes: fill('filters: "' + "\\x".repeat(20_000)) + '"\n',
  anchors: fill(Array.from({ length: 4_000 }, (_, i) => `k${i}: &a${i} x`).join("\n")),
  aliases: fill("a: &a x\n" + Array.from({ length: 4_000 }, (_, i) => `k${i}: *a`).join("\n")),
  flowmaps: fill("a: " + "{a: ".repeat(8_000) + "}".repeat(8_000)),
  duplicates: fill(Array.from({ length: 4_000 }, (_, i) => `k: ${i}`).join("\n")),
};

function errorOf(f: () => unknown): ToolError {
  try {
    f();
  } catch (e) {
    if (e instanceof ToolError) return e;
    throw e;
  }
  throw new Error("expected an error");
}

describe(".base YAML under the size limit", () => {
  let root: string;
  beforeAll(() => {
    root = tempDir();
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test("no shape of hostile YAML holds the thread", () => {
    let worst = 0;
    for (const [name, text] of Object.entries(SHAPES)) {
      writeFileSync(join(root, `${name}.base`), text);
      const t0 = performance.now();
      try {
        loadBase(root, `${name}.base`);
      } catch (e) {
        expect(e).toBeInstanceOf(ToolError);
      }
      worst = Math.max(worst, performance.now() - t0);
    }
    // Each took 120–530 ms in the yaml package; Bun's parser under 30.
    expect(worst).toBeLessThan(100);
  });

  test("a large base reads as the yaml package read it; a large broken one is invalid-base with a reason", () => {
    const views = Array.from({ length: 120 }, (_, i) => `  - type: table\n    name: "View ${i}"\n    order:\n      - note.status\n      - formula.f${i % 3}\n    limit: ${i}\n`).join("");
    const text = `filters:\n  and:\n    - file.inFolder("Tasks")\n    - 'status != "done"'\nformulas:\n  f0: 'priority * 2'\n  f1: 'due + "1w"'\n  f2: 'file.name.lower()'\nproperties:\n  note.status:\n    displayName: Status\nviews:\n${views}`;
    expect(text.length).toBeGreaterThan(8 * 1024);
    writeFileSync(join(root, "Large.base"), text);
    const base = loadBase(root, "Large.base");
    const doc = parseYaml(text);
    expect(base.views.map((v) => v.config)).toEqual(doc.views);
    expect([...base.formulaSources.values()]).toEqual(Object.values(doc.formulas));
    expect(base.properties.get("status")).toEqual({ displayName: "Status" });
    expect(base.filterError).toBeNull();

    writeFileSync(join(root, "LargeBroken.base"), text + "filters: [unclosed\n");
    expect(errorOf(() => loadBase(root, "LargeBroken.base")).message).toMatch(/^LargeBroken\.base is not a valid base: its YAML does not parse \(.+\)$/);
    expect(errorOf(() => loadBase(root, "flowmaps.base")).message).toMatch(/nested too deeply/);
    // Six levels of nine aliases: shared references in Bun's answer, spelt out by every later walk.
    let bomb = `a: &a ["x","x","x","x","x","x","x","x","x"]\n`;
    for (const [k, prev] of [["b", "a"], ["c", "b"], ["d", "c"], ["e", "d"], ["f", "e"], ["g", "f"]]) bomb += `${k}: &${k} [${Array(9).fill(`*${prev}`).join(",")}]\n`;
    writeFileSync(join(root, "Bomb.base"), bomb + "#".repeat(5_000) + "\n");
    expect(errorOf(() => loadBase(root, "Bomb.base")).message).toMatch(/aliases expand/);
    // A small one is still the yaml package's, whose message names the line.
    writeFileSync(join(root, "Small.base"), "views:\n  - type: table\nfilters: [unclosed\n");
    expect(errorOf(() => loadBase(root, "Small.base")).message).toMatch(/its YAML does not parse \(.*line/);
  });

  test("a vault of 600 bases keeps them all compiled across a survey", () => {
    const dir = tempDir();
    try {
      for (let i = 0; i < 600; i++) writeFileSync(join(dir, `B${i}.base`), `filters: 'status == "s${i}"'\nviews:\n  - type: table\n    name: T\n`);
      const first = Array.from({ length: 600 }, (_, i) => loadBase(dir, `B${i}.base`));
      const again = Array.from({ length: 600 }, (_, i) => loadBase(dir, `B${i}.base`));
      expect(again.filter((b, i) => b !== first[i]).length).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
