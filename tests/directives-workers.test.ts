// await_directives with several workers (claim leases) and with many parked
// calls at once, through the real server and the file watcher.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { directiveHub } from "../lib/work/directive-hub";
import { startTestServer, waitFor, type TestServer } from "./helpers/server";

setDefaultTimeout(90_000);

const MEETING = "Inbox/Meeting Notes 2026-03-02.md";
const titles = (ds: any[]) => ds.map((d) => d.title).sort();

/** One tools/call over plain fetch (many at once, without an SDK client each). */
async function rawAwait(s: TestServer, args: Record<string, unknown>): Promise<any> {
  const res = await s.rpc({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "await_directives", arguments: args } });
  const body: any = await res.json();
  if (body.error || body.result.isError) throw new Error(JSON.stringify(body));
  return JSON.parse(body.result.content[0].text);
}

describe("two workers with claim leases", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ watch: true });
  });
  afterAll(() => s?.close());

  test("a directive leased to one worker is withheld from the other; own leases stay visible", async () => {
    const a = await s.call("await_directives", { cursor: 0, worker: "A" });
    expect(titles(a.directives)).toEqual(["Summarize the section above"]);
    const b = await s.call("await_directives", { cursor: 0, worker: "B" });
    expect(b).toMatchObject({ timedOut: false, directives: [] });
    // A reconnecting (cursor 0 again) still sees its own lease.
    expect(titles((await s.call("await_directives", { cursor: 0, worker: "A" })).directives)).toEqual(["Summarize the section above"]);
    // A reader without a worker id sees everything; pending_directives ignores leases.
    expect((await s.call("await_directives", { cursor: 0 })).directives).toHaveLength(1);
    expect(await s.call("pending_directives")).toHaveLength(1);

    // Both park; a new directive arrives; exactly one of them gets it.
    const hub = directiveHub(s.vault);
    const pa = s.call("await_directives", { cursor: a.cursor, worker: "A", timeout_ms: 55_000 });
    const pb = s.call("await_directives", { cursor: b.cursor, worker: "B", timeout_ms: 55_000 });
    await waitFor(() => hub.parked === 2, { what: "both workers parked" });
    writeFileSync(join(s.root, "Inbox/Two.md"), "# Two\n\n> [!ai] Second job\n");
    const [ra, rb] = await Promise.all([pa, pb]);
    expect(ra.timedOut || rb.timedOut).toBe(false);
    const gotA = titles(ra.directives);
    const gotB = titles(rb.directives);
    expect(gotA).toContain("Summarize the section above");
    expect(gotB).not.toContain("Summarize the section above");
    expect(gotA.filter((t) => gotB.includes(t))).toEqual([]);
    expect([...gotA, ...gotB].filter((t) => t === "Second job")).toHaveLength(1);
  });

  test("completing a leased directive on disk removes it for everyone", async () => {
    const before = await s.call("await_directives", { cursor: 0, worker: "A" });
    const file = join(s.root, MEETING);
    const poll = s.call("await_directives", { cursor: before.cursor, worker: "B", timeout_ms: 55_000 });
    await waitFor(() => directiveHub(s.vault).parked === 1, { what: "B parked" });
    writeFileSync(file, readFileSync(file, "utf8").replace("[!ai] Summarize", "[!ai-done] Summarize"));
    const r = await poll;
    expect(r.timedOut).toBe(false);
    expect(titles(r.directives)).not.toContain("Summarize the section above");
    const a = await s.call("await_directives", { cursor: 0, worker: "A" });
    expect(titles(a.directives)).not.toContain("Summarize the section above");
  });
});

describe("an expired lease frees the directive", () => {
  const TTL = 1500;
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ watch: true });
    directiveHub(s.vault, { leaseTtlMs: TTL }); // short leases for this server only
  });
  afterAll(() => s?.close());

  test("a crashed worker's lease lapses and a parked worker is handed the directive without a file change", async () => {
    const hub = directiveHub(s.vault);
    const t0 = Date.now();
    const a = await s.call("await_directives", { cursor: 0, worker: "crashy" });
    expect(a.directives).toHaveLength(1);
    // B polls until it is given the directive; it must not be before the lease lapses.
    let cursor = 0;
    for (;;) {
      const r = await s.call("await_directives", { cursor, worker: "B", timeout_ms: 30_000 });
      if (r.directives.length) {
        expect(titles(r.directives)).toEqual(["Summarize the section above"]);
        expect(Date.now() - t0).toBeGreaterThanOrEqual(TTL - 50);
        expect(r.cursor).toBe(a.cursor); // the pending set never changed
        break;
      }
      expect(r.timedOut).toBe(false);
      cursor = r.cursor;
    }
    expect(hub.cursor).toBe(a.cursor);
  });
});

describe("many parked calls", () => {
  const N = 200;
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ watch: true });
  });
  afterAll(() => s?.close());

  test(`${N} parked polls all wake on one new directive`, async () => {
    const hub = directiveHub(s.vault);
    const { cursor } = await s.call("await_directives", { cursor: 0 });
    const polls = Array.from({ length: N }, () => rawAwait(s, { cursor, timeout_ms: 55_000 }));
    await waitFor(() => hub.parked === N, { what: `${N} parked calls`, timeoutMs: 30_000 });
    writeFileSync(join(s.root, "Inbox/Crowd.md"), "# Crowd\n\n> [!ai] Wake everyone\n");
    const results = await Promise.all(polls);
    for (const r of results) {
      expect(r.timedOut).toBe(false);
      expect(r.cursor).toBeGreaterThan(cursor);
      expect(titles(r.directives)).toEqual(["Summarize the section above", "Wake everyone"]);
    }
    expect(hub.parked).toBe(0);
  });
});
