// What keeps a 100k-note vault's server small (issue 15, part 4): the lint
// plan is made and kept in one read worker, whichever of lint, wiki_health or
// the Health page asks; searches go to another worker meanwhile; and the
// "did you mean" index answers the same from its compact form.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { NameMatcher } from "../lib/hygiene/fuzzy";
import { readPool } from "../lib/offload/pool";
import { freePort, spawnLettuce, type LiveProcess } from "./helpers/cli";
import { withEnv } from "./helpers/env";
import { copyVault, startTestServer, type TestServer } from "./helpers/server";
import { walkVault } from "./helpers/vault-facts";

setDefaultTimeout(60_000);

/** A thread's nice value (Linux: field 19 of /proc/<pid>/task/<tid>/stat) and its name. */
function threadStat(pid: number, tid: number | string): { name: string; nice: number } {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
  return { name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")), nice: Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]) };
}

/**
 * Worker threads of a process that run at a lower priority than its main thread (a CI runner may start
 * the whole process under `nice`). Only threads named "Worker": helper threads a niced worker starts
 * inherit its niceness, and whether one has started yet is a matter of timing.
 */
function nicedThreads(pid: number): number {
  const base = threadStat(pid, pid).nice;
  let n = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const t = threadStat(pid, tid);
      if (t.name === "Worker" && t.nice > base) n++;
    } catch {
      /* the thread ended meanwhile */
    }
  }
  return n;
}

describe("the lint plan lives in one read worker", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => {
    await s?.close();
  });

  test("lint, wiki_health and lint again run on one worker; a search sent beside them runs on the other", async () => {
    await s.call("search", { query: "the" }, "read");
    const first = await s.call("lint", { limit: 5 }, "read");
    const pool = readPool(s.vault);
    const planWorker = pool.lastWorker("lint");
    expect(planWorker).toBeNumber();
    expect(pool.lastWorker("search")).not.toBe(planWorker);
    const [again, health, found] = await Promise.all([
      s.call("lint", { limit: 5, offset: 5 }, "read"),
      s.call("wiki_health", {}, "read"),
      s.call("search", { query: "the" }, "read"),
    ]);
    expect(pool.lastWorker("lint")).toBe(planWorker);
    expect(pool.lastWorker("health")).toBe(planWorker);
    expect(pool.lastWorker("search")).toBeNumber();
    expect(pool.lastWorker("search")).not.toBe(planWorker);
    // The same plan answers all three: paging continues where the first page stopped, and the score counts it.
    expect(again.total).toBe(first.total);
    expect(again.offset).toBe(5);
    expect(health.noteCount).toBe(walkVault(s.root).notes.length);
    expect(found.items.length).toBeGreaterThan(0);
    const warnings = Object.entries(first.counts as Record<string, number>)
      .filter(([rule]) => !["orphan-note", "no-inbound", "orphan-tag", "untagged-note"].includes(rule))
      .reduce((k, [, n]) => k + n, 0);
    expect(health.lintWarnings).toBe(warnings);
  });
});

// A process of its own: the test runner's threads (other files' workers ending) would blur the count.
describe.skipIf(process.platform !== "linux")("read workers' priority, in a real `lettuce serve`", () => {
  let root: string;
  let srv: LiveProcess;
  let url: string;
  let token: string;
  beforeAll(async () => {
    root = copyVault();
    srv = await withEnv({ LETTUCE_EMBED_BACKGROUND: "0" }, async () => spawnLettuce(["serve", root, "--port", String(freePort())]));
    url = (await srv.waitForStdout(/MCP endpoint: (\S+)/))[1]!;
    token = (await srv.waitForStdout(/shown only this once:\s+(\S+)/))[1]!;
    await srv.waitForStdout(/Index current/);
  });
  afterAll(async () => {
    await srv?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const call = async (name: string, args: Record<string, unknown>) => {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
    });
    const body = (await res.json()) as { result: { isError?: boolean; content: { text: string }[] } };
    expect(body.result.isError).toBeFalsy();
    return JSON.parse(body.result.content[0]!.text);
  };

  test("searches run at normal priority; the first whole-vault pass lowers one worker's, and only that one's", async () => {
    const pid = srv.proc.pid;
    if (threadStat(pid, pid).nice >= 19) {
      console.log("skip: the server runs at the lowest priority already (nice 19); its workers cannot go lower");
      return;
    }
    let hit = "";
    for (const q of ["the", "and", "note"]) hit ||= (await call("search", { query: q })).items[0]?.path ?? "";
    expect(hit).not.toBe("");
    // Background threads that start niced (the WAL checkpoint thread, lib/store/checkpointer.ts) are there from the start.
    const before = nicedThreads(pid);
    await call("link_graph", { path: hit, depth: 2 });
    expect(nicedThreads(pid)).toBe(before);
    await call("lint", { limit: 3 });
    expect(nicedThreads(pid)).toBe(before + 1);
    await Promise.all([call("wiki_health", {}), call("search", { query: "the" }), call("search", { query: "and" }), call("lint", { limit: 3, offset: 3 })]);
    expect(nicedThreads(pid)).toBe(before + 1);
  });
});

describe("the did-you-mean index", () => {
  /** Names that differ by more than a typo from each other: three random 5-letter words. */
  function names(n: number): string[] {
    let a = 12345;
    const r = () => ((a = (Math.imul(a, 1103515245) + 12345) >>> 0) >>> 8) / 16777216;
    const word = () => Array.from({ length: 5 }, () => String.fromCharCode(97 + Math.floor(r() * 26))).join("");
    return Array.from({ length: n }, () => `${word()} ${word()} ${word()}`);
  }

  test("among 20,000 names a typo finds its name, upper case is ignored, ties go to the first added, and a stranger finds nothing", () => {
    const all = names(20_000);
    const m = new NameMatcher<number>();
    all.forEach((name, i) => m.add(name, i));
    for (const i of [0, 777, 12_345, 19_999]) {
      const name = all[i]!;
      const typo = name.slice(0, 3) + (name[3] === "x" ? "y" : "x") + name.slice(4);
      expect(m.closest(typo)).toBe(i);
      expect(m.closest(name.toUpperCase())).toBe(i);
    }
    // A duplicate name added later never wins the tie.
    m.add(all[5]!.toUpperCase(), -1);
    expect(m.closest(all[5]!)).toBe(5);
    expect(m.closest("qqqqqqqqqqqqqqqqqqqqq")).toBeNull();
    // Adding after a lookup rebuilds the index: the new name is found.
    m.add("a brand new name here", 99_999);
    expect(m.closest("a brand new nam here")).toBe(99_999);
  });
});
