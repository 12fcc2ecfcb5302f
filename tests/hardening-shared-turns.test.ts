// Concurrent batches resolved on the event loop share its turns (lib/platform/turns.ts): 32 get_pages of 50
// ids each, resolved whole one after another, held every other caller 160-240 ms (bench/abuse.ts --only heavy
// on obsidian-hub). Assertions are on order (a timer set when the work starts fires before it ends), never on
// time: the inTurns steps below busy-wait a millisecond each, and get_pages batches name thousands of ids.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { basePaths } from "../lib/bases";
import { inTurns, TURN_BUDGET_MS } from "../lib/platform/turns";
import { parseAll } from "../lib/index/parse-pool";
import { LinkResolver } from "../lib/index/resolver";
import { planPage, planPages } from "../lib/workspace/page";
import { pageError } from "../lib/workspace/page-build";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";

const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

describe("inTurns", () => {
  test("callers take a step each in turn; each gets its results in order", async () => {
    const order: string[] = [];
    // The first caller runs at once and queues a turn; the two that come in the same turn wait for the next.
    const z = inTurns(1, () => order.push("z0"));
    const a = inTurns(4, (i) => (order.push(`a${i}`), i * 10));
    const b = inTurns(3, (i) => (order.push(`b${i}`), `b${i}`));
    expect(await a).toEqual([0, 10, 20, 30]);
    expect(await b).toEqual(["b0", "b1", "b2"]);
    await z;
    expect(order).toEqual(["z0", "a0", "b0", "a1", "b1", "a2", "b2", "a3"]);
  });

  test("the loop turns between slices: a timer set at the start fires long before the steps end", async () => {
    const steps = 20 * TURN_BUDGET_MS;
    let done = 0;
    let doneWhenTimerFired = -1;
    setTimeout(() => (doneWhenTimerFired = done), 0);
    const work = inTurns(steps, () => {
      busy(1);
      return ++done;
    });
    await work;
    // Run whole, the steps would all be done before the timer's turn.
    expect(doneWhenTimerFired).toBeGreaterThan(0);
    expect(doneWhenTimerFired).toBeLessThan(steps / 4);
  });

  test("a step's error rejects its own caller only; a batch of none resolves", async () => {
    const bad = inTurns(5, (i) => {
      if (i === 2) throw new Error("step 2");
      return i;
    });
    const good = inTurns(5, (i) => i);
    await expect(bad).rejects.toThrow("step 2");
    expect(await good).toEqual([0, 1, 2, 3, 4]);
    expect(await inTurns(0, () => 1)).toEqual([]);
  });
});

describe("get_pages resolves its ids in shared turns", () => {
  let s: TestServer;
  let root: string;
  beforeAll(async () => {
    root = tempDir();
    mkdirSync(join(root, "Notes/Deep/Er"), { recursive: true });
    for (let i = 0; i < 150; i++) writeFileSync(join(root, "Notes/Deep/Er", `N${i}.md`), `---\nstatus: ${i % 3 ? "open" : "done"}\n---\n# N${i}\n\nbody ${i}\n`);
    writeFileSync(join(root, "Done.base"), 'filters: \'status == "done"\'\nviews:\n  - type: table\n    name: Done\n');
    s = await startTestServer({ root });
  }, 120_000);
  afterAll(async () => {
    await s?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const ids = (from: number) => Array.from({ length: 50 }, (_, i) => `Notes/Deep/Er/N${from + i}.md`);
  // Each batch names its notes REPEAT times: a warm id resolves in ~20 µs here, so a batch of 50 could fit
  // in one turn's budget and settle before the timer on a fast day (it did, once, in CI). 2,000 ids take
  // tens of milliseconds, many turns, on any machine this runs on.
  const REPEAT = 40;
  const repeated = (list: string[]) => Array.from({ length: REPEAT }, () => list).flat();

  test("concurrent batches give what each id gives alone, and let a timer in before they are resolved", async () => {
    const batches = [repeated(ids(0)), [...repeated(ids(50).slice(0, 47)), "Notes/missing.md", "../out.md", "Notes/Deep"], repeated(ids(100))];
    let settled = 0;
    let settledWhenTimerFired = -1;
    setTimeout(() => (settledWhenTimerFired = settled), 0);
    const planned = await Promise.all(batches.map((b) => planPages(s.vault, b).then((r) => (settled++, r))));
    expect(settledWhenTimerFired).toBe(0);
    for (const [k, batch] of batches.entries()) {
      const alone = batch.map((id) => {
        try {
          return { id, plan: planPage(s.vault, id) };
        } catch (e) {
          return { id, ...pageError(id, e) };
        }
      });
      expect(planned[k]).toEqual(alone);
    }
    const kinds = planned[1]!.slice(-3).map((p) => ("plan" in p ? p.plan.kind : p.kind));
    expect(kinds).toEqual(["note-not-found", "path-invalid", "folder"]);
    // Classified in one go, as one by one: every third note is a row of Done.base.
    const types = planned[0]!.map((p) => ("plan" in p ? p.plan.base.type : "error"));
    expect(types.filter((t) => t === "database_row").length).toBe(17 * REPEAT);
    expect(types.filter((t) => t === "page").length).toBe(33 * REPEAT);
  });

  test("through the server, a new base counts from the next index pass on (the list of bases is kept per generation)", async () => {
    expect(basePaths(s.vault.indexDb)).toEqual(["Done.base"]);
    writeFileSync(join(root, "Notes/Open.base"), 'filters: \'status == "open"\'\nviews:\n  - type: table\n    name: Open\n');
    await s.vault.indexer.update(["Notes/Open.base"]);
    expect(basePaths(s.vault.indexDb)).toEqual(["Done.base", "Notes/Open.base"]);
    const out = await s.call("get_pages", { pageIds: ["Notes/Deep/Er/N1.md", "Notes/Deep/Er/N3.md"] }, "read");
    expect(out.results.map((r: any) => r.page.databaseId ?? r.page.type)).toEqual(["Notes/Open.base", "Done.base"]);
  });
});

describe("an index pass takes its parse workers' batches in shared turns", () => {
  test("a timer set when the batches start coming back fires after the first, not after all of them", async () => {
    const root = tempDir();
    try {
      const requests = Array.from({ length: 1200 }, (_, i) => {
        writeFileSync(join(root, `N${i}.md`), `# N${i}\n\nsee [[N${i + 1}]]\n`);
        return { entry: { path: `N${i}.md`, size: 20, mtimeMs: 0, ctimeMs: 0, changeMs: 0 }, knownHash: null };
      });
      for (const shareTurns of [true, false]) {
        let batches = 0;
        let batchesWhenTimerFired = -1;
        await parseAll(root, requests, new LinkResolver(), (results) => {
          if (batches++ === 0) setTimeout(() => (batchesWhenTimerFired = batches), 0);
          expect(results.length).toBeGreaterThan(0);
          busy(20); // the main thread's writes: slower than the worker's parse, so replies queue up (taken as they come, all 25 before the timer)
        }, undefined, [], shareTurns);
        if (shareTurns) expect(batchesWhenTimerFired).toBeLessThanOrEqual(2);
        else expect(batches).toBe(25); // the same batches either way (1,200 notes in 48s)
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);
});
