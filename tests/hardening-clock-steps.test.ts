// The wall clock is not a stopwatch (the clock audit of 2026-12-05): an NTP step, a VM restored from a
// snapshot, a hardware clock kept in local time put right after boot. A server run under libfaketime has
// its wall clock (Date.now) stepped while it runs, its monotonic clock and timers left alone.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readFileSync, rmSync, utimesSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { openStateDb } from "../lib/store/state-db";
import { createToken } from "../lib/store/tokens";
import { createLoginCode } from "../lib/web/sessions";
import { freePort, httpMcp, runLettuce, servedVault, spawnLettuce, type LiveProcess } from "./helpers/cli";
import { startTestServer, tempDir, waitFor } from "./helpers/server";

const FAKETIME = ["/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1", "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1"].find(existsSync);
if (!FAKETIME) console.log("hardening-clock-steps: clock-step cases skipped: libfaketime is not installed (apt-get install faketime)");

describe.skipIf(!FAKETIME)("a server whose wall clock steps while it runs", () => {
  const dir = tempDir("lettuce-clock-");
  const root = join(dir, "vault");
  const offsetFile = join(dir, "offset");
  const port = freePort();
  let token = "";
  let server: LiveProcess | null = null;
  /** Step the server's wall clock to `offset` from the real time ("+0", "-86400", "+10"). */
  const step = async (offset: string) => {
    writeFileSync(offsetFile, `${offset}\n`);
    await Bun.sleep(100);
  };
  /** A tool's answer (an error's too: {error, kind}). */
  const call = (name: string, args: unknown): Promise<any> => httpMcp(port, token).call(name, args);

  beforeAll(async () => {
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, "index.md"), "# Index\n\nsoft locks and glaciers\n");
    writeFileSync(offsetFile, "+0\n");
    const db = openStateDb(root);
    token = createToken(db, "clock", "write").token;
    db.close();
    server = spawnLettuce(["serve", root, "--port", String(port)], {
      env: {
        LD_PRELOAD: FAKETIME,
        FAKETIME_TIMESTAMP_FILE: offsetFile,
        FAKETIME_NO_CACHE: "1",
        FAKETIME_DONT_FAKE_MONOTONIC: "1",
        LETTUCE_EMBED_PROVIDER: "none",
        LETTUCE_DIRECTIVE_LEASE_MS: "2000",
      },
    });
    await server.waitForStdout(/Index current/, 60_000);
  }, 90_000);

  afterAll(async () => {
    await server?.stop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });

  test("a step back does not lock a token out of the model-backed tools", async () => {
    const before = await call("semantic_search", { query: "soft locks", limit: 1 });
    await step("-86400");
    try {
      for (let i = 0; i < 3; i++) {
        const after = await call("semantic_search", { query: "soft locks", limit: 1 });
        expect(after.kind).not.toBe("rate-limited");
        expect(after.kind).toBe(before.kind);
      }
    } finally {
      await step("+0");
    }
  });

  test("a step forward does not end the watch that puts back a person's save an agent's write displaced", async () => {
    const file = join(root, "n.md");
    writeFileSync(file, "# N\n\nthe person's old text\n");
    await Bun.sleep(400);
    const fd = openSync(file, "r+"); // the person's editor holds the note open
    const r = await call("write_note", { path: "n.md", content: "# N\n\nthe agent's text\n", overwrite: true });
    expect(r.kind).toBeUndefined();
    await step("+10");
    try {
      await Bun.sleep(800);
      ftruncateSync(fd, 0); // the editor saves in place, into the file the agent's write displaced
      writeSync(fd, "# N\n\nthe person's new text\n", 0);
      closeSync(fd);
      await waitFor(() => readFileSync(file, "utf8").includes("the person's new text"), { timeoutMs: 10_000, what: "the person's save put back" });
    } finally {
      await step("+0");
    }
  }, 30_000);

  test("a claim made while the clock ran a month ahead neither spins a timer nor outlives its lease", async () => {
    writeFileSync(join(root, "w.md"), "# W\n\n> [!ai] file this\n");
    await waitFor(async () => (await call("pending_directives", {})).length === 1, { what: "the directive indexed" });
    await step("+2592000");
    const claimed = await call("await_directives", { cursor: 0, worker: "a", claim: true, timeout_ms: 1000 });
    expect(claimed.directives.length).toBe(1);
    const errBefore = server!.stderr().length;
    await step("+0");
    // Still held by worker a for its 2 s lease (set for this server)...
    expect((await call("await_directives", { cursor: 0, worker: "b", claim: true, timeout_ms: 1000 })).directives).toEqual([]);
    await Bun.sleep(2500);
    // ...then free to b, not hidden for the month the clock ran ahead.
    const other = await call("await_directives", { cursor: 0, worker: "b", claim: true, timeout_ms: 1000 });
    expect(other.directives.map((d: any) => d.path)).toEqual(["w.md"]);
    // setTimeout turns a delay past 24.8 days into 1 ms: the server logged a warning every millisecond.
    expect(server!.stderr().slice(errBefore)).not.toContain("TimeoutOverflowWarning");
    expect(server!.stderr().length - errBefore).toBeLessThan(2_000);
  }, 30_000);

  test("after a step back the change feed stays in order, and neither a sync by cursor nor one by time misses a change", async () => {
    writeFileSync(join(root, "a.md"), "# A\n");
    await waitFor(async () => (await call("get_changes_since", { since: "2000-01-01T00:00:00Z", limit: 100 })).changes.some((i: any) => i.id === "a.md"), {
      what: "a.md in the feed",
    });
    const since = new Date().toISOString();
    const cursor = (await call("get_changes_since", { since, limit: 100 })).nextCursor;
    await Bun.sleep(50);
    await step("-3600");
    try {
      writeFileSync(join(root, "b.md"), "# B\n");
      await waitFor(async () => (await call("get_changes_since", { since: "2000-01-01T00:00:00Z", limit: 100 })).changes.some((i: any) => i.id === "b.md"), {
        what: "b.md in the feed",
      });
      // The caller's clock is an hour past the server's: b.md was recorded "before" since, by the server's clock.
      const byTime = await call("get_changes_since", { since, limit: 100 });
      expect(byTime.changes.map((i: any) => i.id)).toContain("b.md");
      const byCursor = await call("get_changes_since", { cursor, limit: 100 });
      expect(byCursor.changes.map((i: any) => i.id)).toContain("b.md");
      const all = (await call("get_changes_since", { since: "2000-01-01T00:00:00Z", limit: 100 })).changes;
      const times = all.map((i: any) => Date.parse(i.updatedAt));
      expect(times).toEqual([...times].sort((x, y) => x - y));
    } finally {
      await step("+0");
    }
  }, 30_000);

});

test("a web login code or session dated further ahead than a fresh one is refused", async () => {
  const s = await startTestServer();
  try {
    const origin = new URL(s.url).origin;
    // Made by `lettuce login` while the clock ran a day ahead, used after it was put right.
    const ahead = createLoginCode(s.vault.stateDb, Date.now() + 86_400_000);
    expect((await fetch(`${origin}/login?code=${ahead.code}`, { redirect: "manual" })).status).toBe(401);
    const fresh = createLoginCode(s.vault.stateDb);
    expect((await fetch(`${origin}/login?code=${fresh.code}`, { redirect: "manual" })).status).toBe(303);
  } finally {
    await s.close();
  }
});

describe("database dates east and west of UTC", () => {
  const BASE = `filters:
  and:
    - file.inFolder("T")
formulas:
  mday: 'file.mtime.date()'
  editedToday: 'file.mtime.date() == today()'
  sinceToday: 'file.mtime >= today()'
  dueToday: 'date(due) == today()'
  dueVsNow: 'date(due) <= now()'
views:
  - type: table
    name: all
    order:
      - file.name
      - formula.mday
      - formula.editedToday
      - formula.sinceToday
      - formula.dueToday
      - formula.dueVsNow
`;
  const localDate = (zone: string, at = new Date()) => new Intl.DateTimeFormat("en-CA", { timeZone: zone }).format(at);

  for (const [zone, offset, when, edited] of [
    ["Pacific/Kiritimati", "+14:00", "today 00:30", true],
    ["America/St_Johns", "-03:30", "yesterday 22:00", false],
  ] as const) {
    test(`in ${zone}, a note ${when} local time is ${edited ? "" : "not "}edited today`, async () => {
      const root = tempDir("lettuce-tz-");
      mkdirSync(join(root, "T"), { recursive: true });
      writeFileSync(join(root, "T.base"), BASE);
      const today = localDate(zone);
      const day = edited ? today : localDate(zone, new Date(Date.now() - 86_400_000));
      const note = join(root, "T", "n.md");
      writeFileSync(note, `---\ndue: ${today}\n---\nx\n`);
      const mtime = new Date(`${day}T${when.slice(-5)}:00${offset}`);
      utimesSync(note, mtime, mtime);
      const served = await servedVault(root, { scope: "read", env: { TZ: zone } });
      try {
        const page = await served.mcp.call("query_database", {
          databaseId: "T.base",
          fields: ["formula.mday", "formula.editedToday", "formula.sinceToday", "formula.dueToday", "formula.dueVsNow"],
        });
        expect(page.error).toBeUndefined();
        const p = page.rows[0].properties;
        expect(p["formula.mday"]).toBe(day);
        expect(p["formula.editedToday"]).toBe(edited);
        expect(p["formula.sinceToday"]).toBe(edited);
        expect(p["formula.dueToday"]).toBe(true);
        expect(p["formula.dueVsNow"]).toBe(true);
      } finally {
        await served.close();
      }
    }, 60_000);
  }
});

test("a day the calendar lacks is refused as a time, and a span past what a date holds says so", async () => {
  const s = await startTestServer();
  try {
    for (const [tool, args] of [
      ["get_changes_since", { since: "2026-02-30T00:00:00Z" }],
      ["get_changes_since", { since: "2025-02-29" }],
      ["query_audit_log", { from: "2026-04-31T10:00:00Z" }],
    ] as const) {
      const r: any = await s.callRaw(tool, args);
      expect(r.kind).toBe("invalid-input");
    }
    expect((await s.call("get_changes_since", { since: "2024-02-29T00:00:00Z" })).changes).toBeDefined();
    const far = await runLettuce(["audit", s.root, "--since", "999999999d"]);
    expect(far.code).toBe(2);
    expect(far.stderr).toContain("further than a date can");
  } finally {
    await s.close();
  }
});
