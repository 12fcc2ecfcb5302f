// log.md grows by appends: the ledger is parsed again only from the old text's last line, and must then
// be exactly what a parse of the whole text gives — fences opened or closed by the append, a last line
// the append completes, an edit in the middle (not an append: parsed whole).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VaultContext } from "../lib/vault-context";
import { ledgerNewestFirst, newestFirst, parseLedger, readLedger } from "../lib/work/ledger";
import { copyVault } from "./helpers/server";

let root = "";
let vault: VaultContext;
beforeAll(async () => {
  root = copyVault();
  vault = VaultContext.open(root);
  await vault.indexer.fullScan();
});
afterAll(() => {
  vault?.close();
  rmSync(root, { recursive: true, force: true });
});

const logPath = () => join(root, "log.md");
const read = async () => {
  await vault.indexer.update(["log.md"]);
  return readLedger(vault.indexDb, root);
};
const whole = () => parseLedger(readFileSync(logPath(), "utf8"));

describe("the ledger after appends", () => {
  test("each append gives what a parse of the whole file gives", async () => {
    writeFileSync(logPath(), "# Log\n\n## [2026-01-01] ingest | First\n");
    expect(await read()).toEqual(whole());
    // A seeded mix of what people and agents append: entries, fences, a line completed across two appends.
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const pieces = ["## [2026-02-0", "3] query | Half a heading\n", "```\n", "## [2026-02-04] lint | In a fence\n", "```\n", "~~~~\n", "text\n", "~~~\n", "~~~~\n", "## [2026-02-30] bad | Not a date\n", "## [2026-03-01] compile | Later ##\n", "\n", "## [2025-12-31] ingest | Out of order\n"];
    for (let i = 0; i < 60; i++) {
      appendFileSync(logPath(), pieces[Math.floor(rnd() * pieces.length)]!);
      const got = await read();
      expect(got).toEqual(whole());
      expect(ledgerNewestFirst(vault.indexDb, root)).toEqual([...got].sort((a, b) => (a.date === b.date ? b.line - a.line : a.date < b.date ? 1 : -1)));
    }
  });

  test("an edit that is no append is parsed whole", async () => {
    writeFileSync(logPath(), "## [2026-01-01] ingest | A\n## [2026-01-02] ingest | B\n");
    await read();
    writeFileSync(logPath(), "## [2026-01-01] ingest | A changed\n## [2026-01-02] ingest | B\n## [2026-01-03] lint | C\n");
    const got = await read();
    expect(got.map((e) => e.title)).toEqual(["A changed", "B", "C"]);
    expect(got).toEqual(whole());
  });

  test("100,000 entries: an append costs a fraction of the first read", async () => {
    const lines: string[] = ["# Log", ""];
    for (let i = 0; i < 100_000; i++) lines.push(`## [${2000 + Math.floor(i / 365)}-${String((Math.floor(i / 28) % 12) + 1).padStart(2, "0")}-${String((i % 28) + 1).padStart(2, "0")}] ingest | Entry ${i}`, "");
    writeFileSync(logPath(), lines.join("\n"));
    await vault.indexer.update(["log.md"]);
    let t0 = performance.now();
    ledgerNewestFirst(vault.indexDb, root);
    const first = performance.now() - t0;
    appendFileSync(logPath(), "## [2999-01-01] query | Newest\n");
    await vault.indexer.update(["log.md"]);
    t0 = performance.now();
    const newest = ledgerNewestFirst(vault.indexDb, root);
    const after = performance.now() - t0;
    expect(newest[0]!.title).toBe("Newest");
    expect(newest.length).toBe(100_001);
    expect(after).toBeLessThan(first / 2);
  }, 60_000);

  test("newest first: an out-of-order entry is sorted into place", () => {
    const e = parseLedger("## [2026-01-02] a | x\n## [2026-01-01] a | y\n## [2026-01-02] a | z\n");
    expect(newestFirst(e).map((x) => x.title)).toEqual(["z", "x", "y"]);
  });
});
