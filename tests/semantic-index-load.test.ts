// The in-memory vector index is loaded from index.db on the first query that needs it (after start-up, or
// after another process changed the vectors). Read whole on the event loop, 30,000 passages held every other
// caller ~0.5 s, growing with the vault; it is read in slices with turns between them. These tests fill a
// real index.db with random 512-d vectors (what the built-in model stores) rather than embedding a vault.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { openIndexDb, setMeta } from "../lib/store/index-db";
import { LoadedIndexes } from "../lib/semantic/loaded-indexes";
import { ensureVecTables, writeNotes } from "../lib/semantic/store";
import { longestBusy } from "./helpers/event-loop";
import { tempDir } from "./helpers/server";

const DIM = 512;
const NOTES = 10_000;
let seed = 7;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) - 0.5;
const vector = () => Float32Array.from({ length: DIM }, random);
const note = (id: number, passages: number) => ({
  noteId: id,
  hash: `h${id}-${passages}`,
  passages: Array.from({ length: passages }, (_, k) => ({ ord: k, heading: "", text: `note ${id} passage ${k}`, input: `note ${id} passage ${k}`, hash: `p${id}-${k}-${passages}` })),
  vectors: Array.from({ length: passages }, vector),
  noteVector: passages ? vector() : null,
});

describe("loading the in-memory vector index", () => {
  let root = "";
  let db: Database;
  beforeAll(() => {
    root = tempDir();
    db = openIndexDb(root);
    setMeta(db, "embed_model", "test-512");
    ensureVecTables(db, DIM);
    for (let b = 1; b <= NOTES; b += 1000) writeNotes(db, Array.from({ length: 1000 }, (_, i) => note(b + i, 3)), []);
  }, 120_000);
  afterAll(() => {
    db?.close();
    rmSync(root, { recursive: true, force: true });
  });

  test("30,000 passages load without holding the event loop; every passage and note vector is there", async () => {
    const busy: number[] = [];
    let loaded: LoadedIndexes;
    let result: Awaited<ReturnType<LoadedIndexes["get"]>> = null;
    for (let round = 0; round < 2; round++) {
      loaded = new LoadedIndexes(() => db);
      Bun.gc(true); // what filling the tables (or the last round) left is not collected while the loop is timed
      const timed = await longestBusy(() => loaded.get());
      busy.push(timed.busy);
      result = timed.result;
      expect(result!.passages.size).toBe(3 * NOTES);
      expect(result!.notes.size).toBe(NOTES);
    }
    // Read whole, this held the loop ~530 ms here, and adding its first 4,096 vectors at once 55-100 ms; now
    // ~20 ms. Bounded in CPU time between two turns of the loop, which a loaded machine does not lengthen
    // (the wall-clock stall went from 20 to 90-170 ms with two busy loops beside the test); the smaller of two.
    expect(Math.min(...busy), `most CPU between two turns ${busy.map(Math.round).join(", ")} ms`).toBeLessThan(40);
    // Loaded once: the next caller gets the same indexes at once.
    expect((await loaded!.get())!.passages).toBe(result!.passages);
  }, 60_000);

  test("callers during a load share it, and what a reconcile writes meanwhile is in the result", async () => {
    const loaded = new LoadedIndexes(() => db);
    const first = loaded.get();
    const second = loaded.get();
    // A reconcile step while the slices are read: one note re-split into 5 passages, one emptied, one new.
    await new Promise((r) => setTimeout(r, 0));
    const changed = [note(17, 5), note(9_000, 0), note(NOTES + 1, 2)];
    const { added, removedPassages } = writeNotes(db, changed, [42]);
    loaded.apply(
      added,
      removedPassages,
      changed.map((n) => ({ noteId: n.noteId, vector: n.noteVector })),
      [42],
    );
    const [a, b] = await Promise.all([first, second]);
    expect(a).toBe(b!);
    // Loaded afresh from the tables now, for comparison.
    const fresh = (await new LoadedIndexes(() => db).get())!;
    expect(a!.passages.size).toBe(fresh.passages.size);
    expect(a!.notes.size).toBe(fresh.notes.size);
    expect(a!.passages.size).toBe(3 * NOTES + 5 - 3 - 3 - 3 + 2);
    for (const id of [17, 9_000, NOTES + 1, 42, 43]) expect(a!.notes.has(id)).toBe(fresh.notes.has(id));
    // The same passages, each with its own vector: cosine to a query, id by id (the first rows' mean, which
    // the codes are taken around, differs slightly between the two loads: scores agree to a few in 10^3).
    const q = vector();
    const ids = Array.from({ length: 3 * NOTES + 20 }, (_, i) => i + 1);
    const [got, want] = [a!.passages.scoreIds(ids, q), fresh.passages.scoreIds(ids, q)];
    expect([...got.keys()].sort((x, y) => x - y)).toEqual([...want.keys()].sort((x, y) => x - y));
    for (const [id, score] of want) expect(Math.abs(got.get(id)! - score)).toBeLessThan(0.01);
    // The load took the reconcile's generation: the next call does not load again.
    expect((await loaded.get())!.passages).toBe(a!.passages);
  }, 60_000);

  test("a reset during a load (another model) starts it again from the new tables", async () => {
    const loaded = new LoadedIndexes(() => db);
    const pending = loaded.get();
    await new Promise((r) => setTimeout(r, 0));
    loaded.drop();
    const got = (await pending)!;
    const fresh = (await new LoadedIndexes(() => db).get())!;
    expect(got.passages.size).toBe(fresh.passages.size);
    expect(got.notes.size).toBe(fresh.notes.size);
  }, 60_000);
});
