// pending_directives and the await_directives long-poll through the real
// server, with the file watcher on: files are written on disk as an editor
// would, and parked calls must wake for directive changes and only for them.
// Timing checks are lower bounds or generous deadlines (loaded 2-core machine).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { directiveHub } from "../lib/work/directive-hub";
import { startTestServer, waitFor, type TestServer } from "./helpers/server";

setDefaultTimeout(60_000);

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ watch: true });
});
afterAll(() => s?.close());

const MEETING = "Inbox/Meeting Notes 2026-03-02.md";
const hub = () => directiveHub(s.vault);
const parkedAtLeast = (n: number) => waitFor(() => hub().parked >= n, { what: `${n} parked call(s)`, timeoutMs: 15_000 });
const indexed = (word: string) =>
  waitFor(async () => (await s.call("search", { query: word })).total > 0, { what: `"${word}" in the index`, timeoutMs: 15_000 });
const titles = (ds: any[]) => ds.map((d) => d.title);

describe("pending_directives", () => {
  test("lists the open [!ai] callout with title, body and 1-based line; [!ai-done] is not listed", async () => {
    const all = await s.call("pending_directives", {}, "read");
    expect(all).toEqual([
      { path: MEETING, line: 23, title: "Summarize the section above", body: "Three bullet points at most. Keep the decisions and who raised them.", done: false },
    ]);
    // Independent check of the line: count it in the file.
    const lines = readFileSync(join(s.root, MEETING), "utf8").split("\n");
    expect(lines[22]).toStartWith("> [!ai] Summarize the section above");
    expect(JSON.stringify(all)).not.toContain("Q1 Retro");
  });

  test("path scopes to a note or a folder; a missing .md is note-not-found; bad paths are path-invalid", async () => {
    expect(await s.call("pending_directives", { path: MEETING })).toHaveLength(1);
    expect(await s.call("pending_directives", { path: "Inbox" })).toHaveLength(1);
    expect(await s.call("pending_directives", { path: "Projects" })).toEqual([]);
    expect(await s.call("pending_directives", { path: "Projects/2026/Q1 Retro.md" })).toEqual([]);
    expect(await s.callRaw("pending_directives", { path: "Inbox/nope.md" })).toMatchObject({ isError: true, kind: "note-not-found" });
    expect(await s.callRaw("pending_directives", { path: "../etc" })).toMatchObject({ isError: true, kind: "path-invalid" });
  });

  test("get_vault_info.liveness counts pending directives", async () => {
    const info = await s.call("get_vault_info");
    expect(info.liveness.pendingDirectives).toBe(1);
  });
});

describe("await_directives", () => {
  let cursor = 0;

  test("cursor 0 returns the backlog at once", async () => {
    const t0 = Date.now();
    const r = await s.call("await_directives", { cursor: 0, timeout_ms: 30_000 });
    expect(Date.now() - t0).toBeLessThan(15_000); // not the 30 s timeout
    expect(r.timedOut).toBe(false);
    expect(titles(r.directives)).toEqual(["Summarize the section above"]);
    expect(r.cursor).toBeGreaterThan(0);
    cursor = r.cursor;
  });

  test("a parked call is woken by a new [!ai] callout written on disk", async () => {
    const poll = s.call("await_directives", { cursor, timeout_ms: 55_000 });
    await parkedAtLeast(1);
    writeFileSync(join(s.root, "Inbox/Raw.md"), "# Raw\n\nSome captured text.\n\n> [!ai] Tidy this capture\n> Keep it short.\n");
    const r = await poll;
    expect(r.timedOut).toBe(false);
    expect(r.cursor).toBeGreaterThan(cursor);
    expect(r.directives).toContainEqual({ path: "Inbox/Raw.md", line: 5, title: "Tidy this capture", body: "Keep it short.", done: false });
    expect(r.directives).toHaveLength(2);
    cursor = r.cursor;
  });

  test("an unrelated edit (and a directive outside the scope) does not wake it; a timeout returns no directives", async () => {
    const t0 = Date.now();
    const scoped = s.call("await_directives", { cursor, timeout_ms: 4000, path: "Projects" });
    const all = s.call("await_directives", { cursor, timeout_ms: 4000 });
    await parkedAtLeast(2);
    writeFileSync(join(s.root, "Garden/Compost.md"), readFileSync(join(s.root, "Garden/Compost.md"), "utf8") + "\nA note about zucchiniwords.\n");
    await indexed("zucchiniwords");
    // The edit is in the index and the calls are still parked.
    expect(hub().parked).toBe(2);
    const unrelated = await all;
    expect(unrelated).toEqual({ cursor, timedOut: true, directives: [] });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(3900);
    expect((await scoped).timedOut).toBe(true);
    // Now a directive outside Projects/: the unscoped cursor moves, the scoped call sleeps on.
    const scopedAgain = s.call("await_directives", { cursor, timeout_ms: 3000, path: "Projects" });
    await parkedAtLeast(1);
    writeFileSync(join(s.root, "Inbox/Other.md"), "# Other\n\n> [!ai] Not for projects\n");
    await waitFor(() => hub().cursor > cursor, { what: "the cursor to move" });
    expect(hub().parked).toBe(1);
    expect((await scopedAgain).timedOut).toBe(true);
    const r = await s.call("await_directives", { cursor, timeout_ms: 3000 });
    expect(r.timedOut).toBe(false); // stale cursor: answered at once
    expect(titles(r.directives)).toContain("Not for projects");
    cursor = r.cursor;
  });

  test("a directive completed on disk ([!ai] → [!ai-done]) wakes the call and leaves the pending set", async () => {
    const poll = s.call("await_directives", { cursor, timeout_ms: 55_000 });
    await parkedAtLeast(1);
    const file = join(s.root, MEETING);
    writeFileSync(file, readFileSync(file, "utf8").replace("> [!ai] Summarize", "> [!ai-done] Summarize") + "> - Read-only first (Deniz)\n");
    const r = await poll;
    expect(r.timedOut).toBe(false);
    expect(titles(r.directives)).not.toContain("Summarize the section above");
    expect(titles(r.directives).sort()).toEqual(["Not for projects", "Tidy this capture"]);
    expect(await s.call("pending_directives", { path: MEETING })).toEqual([]);
    cursor = r.cursor;
  });

  test("text added above a directive moves its line but is not a change of the set", async () => {
    const poll = s.call("await_directives", { cursor, timeout_ms: 3000 });
    await parkedAtLeast(1);
    const file = join(s.root, "Inbox/Raw.md");
    writeFileSync(file, "# Raw\n\nA new first paragraph with quetzalword.\n\n" + readFileSync(file, "utf8").replace(/^# Raw\n\n/, ""));
    await indexed("quetzalword");
    expect((await poll).timedOut).toBe(true);
    const now = await s.call("pending_directives", { path: "Inbox/Raw.md" });
    expect(now[0].line).toBe(7);
  });

  test("timeout_ms is clamped to at least 1000 ms", async () => {
    const t0 = Date.now();
    const r = await s.call("await_directives", { cursor, timeout_ms: 1 });
    expect(r.timedOut).toBe(true);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    const neg = await s.call("await_directives", { cursor, timeout_ms: -5 });
    expect(neg.timedOut).toBe(true);
    // A malformed argument is a protocol error (JSON-RPC invalid params), not a crash.
    await expect(s.callRaw("await_directives", { cursor: -1 })).rejects.toThrow(/Invalid arguments/);
  });

  test("a client that disconnects frees its parked call", async () => {
    const ac = new AbortController();
    const req = fetch(s.url, {
      method: "POST",
      signal: ac.signal,
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${s.tokens.read}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "await_directives", arguments: { cursor, timeout_ms: 55_000 } } }),
    }).catch((e) => e);
    await parkedAtLeast(1);
    ac.abort();
    expect(await req).toBeInstanceOf(Error);
    await waitFor(() => hub().parked === 0, { what: "the parked call to end" });
  });
});
