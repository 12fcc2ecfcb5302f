// Background passes other than embedding yield to requests (issue 15 part 1):
// the audit log's pruning, the change journal's catch-up after a full scan and
// the daily health record each wait while a request is in flight and run once
// the server is quiet; a request made meanwhile is answered without them. The
// request "in flight" is held with requestStarted(), the very call the HTTP
// layer makes for each request; the requests made meanwhile go through the
// real server. Assertions are on order and progress, never on time.
import { afterAll, expect, test } from "bun:test";
import { readdirSync, rmSync } from "node:fs";
import { auditLog } from "../lib/audit/log";
import { changeJournal } from "../lib/changes/journal";
import { backgroundWaiting, requestStarted, shouldYield, whenQuiet } from "../lib/offload/activity";
import { progressLine } from "../lib/semantic/progress";
import { startHealthRecorder } from "../lib/web/health-history";
import { withEnv } from "./helpers/env";
import { ringVault, startTestServer, waitFor } from "./helpers/server";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const vault = (notes: number) => ringVault(notes, dirs);
const mdCount = (root: string) => readdirSync(root, { recursive: true }).filter((f) => String(f).endsWith(".md")).length;
// A few turns of the event loop and timers, longer than the quiet period set below.
const turns = () => Bun.sleep(120);

test("audit pruning waits while a request is in flight, deletes in slices once quiet, and a request made meanwhile is answered", async () => {
  await withEnv({ LETTUCE_BACKGROUND_IDLE_MS: "30" }, async () => {
    const s = await startTestServer({ root: vault(3) });
    try {
      const db = s.vault.stateDb;
      const log = auditLog(s.vault);
      await log.prune();
      // 5,000 entries from two years ago: past any retention.
      const old = Date.now() - 2 * 365 * 86_400_000;
      const ins = db.query("INSERT INTO audit_log(created_at, tool, status, token_name) VALUES (?, 'search', 'success', 't')");
      db.transaction(() => {
        for (let i = 0; i < 5000; i++) ins.run(old + i);
      })();
      const expired = () => (db.query("SELECT count(*) AS n FROM audit_log WHERE created_at < ?").get(old + 10_000) as { n: number }).n;
      const end = requestStarted();
      const pruning = log.prune();
      await turns();
      // A request served meanwhile through the real server is answered; nothing was pruned yet.
      const info = await s.call("get_vault_info");
      expect(info.notes ?? info.counts?.notes ?? mdCount(s.root)).toBe(mdCount(s.root));
      expect(expired()).toBe(5000);
      end();
      await pruning;
      expect(expired()).toBe(0);
    } finally {
      await s.close();
    }
  });
});

test("the change journal catches up after a full scan only once the server is quiet; a feed read before then catches up first", async () => {
  await withEnv({ LETTUCE_BACKGROUND_IDLE_MS: "30" }, async () => {
    const root = vault(40);
    const s = await startTestServer({ root });
    try {
      const db = s.vault.stateDb;
      const journal = changeJournal(s.vault);
      const rows = () => (db.query("SELECT count(*) AS n FROM change_journal WHERE change <> 'deleted'").get() as { n: number }).n;
      await waitFor(() => rows() === mdCount(root), { what: "the journal to hold every note" });
      // A gap the feed missed (as after a crash between the index's commit and the journal's).
      db.exec("DELETE FROM change_journal");
      const end = requestStarted();
      await s.vault.indexer.fullScan();
      await turns();
      // The whole-vault catch-up has not run while the request is in flight.
      expect(rows()).toBe(0);
      end();
      await waitFor(() => rows() === mdCount(root), { what: "the catch-up once quiet" });
      expect(journal.maxSeq()).toBeGreaterThan(0);

      // Again, and this time the feed is read before the server is quiet: that read is the request's own work.
      db.exec("DELETE FROM change_journal");
      const end2 = requestStarted();
      await s.vault.indexer.fullScan();
      await turns();
      expect(rows()).toBe(0);
      const feed = await s.call("get_changes_since", {});
      expect(rows()).toBe(mdCount(root));
      expect(feed.total ?? feed.changes?.length ?? feed.items?.length).toBeGreaterThan(0);
      end2();
    } finally {
      await s.close();
    }
  });
});

test("the health recorder waits while a request is in flight, then records the day's score computed in a read worker", async () => {
  await withEnv({ LETTUCE_BACKGROUND_IDLE_MS: "30" }, async () => {
    const s = await startTestServer({ root: vault(12) });
    try {
      const db = s.vault.stateDb;
      const rows = () => (db.query("SELECT count(*) AS n FROM health_history").get() as { n: number }).n;
      // The server's own recorder records once at start (then hourly); let it, then start from none.
      await waitFor(() => rows() === 1, { what: "the server's first record" });
      db.exec("DELETE FROM health_history");
      const end = requestStarted();
      const stop = startHealthRecorder(s.vault, 60 * 60_000, 60_000);
      try {
        await turns();
        const health = await s.call("wiki_health");
        expect(rows()).toBe(0);
        end();
        await waitFor(() => rows() === 1, { what: "the day's health record" });
        const row = db.query("SELECT score FROM health_history").get() as { score: number };
        expect(row.score).toBe(health.score);
      } finally {
        stop();
      }
    } finally {
      await s.close();
    }
  });
});

test("background work that requests never leave room for still gets a share: after LETTUCE_BACKGROUND_STARVE_MS of waiting it runs for a tenth of that, then waits again", async () => {
  await withEnv({ LETTUCE_BACKGROUND_IDLE_MS: "150", LETTUCE_BACKGROUND_STARVE_MS: "600" }, async () => {
    const s = await startTestServer({ root: vault(3) });
    let traffic = true;
    let calls = 0;
    // A client polling every 20 ms through the real server: never 150 ms of quiet.
    const poller = (async () => {
      while (traffic) {
        await s.call("get_vault_info");
        calls++;
        await Bun.sleep(20);
      }
    })();
    try {
      await waitFor(() => calls >= 3, { what: "the poller's first calls" });
      let stepped = false;
      const step = whenQuiet().then(() => (stepped = true));
      await Bun.sleep(300);
      // Kept waiting, and it shows (the embedding's progress says so instead of a time that will not come true).
      expect(stepped).toBe(false);
      expect(backgroundWaiting()).toBe(true);
      await step;
      const callsAtStep = calls;
      // It ran while the poller went on, not after it stopped.
      expect(traffic).toBe(true);
      await waitFor(() => calls >= callsAtStep + 3, { what: "the poller still answered" });
      // The grant (60 ms) is over and nobody has waited since: requests come first again.
      await Bun.sleep(200);
      expect(shouldYield()).toBe(true);
    } finally {
      traffic = false;
      await poller;
      await s.close();
    }
  });
});

test("the progress line says when the embedding is paused by steady requests instead of giving a time", () => {
  const base = { state: "building" as const, notesEmbedded: 10, notesTotal: 100, passagesLeft: 400, passagesPerSecond: 40, etaSeconds: 10 };
  expect(progressLine(base)).toContain("about 10 s");
  const paused = progressLine({ ...base, paused: true });
  expect(paused).toContain("paused while requests keep arriving");
  expect(paused).not.toContain("about 10 s");
});
