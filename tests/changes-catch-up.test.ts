// The change journal's catch-up with the whole index (after a full scan, or an index built while no server
// ran): the comparison of every note runs in a read worker, and the notes it names are recorded a few hundred
// at a time, each step a turn of the event loop, so other requests are served in between. A step reads its
// notes and journal rows again, so a comparison made before a save neither overwrites what the save's own
// index pass recorded nor reports a deletion of a note that is back. Assertions are on order and content.
import { afterAll, expect, test } from "bun:test";
import { rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { journalDiff, journalDiffOf } from "../lib/changes/diff";
import { changeJournal } from "../lib/changes/journal";
import { offloaded } from "../lib/offload/offloaded";
import { ringVault, startTestServer, waitFor, type TestServer } from "./helpers/server";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

// Past the few thousand notes a catch-up compares on the request thread (journal.ts, INLINE_DIFF).
const NOTES = 2500;

/**
 * A server on a ring vault of `notes` notes whose journal has caught up, with the comparisons handed to a read
 * worker counted from there on; `fn` gets the server, that count and the journal's live rows.
 */
async function withJournal(notes: number, fn: (s: TestServer, diffs: () => number, rows: () => number) => Promise<void>): Promise<void> {
  const s = await startTestServer({ root: ringVault(notes, dirs) });
  const diff = offloaded.journalDiff;
  let diffs = 0;
  offloaded.journalDiff = (v) => (diffs++, diff(v));
  try {
    const rows = () => (s.vault.stateDb.query("SELECT count(*) AS n FROM change_journal WHERE change <> 'deleted'").get() as { n: number }).n;
    // The index was built before the server attached its journal: it catches up once quiet.
    await waitFor(() => rows() === notes, { what: "the journal to hold every note" });
    diffs = 0;
    await fn(s, () => diffs, rows);
  } finally {
    offloaded.journalDiff = diff;
    await s.close();
  }
}

test("a feed read waits for a catch-up compared in a read worker and recorded in steps, with requests served between them", async () => {
  await withJournal(NOTES, async (s, diffs, rows) => {
    // A gap the feed missed, as after a crash between the index's commit and the journal's.
    s.vault.stateDb.exec("DELETE FROM change_journal");
    await s.vault.indexer.fullScan();
    // What the event loop sees between its own turns while the feed read catches up.
    const seen: number[] = [];
    let sampling = true;
    const sample = () => {
      if (!sampling) return;
      seen.push(rows());
      setImmediate(sample);
    };
    setImmediate(sample);
    const feed = await s.call("get_changes_since", { limit: 1000 });
    sampling = false;
    expect(feed.changes.length).toBe(1000);
    expect(rows()).toBe(NOTES); // the whole catch-up, before the answer
    expect(new Set(feed.changes.map((c: { changeType: string }) => c.changeType))).toEqual(new Set(["created"]));
    expect(diffs()).toBe(1);
    // Partly recorded between turns: the catch-up did not hold the event loop for the whole vault.
    expect(seen.some((n) => n > 0 && n < NOTES)).toBe(true);
    // The feed is chronological across the steps.
    const dates = feed.changes.map((c: { updatedAt: string }) => Date.parse(c.updatedAt));
    expect(dates).toEqual([...dates].sort((a, b) => a - b));
  });
});

test("a comparison made before a save neither overwrites what the save recorded nor deletes a note that is back", async () => {
  const root = ringVault(10, dirs);
  const s = await startTestServer({ root });
  try {
    const journal = changeJournal(s.vault);
    const state = s.vault.stateDb;
    const row = (id: string) => state.query("SELECT seq, change, hash FROM change_journal WHERE id = ?").get(id) as { seq: number; change: string; hash: string | null } | null;
    const indexHash = (id: string) => (s.vault.indexDb.query("SELECT hash FROM notes WHERE path = ?").get(id) as { hash: string }).hash;
    await waitFor(() => row("Notes/N9.md") !== null, { what: "the journal to hold every note" });

    // N1 is deleted while the journal misses it: the journal still lists it when the comparison is made.
    const n1 = row("Notes/N1.md")!;
    unlinkSync(join(root, "Notes/N1.md"));
    await s.vault.indexer.update(["Notes/N1.md"]);
    state.query("UPDATE change_journal SET change = ?, hash = ? WHERE id = 'Notes/N1.md'").run(n1.change, n1.hash);
    // N2 changes and the journal misses that too.
    const n2 = row("Notes/N2.md")!;
    writeFileSync(join(root, "Notes/N2.md"), "# N2\n\nChanged while the journal was not told.\n");
    await s.vault.indexer.update(["Notes/N2.md"]);
    state.query("UPDATE change_journal SET hash = ? WHERE id = 'Notes/N2.md'").run(n2.hash);
    const stale = journalDiff(s.vault.indexDb, s.vault.stateDbNoSync);
    expect(stale.gone).toBe("Notes/N1.md");
    expect(stale.changed).toBe("Notes/N2.md");
    // The worker's way (state.db attached, compared in SQL) finds the same.
    expect(journalDiffOf(s.vault.indexDb, s.vault.stateDbNoSync.filename)).toEqual(stale);

    // Before the catch-up runs: N1 comes back as it was, N2 is saved again, each recorded by its pass.
    writeFileSync(join(root, "Notes/N1.md"), "# N1\n\nNote 1 links to [[N2]].\n");
    await s.vault.indexer.update(["Notes/N1.md"]);
    writeFileSync(join(root, "Notes/N2.md"), "# N2\n\nSaved once more.\n");
    await s.vault.indexer.update(["Notes/N2.md"]);
    const recorded = row("Notes/N2.md")!;
    expect(recorded.hash).toBe(indexHash("Notes/N2.md"));
    const before = journal.maxSeq();

    expect(await journal.reconcile(async () => stale)).toBe(0);
    expect(journal.maxSeq()).toBe(before);
    expect(row("Notes/N1.md")).toMatchObject({ change: n1.change, hash: indexHash("Notes/N1.md") });
    expect(row("Notes/N2.md")).toEqual(recorded);
  } finally {
    await s.close();
  }
});

test("a pass that changes hundreds of notes (a sync, a checkout) is recorded as a catch-up: each note once, before the next feed read", async () => {
  await withJournal(NOTES, async (s, diffs) => {
    let page = await s.call("get_changes_since", { limit: 1000 });
    while (page.hasMore) page = await s.call("get_changes_since", { cursor: page.nextCursor, limit: 1000 });
    const before = diffs();
    // A cursor re-reports the second it was issued in (docs/workspace.md): change nothing before the next one.
    await Bun.sleep(1020 - (Date.now() % 1000));
    const edited = Array.from({ length: 250 }, (_, i) => `Notes/N${i}.md`);
    for (const p of edited) writeFileSync(join(s.root, p), `# ${p}\n\nSynced from elsewhere.\n`);
    unlinkSync(join(s.root, `Notes/N${NOTES - 1}.md`));
    await s.vault.indexer.update([...edited, `Notes/N${NOTES - 1}.md`]);
    const feed = await s.call("get_changes_since", { cursor: page.nextCursor, limit: 1000 });
    expect(diffs()).toBeGreaterThan(before);
    const byId = new Map(feed.changes.map((c: { id: string; changeType: string }) => [c.id, c.changeType]));
    expect(feed.changes.length).toBe(251);
    for (const p of edited) expect(byId.get(p)).toBe("updated");
    expect(byId.get(`Notes/N${NOTES - 1}.md`)).toBe("deleted");
  });
});

test("a vault of a few notes is compared on the request thread: no read worker is started for it", async () => {
  await withJournal(20, async (s, diffs) => {
    s.vault.stateDb.exec("DELETE FROM change_journal");
    await s.vault.indexer.fullScan();
    const feed = await s.call("get_changes_since", {});
    expect(feed.changes.length).toBe(20);
    expect(diffs()).toBe(0);
  });
});
