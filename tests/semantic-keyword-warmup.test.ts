// `serve` fills the stemmed keyword index and the anchor text in the
// background at start-up (lib/semantic/keyword-sync.ts, through SemanticService.syncKeywords({background: true})),
// so that the first hybrid query does not wait seconds for them: the real
// `lettuce serve` process does it before any query; the background sync
// pauses while other callers' requests are in flight; and a request that
// needs the keyword index meanwhile gets it at once, not when the server
// next falls quiet.
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { requestStarted } from "../lib/offload/activity";
import { retrieve } from "../lib/semantic/retrieve";
import { SemanticService } from "../lib/semantic/service";
import { lettuceDir } from "../lib/store/index-db";
import { freePort, spawnLettuce } from "./helpers/cli";
import { withEnv } from "./helpers/env";
import { startModelServer } from "./helpers/model-server";
import { ringVault, startTestServer } from "./helpers/server";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const count = (db: Database, sql: string) => (db.query(sql).get() as { n: number }).n;

/** Keep a young request in flight (a new one every 200 ms, as a steady stream of other callers would) until stopped. */
function requestStream(): { stop: () => void } {
  let done = requestStarted();
  const timer = setInterval(() => {
    const next = requestStarted();
    done();
    done = next;
  }, 200);
  return {
    stop: () => {
      clearInterval(timer);
      done();
    },
  };
}

test("lettuce serve stems the vault and reads its anchor text at start-up, before any query", async () => {
  const root = ringVault(2000, dirs);
  const m = startModelServer({ embedDelayMs: 20 });
  try {
    await withEnv({ LETTUCE_EMBED_PROVIDER: "ollama", OLLAMA_HOST: m.url, LETTUCE_LLM_PROVIDER: "none" }, async () => {
      const srv = spawnLettuce(["serve", root, "--port", String(freePort())]);
      try {
        const line = await srv.waitForStdout(/Keyword ranking ready: ([\d]+) notes stemmed/, 60_000);
        expect(Number(line[1])).toBe(2000);
        const db = new Database(join(lettuceDir(root), "index.db"), { readonly: true });
        try {
          expect(count(db, "SELECT count(*) AS n FROM fts_stem_notes")).toBe(2000);
          // Every note of the ring is linked from the one before it.
          expect(count(db, "SELECT count(*) AS n FROM anchor_lines")).toBe(2000);
          expect(count(db, "SELECT count(*) AS n FROM anchor_dirty")).toBe(0);
        } finally {
          db.close();
        }
      } finally {
        await srv.stop();
      }
    });
  } finally {
    await m.stop();
  }
}, 120_000);

test("the background keyword sync waits while requests are in flight, and goes on once the server is quiet", async () => {
  const s = await startTestServer({ root: ringVault(3000, dirs) });
  const stream = requestStream();
  try {
    const svc = SemanticService.for(s.vault);
    let finished = false;
    const warm = svc.syncKeywords({ background: true }).then((n) => ((finished = true), n));
    await Bun.sleep(1500);
    // One slice may go before the first pause; the rest waits for the stream of requests to end.
    expect(finished).toBe(false);
    expect(count(s.vault.indexDb, "SELECT count(*) AS n FROM fts_stem_notes")).toBeLessThan(3000);
    stream.stop();
    expect(await warm).toBe(3000);
    expect(count(s.vault.indexDb, "SELECT count(*) AS n FROM fts_stem_notes")).toBe(3000);
  } finally {
    stream.stop();
    await s.close();
  }
}, 60_000);

test("a query that needs the keyword index while a background sync waits for quiet gets it at once, with other requests still coming", async () => {
  const s = await startTestServer({ root: ringVault(3000, dirs) });
  const stream = requestStream();
  try {
    const svc = SemanticService.for(s.vault);
    const warm = svc.syncKeywords({ background: true });
    await Bun.sleep(300);
    // The background sync is parked (requests keep coming). The query joins it and wakes it; it does not
    // wait for a quiet moment that this stream never leaves.
    let answered = false;
    const query = retrieve(svc, { query: "links", mode: "keyword", limit: 5 }).then((r) => ((answered = true), r));
    const deadline = Date.now() + 20_000;
    while (!answered && Date.now() < deadline) await Bun.sleep(50);
    expect(answered).toBe(true);
    expect((await query).notes.length).toBe(5);
    expect(count(s.vault.indexDb, "SELECT count(*) AS n FROM fts_stem_notes")).toBe(3000);
    // The background call ended with the same sync (one sync at a time).
    await warm;
  } finally {
    stream.stop();
    await s.close();
  }
}, 60_000);
