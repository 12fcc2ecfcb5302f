// One caller must not make another wait out its time budget (an audit, 2026-12-05): a token sending a
// flood of legal heavy reads stood in front of every other caller's search in the read workers' queue
// (25-30 s, every victim call a timeout), and requests with no token paused background work. Now a
// token's calls are worked on a few at a time (the rest wait their turn), the read workers take jobs in
// turn between callers (lib/offload/caller.ts, lib/offload/pool.ts), and only authenticated requests
// count as activity. Assertions are on order, never on time.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { msSinceRequest } from "../lib/offload/activity";
import { CallerGate } from "../lib/offload/caller";
import { readPool } from "../lib/offload/pool";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";

describe("CallerGate", () => {
  test("a caller past its limit waits in order; others go at once; an aborted wait leaves the queue", async () => {
    const gate = new CallerGate(() => 2);
    const a1 = await gate.enter("a");
    const a2 = await gate.enter("a");
    const order: string[] = [];
    const a3 = gate.enter("a").then((leave) => (order.push("a3"), leave));
    const a4 = gate.enter("a").then((leave) => (order.push("a4"), leave));
    const stop = new AbortController();
    const a5 = gate.enter("a", stop.signal).then(
      () => "entered",
      () => "aborted",
    );
    const b1 = await gate.enter("b");
    expect(gate.runningFor("b")).toBe(1);
    expect(order).toEqual([]);
    stop.abort();
    expect(await a5).toBe("aborted");
    a1();
    (await a3)();
    a2();
    (await a4)();
    expect(order).toEqual(["a3", "a4"]);
    b1();
    expect(gate.runningFor("a")).toBe(0);
    expect(gate.runningFor("b")).toBe(0);
  });
});

describe("over HTTP", () => {
  let s: TestServer;
  let root: string;
  beforeAll(async () => {
    root = tempDir();
    mkdirSync(join(root, "Notes"));
    // Enough text that a 32-word OR search takes the read worker some milliseconds.
    const words = Array.from({ length: 400 }, (_, i) => `word${i}`);
    for (let i = 0; i < 3000; i++) {
      const body = Array.from({ length: 60 }, (_, j) => words[(i * 7 + j * 13) % words.length]).join(" ");
      writeFileSync(join(root, "Notes", `N${i}.md`), `# N${i}\n\n${body}\n`);
    }
    s = await startTestServer({ root });
  }, 120_000);
  afterAll(async () => {
    await s?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const call = (token: string, name: string, args: Record<string, unknown>) =>
    fetch(s.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
    }).then((r) => r.json() as Promise<any>);

  test("another token's search is answered while one token's flood of heavy searches is still queued", async () => {
    const heavy = { query: Array.from({ length: 32 }, (_, i) => `word${i * 11}`).join(" OR "), limit: 100 };
    const FLOOD = 120;
    let done = 0;
    const flood = Array.from({ length: FLOOD }, () => call(s.tokens.read, "search", heavy).then((r) => (done++, r)));
    // Let the flood arrive and queue.
    await Bun.sleep(50);
    const victim = await call(s.tokens.write, "search", { query: "word5" });
    const doneWhenAnswered = done;
    expect(victim.result.isError ?? false).toBe(false);
    // First come, first served would have answered it after the whole flood.
    expect(doneWhenAnswered).toBeLessThan(FLOOD / 2);
    const all = await Promise.all(flood);
    // Nobody is turned away: every call of the flood is answered too.
    for (const r of all) expect(r.result.isError ?? false).toBe(false);
  }, 120_000);

  test("read_note, get_page and get_pages read and serialise their files in a read worker", async () => {
    // A flood of big answers (fifty 30 KB notes a call) once kept the event loop reading, decoding and escaping
    // 100 MB a second, and every other caller's cheapest call waited ~0.7 s (bench/abuse.ts --only heavy).
    const pool = readPool(s.vault);
    const text = readFileSync(join(root, "Notes", "N7.md"), "utf8");
    const note = JSON.parse((await call(s.tokens.read, "read_note", { path: "Notes/N7.md" })).result.content[0].text);
    expect(note.content).toBe(text);
    expect(pool.lastWorker("readNote")).toBeNumber();
    const page = JSON.parse((await call(s.tokens.read, "get_page", { pageId: "Notes/N7.md" })).result.content[0].text);
    expect(page.content).toBe(text);
    expect(pool.lastWorker("page")).toBeNumber();
    const pages = JSON.parse((await call(s.tokens.read, "get_pages", { pageIds: ["Notes/N7.md", "Notes/missing.md", "../x.md"] })).result.content[0].text);
    expect(pages.results.map((r: any) => r.ok ? r.page.content : r.kind)).toEqual([text, "note-not-found", "path-invalid"]);
    expect(pool.lastWorker("pages")).toBeNumber();
  });

  test("requests without a valid token do not hold background work back; a real call does", async () => {
    await Bun.sleep(300);
    const before = msSinceRequest();
    expect(before).toBeGreaterThanOrEqual(250);
    for (let i = 0; i < 5; i++) {
      const r = await fetch(s.url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json" }, body: "{}" });
      expect(r.status).toBe(401);
    }
    expect(msSinceRequest()).toBeGreaterThanOrEqual(before);
    await call(s.tokens.read, "get_vault_info", {});
    expect(msSinceRequest()).toBeLessThan(before);
  });
});
