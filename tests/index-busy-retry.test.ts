// An index pass whose transaction read fts.db, then found it written by another connection when it came to
// write there, gets SQLITE_BUSY at once: SQLite does not wait where waiting cannot help (its snapshot is
// stale). The pass is started again a moment later. Seen right after a bulk cold scan (foundation-bulk-index:
// "database is locked" for 50-500 ms, on the update after it, about one run in ten).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { searchNotes } from "../lib/retrieval/search";
import { ftsPath } from "../lib/store/fts-db";
import { VaultContext } from "../lib/vault-context";
import { copyVault } from "./helpers/server";

describe("an index pass that meets SQLITE_BUSY at once", () => {
  let root = "";
  let v: VaultContext;
  beforeAll(async () => {
    root = copyVault();
    v = VaultContext.open(root);
    await v.indexer.fullScan();
  });
  afterAll(() => {
    v?.close();
    rmSync(root, { recursive: true, force: true });
  });

  /** The pass's next note write first reads fts.db, then another connection commits there: a stale snapshot. */
  function staleSnapshotOnce(): () => number {
    const rows = (v.indexer as unknown as { rows: { write: (...a: unknown[]) => unknown } }).rows;
    const write = rows.write;
    let times = 0;
    rows.write = function (this: unknown, ...a: unknown[]) {
      if (times++ === 0) {
        v.indexDb.query("SELECT count(*) FROM ftsdb.fts_data").get();
        const other = new Database(ftsPath(root));
        other.exec("PRAGMA busy_timeout = 5000");
        other.exec("CREATE TABLE IF NOT EXISTS t_other (x); INSERT INTO t_other VALUES (1)");
        other.close();
      }
      return write.apply(this, a);
    };
    return () => times;
  }

  test("the update is made again and lands", async () => {
    const calls = staleSnapshotOnce();
    writeFileSync(join(root, "Busy note.md"), "# Busy\n\nzanzibarquill\n");
    const change = await v.indexer.update(["Busy note.md"]);
    expect(change.changed).toEqual(["Busy note.md"]);
    expect(calls()).toBeGreaterThan(1); // the first pass failed where it wrote; a second one wrote
    expect(searchNotes(v.indexDb, "zanzibarquill", 5).items.map((i) => i.path)).toEqual(["Busy note.md"]);
  });

  test("a caller that asked not to wait gets the error", async () => {
    staleSnapshotOnce();
    writeFileSync(join(root, "Busy note 2.md"), "# Busy 2\n\nzanzibarquoll\n");
    await expect(v.indexer.update(["Busy note 2.md"], { noWait: true })).rejects.toThrow(/locked|busy/i);
    // Nothing half-written: the next update indexes it.
    expect((await v.indexer.update(["Busy note 2.md"])).changed).toEqual(["Busy note 2.md"]);
  });
});
