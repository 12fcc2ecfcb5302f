// The agent-edits timeline keeps each text once, compressed, and as what an edit changed where that is small
// (lib/write/edit-texts.ts). Before, a one-byte edit of a 2 MiB note stored 4 MB and each append_log stored
// the whole log.md twice (the growth audit of 2026-12-05). Every text must still come back byte for byte.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { contentHash } from "../lib/index/parse-job";
import { dropPending, getEdit, insertPending, listEdits, markApplied } from "../lib/write/edits";
import { loadText, stageText, storeText, unstage, type StagedTexts } from "../lib/write/edit-texts";
import { recoverTimeline } from "../lib/write/recover";
import { BUN, runLettuce } from "./helpers/cli";
import { REPO, startTestServer, type TestServer } from "./helpers/server";

/** Bytes the timeline holds: its texts, and any bytes rows hold themselves. */
function timelineBytes(s: TestServer): number {
  const db = s.vault.stateDb;
  const texts = (db.query("SELECT coalesce(sum(length(data)), 0) AS n FROM edit_texts").get() as { n: number }).n;
  const inline = (db.query("SELECT coalesce(sum(length(before)), 0) + coalesce(sum(length(after)), 0) AS n FROM agent_edits").get() as { n: number }).n;
  return texts + inline;
}

/** Every text of every edit comes back with the hash its row names. */
function expectEveryTextWhole(s: TestServer): number {
  let n = 0;
  for (const e of listEdits(s.vault.stateDb, { limit: 100_000 })) {
    const row = getEdit(s.vault.stateDb, e.id)!;
    expect(row.before === null ? null : contentHash(row.before)).toBe(e.beforeHash);
    expect(row.after === null ? null : contentHash(row.after)).toBe(e.afterHash);
    n++;
  }
  return n;
}

describe("the timeline's texts", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s?.close());

  // Words that do not repeat, so that compression alone cannot explain the figures.
  const prose = (n: number, seed: number) => Array.from({ length: n }, (_, i) => `w${((i + 1) * 2654435761 + seed) % 1_000_003}`).join(" ");

  test("small edits of a big note cost about what they change, and every version comes back", async () => {
    const path = "Big/Manual.md";
    await s.call("write_note", { path, content: `# Manual\n\n${prose(30_000, 1)}\n\nThe end.\n` }); // ~240 KB
    const start = timelineBytes(s);
    // More edits than the longest chain of deltas (64): a whole copy comes in between.
    for (let i = 0; i < 80; i++) {
      await s.call("apply_edits", { path, edits: [{ find: i === 0 ? "The end." : `The end ${i - 1}.`, replace: `The end ${i}.` }] });
    }
    const grew = timelineBytes(s) - start;
    // Whole before and after texts: 80 × 2 × 240 KB = 38 MB. Now a delta an edit, and one more whole copy.
    expect(grew).toBeLessThan(300_000); // measured: 82 KB
    expect(expectEveryTextWhole(s)).toBe(81);
    // A revert puts back the exact text from before the last edit.
    const last = listEdits(s.vault.stateDb, { limit: 1 })[0]!;
    const r = await runLettuce(["revert", s.root, String(last.id)]);
    expect(r.code).toBe(0);
    expect(readFileSync(join(s.root, path), "utf8").endsWith("The end 78.\n")).toBe(true);
  }, 60_000);

  test("append_log stores each entry, not the whole log twice", async () => {
    await s.call("write_note", { path: "log.md", content: `# Log\n\n${prose(30_000, 2)}\n`, overwrite: true }); // ~240 KB
    const start = timelineBytes(s);
    for (let i = 0; i < 40; i++) await s.call("append_log", { op: "note", title: `entry ${i}`, body: prose(20, 100 + i) });
    // Before: 40 × 2 × 240 KB = 19 MB.
    expect(timelineBytes(s) - start).toBeLessThan(100_000); // measured: 5.5 KB
    expectEveryTextWhole(s);
  }, 60_000);

  test("a move and its link rewrites, a delete, and texts that share nothing", async () => {
    await s.call("write_note", { path: "Moveable target.md", content: `# Moveable target\n\n${prose(2_000, 3)}\n` });
    for (let i = 0; i < 5; i++) await s.call("write_note", { path: `Linkers/L${i}.md`, content: `# L${i}\n\n${prose(5_000, 10 + i)} [[Moveable target]]\n` });
    const m = await s.call("move_note", { from: "Moveable target.md", to: "Moved/Renamed target.md" });
    expect(m.notesUpdated.length).toBe(5);
    expect(readFileSync(join(s.root, "Linkers/L2.md"), "utf8")).toContain("[[Renamed target]]");
    expect((await runLettuce(["revert", s.root, String(m.editId)])).code).toBe(0);
    expect(readFileSync(join(s.root, "Linkers/L2.md"), "utf8")).toContain("[[Moveable target]]");
    await s.call("delete_note", { path: "Linkers/L0.md" });
    // A rewrite that keeps nothing of the old text: stored whole, not as a delta.
    await s.call("write_note", { path: "Linkers/L1.md", content: prose(5_000, 999), overwrite: true });
    expectEveryTextWhole(s);
  });

  // insertPending reads (is this text stored yet?) before it writes: as a deferred transaction it failed at
  // once with "database is locked", without waiting, whenever another process wrote state.db in between
  // (a CLI approval or revert beside the server; the review found 466 of 1,113 such calls failing).
  test("writes go through while another process writes state.db", async () => {
    const noise = Bun.spawn(
      [
        process.execPath,
        "-e",
        `const { Database } = require("bun:sqlite");
         const db = new Database(process.argv[1]);
         db.exec("PRAGMA busy_timeout = 5000");
         db.exec("CREATE TABLE IF NOT EXISTS zz_noise(x)");
         const end = Date.now() + 20000;
         for (let n = 0; Date.now() < end; n++) { db.query("INSERT INTO zz_noise VALUES (?)").run(n); Bun.sleepSync(1); }`,
        join(s.root, ".lettuce", "state.db"),
      ],
      { stdout: "ignore", stderr: "inherit" },
    );
    try {
      await Bun.sleep(300);
      const failed: string[] = [];
      for (let i = 0; i < 30; i++) {
        const r = await s.callRaw("write_note", { path: `Race/n${i}.md`, content: `# n${i}\n\n${prose(60_000, 500 + i)}\n` });
        if (r.isError) failed.push(r.content?.[0]?.text);
      }
      expect(failed).toEqual([]);
    } finally {
      noise.kill();
    }
  }, 60_000);

  // A call that never landed (a person's save in between, or recovery after a crash) takes its rows back: its
  // texts go with them unless another row names them, counted, not found by reading the whole timeline.
  test("a call that never landed releases its texts; texts other rows name stay", async () => {
    const db = s.vault.stateDb;
    const enc = new TextEncoder();
    const texts = () => (db.query("SELECT count(*) AS n FROM edit_texts").get() as { n: number }).n;
    const applied = listEdits(db, { limit: 1 })[0]!;
    const shared = getEdit(db, applied.id)!.after!;
    const fresh = enc.encode(`never landed ${prose(2_000, 42)}`);
    const row = (before: Uint8Array | null, after: Uint8Array) => ({
      tool: "write_note", action: "write" as const, path: "Dropped.md", before, after,
      beforeHash: before ? contentHash(before) : null, afterHash: contentHash(after), agent: "t", token: "default",
    });
    const n0 = texts();
    const ids = insertPending(db, [row(shared, fresh), row(null, enc.encode(`${prose(3_000, 43)}`))]);
    expect(texts()).toBe(n0 + 2);
    dropPending(db, ids);
    expect(texts()).toBe(n0);
    expect(contentHash(getEdit(db, applied.id)!.after!)).toBe(applied.afterHash!);
    // Two calls in a chain (x -> y, then y -> z as a delta of y), taken back one after the other: the texts
    // of the first stay while the second's delta is based on them, and go with it.
    const x = enc.encode(`x ${prose(3_000, 44)}`);
    const y = enc.encode(`x ${prose(3_000, 44)} and y`);
    const z = enc.encode(`x ${prose(3_000, 44)} and y and z`);
    const first = insertPending(db, [row(x, y)]);
    const second = insertPending(db, [row(y, z)]);
    expect(texts()).toBe(n0 + 3);
    dropPending(db, first);
    expect(contentHash(loadText(db, contentHash(z))!)).toBe(contentHash(z));
    dropPending(db, second);
    expect(texts()).toBe(n0);
    expectEveryTextWhole(s);
  });

  // Two commits of this change (f354548, 8bae6f9) made edit_texts without its reference counts.
  test("a state.db whose edit_texts has no refs column gets one, counted, when opened", async () => {
    const root = join(s.root, "..", `refs-${Date.now()}`);
    const { openStateDb } = await import("../lib/store/state-db");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(root, { recursive: true });
    const enc = new TextEncoder();
    const a = enc.encode("a text\n");
    const b = enc.encode("a text, edited\n");
    let db = openStateDb(root);
    const ids = insertPending(db, [{ tool: "t", action: "write", path: "N.md", before: a, after: b, beforeHash: contentHash(a), afterHash: contentHash(b), agent: "t", token: "default" }]);
    markApplied(db, ids);
    db.exec("ALTER TABLE edit_texts DROP COLUMN refs");
    db.close();
    db = openStateDb(root);
    try {
      expect(db.query("SELECT hash, refs FROM edit_texts ORDER BY id").all()).toEqual([
        { hash: contentHash(a), refs: 1 },
        { hash: contentHash(b), refs: 1 },
      ]);
      expect(contentHash(getEdit(db, ids[0]!)!.after!)).toBe(contentHash(b));
    } finally {
      db.close();
    }
  });

  test("a revert whose earlier text the timeline cannot give back refuses, and the note stays", async () => {
    await s.call("write_note", { path: "Lost/Kept.md", content: "first text\n" });
    const e = await s.call("write_note", { path: "Lost/Kept.md", content: "second text\n", overwrite: true });
    const row = getEdit(s.vault.stateDb, e.editId)!;
    // Simulated loss (no code path deletes a named text): the revert must not take the edit for a creation.
    s.vault.stateDb.query("DELETE FROM edit_texts WHERE hash = ?").run(row.beforeHash);
    const r = await runLettuce(["revert", s.root, String(e.editId)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("no longer holds its text");
    expect(readFileSync(join(s.root, "Lost/Kept.md"), "utf8")).toBe("second text\n");
  });

  test("rows written before the texts had a table of their own are read as they are", async () => {
    const db = s.vault.stateDb;
    const before = new TextEncoder().encode("old before\n");
    const after = new TextEncoder().encode("old after\n");
    const id = Number(
      db
        .query(
          `INSERT INTO agent_edits(time, tool, action, path, before, after, before_hash, after_hash, agent, token, state)
           VALUES ('2026-01-01T00:00:00Z', 'write_note', 'write', 'Old.md', ?, ?, ?, ?, 'old', 'default', 'applied')`,
        )
        .run(before, after, contentHash(before), contentHash(after)).lastInsertRowid,
    );
    const row = getEdit(db, id)!;
    expect(new TextDecoder().decode(row.before!)).toBe("old before\n");
    expect(new TextDecoder().decode(row.after!)).toBe("old after\n");
  });

  test("a text is stored once however many edits name it; a delta chain rebuilds exactly", () => {
    const db = s.vault.stateDb;
    const enc = new TextEncoder();
    let prev = enc.encode("start " + prose(1_000, 7));
    storeText(db, prev, contentHash(prev));
    const count = () => (db.query("SELECT count(*) AS n FROM edit_texts").get() as { n: number }).n;
    const n0 = count();
    storeText(db, prev, contentHash(prev));
    expect(count()).toBe(n0);
    // Edits at the start, the middle, the end; growing and shrinking; empty.
    const edits = [(t: string) => "X" + t, (t: string) => t.slice(0, 500) + "middle" + t.slice(505), (t: string) => t + " end", (t: string) => t.slice(3), () => ""];
    for (let i = 0; i < 200; i++) {
      const next = enc.encode(edits[i % edits.length]!(new TextDecoder().decode(prev)));
      storeText(db, next, contentHash(next), { bytes: prev, hash: contentHash(prev) });
      expect(contentHash(loadText(db, contentHash(next))!)).toBe(contentHash(next));
      prev = next.length ? next : enc.encode("again " + prose(100, i));
      if (!next.length) storeText(db, prev, contentHash(prev));
    }
    expect(loadText(db, "0".repeat(64))).toBeNull();
  });

  // A big text's compressed bytes go in parts, each in a transaction of its own, before the row that keeps the
  // text (lib/write/text-parts.ts): in the row's transaction, a 30 MB note's held every other caller ~70 ms.
  test("a big text goes in parts: whole when read, gone with its row; a killed writer's parts go at the next start, a live one's stay", async () => {
    const db = s.vault.stateDbNoSync;
    const count = (table: string) => (db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    const counts = (): [number, number] => [count("edit_text_part_groups"), count("edit_text_parts")];
    const [groups0, parts0] = counts();
    // Random bytes do not compress, and are stored compressed all the same (a zstd frame a bit over 3 MiB: the
    // text's own row and three parts): an older Lettuce reading only the row's bytes fails on a cut frame,
    // where raw bytes would read as a 1 MiB text that its revert wrote back.
    const big = new Uint8Array(3 * 1024 * 1024);
    for (let at = 0; at < big.length; at += 65536) crypto.getRandomValues(big.subarray(at, at + 65536));
    const hash = contentHash(big);
    const staged: StagedTexts = new Map();
    await stageText(db, big, hash, staged);
    expect(counts()).toEqual([groups0 + 1, parts0 + 3]);
    recoverTimeline(s.root, db); // a recovery meanwhile (another vault handle in this process) leaves them
    const row = { tool: "delete_note", action: "delete" as const, path: "Big.md", trashPath: ".trash/Big.md", before: big, after: null, beforeHash: hash, afterHash: null, agent: "test", token: "t" };
    const [id] = insertPending(db, [row], null, staged);
    unstage(db, staged);
    expect(counts()).toEqual([groups0, parts0 + 3]);
    expect(contentHash(loadText(db, hash)!)).toBe(hash);
    const stored = db.query("SELECT codec, data FROM edit_texts WHERE hash = ?").get(hash) as { codec: number; data: Uint8Array };
    expect(stored.codec).toBe(1);
    expect(() => Bun.zstdDecompressSync(stored.data)).toThrow();
    dropPending(db, [id!]);
    expect(loadText(db, hash)).toBeNull();
    expect(counts()).toEqual([groups0, parts0]);

    // A process killed after writing its parts, before its row.
    const lib = (f: string) => JSON.stringify(join(REPO, "lib", f));
    const script = `
      const { openStateDbNoSync } = require(${lib("store/state-db.ts")});
      const { stageText } = require(${lib("write/edit-texts.ts")});
      const db = openStateDbNoSync(${JSON.stringify(s.root)});
      const big = new Uint8Array(3 * 1024 * 1024);
      for (let at = 0; at < big.length; at += 65536) crypto.getRandomValues(big.subarray(at, at + 65536));
      stageText(db, big, "f".repeat(64), new Map()).then(() => process.kill(process.pid, "SIGKILL"));`;
    const child = Bun.spawn([BUN, "-e", script], { stderr: "inherit" });
    expect(await child.exited).not.toBe(0);
    expect(counts()).toEqual([groups0 + 1, parts0 + 3]);
    recoverTimeline(s.root, db);
    expect(counts()).toEqual([groups0, parts0]);
    // Parts of no group and no text (an older Lettuce released their text, knowing nothing of parts) go too.
    db.query("INSERT INTO edit_text_parts(grp, seq, data) VALUES (987654, 1, x'00')").run();
    recoverTimeline(s.root, db);
    expect(counts()).toEqual([groups0, parts0]);
  });
});
