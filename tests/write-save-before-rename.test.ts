// A person's save that lands after the commit checked a note's bytes and before the note is renamed away
// (delete_note into .trash, move_note to its new name). Other callers get turns between the two (a big
// note's hashing alone takes tens of ms), so such a save can land there: it was carried along while the
// timeline recorded the earlier text, and a revert put that earlier text back. The save is played here by
// writing the note right after the check's read of it (the one place VaultDir.read is called).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { getEdit } from "../lib/write/edits";
import { revertEdit } from "../lib/write/revert";
import { VaultDir } from "../lib/write/vault-dir";
import { startTestServer, type TestServer } from "./helpers/server";

const sha = (b: string | Buffer) => createHash("sha256").update(b).digest("hex");

describe("a person's save between the check and the rename", () => {
  let s: TestServer;
  const realRead = VaultDir.prototype.read;
  /** The name whose next check is followed at once by a person's save of `text`. */
  let armed: { name: string; abs: string; text: string } | null = null;
  beforeAll(async () => {
    s = await startTestServer();
    VaultDir.prototype.read = function (this: VaultDir, name: string) {
      const out = realRead.call(this, name);
      if (armed && name === armed.name) {
        writeFileSync(armed.abs, armed.text);
        armed = null;
      }
      return out;
    };
  });
  afterAll(async () => {
    VaultDir.prototype.read = realRead;
    await s?.close();
  });

  for (const tool of ["delete_note", "move_note"] as const) {
    test(`${tool}: the timeline records the text that left, and a revert brings back the person's save`, async () => {
      const name = `${tool} note.md`;
      const abs = join(s.root, name);
      writeFileSync(abs, "# Note\n\nthe agent saw this\n");
      await s.vault.indexer.update([name]);
      const saved = "# Note\n\nthe person saved this a moment later, longer than before\n";
      armed = { name, abs, text: saved };
      const args = tool === "delete_note" ? { path: name } : { from: name, to: `Moved/${name}` };
      const out = await s.call(tool, args, "write");
      expect(armed).toBeNull(); // the save was made
      const row = getEdit(s.vault.stateDb, out.editId)!;
      // What the timeline says left the old path is what did: the person's save, found on a second plan.
      expect(row.beforeHash).toBe(sha(saved));
      const landed = tool === "delete_note" ? join(s.root, row.trashPath!) : join(s.root, `Moved/${name}`);
      expect(readFileSync(landed, "utf8")).toBe(saved);
      await revertEdit(s.vault, out.editId);
      expect(readFileSync(abs, "utf8")).toBe(saved);
      rmSync(abs);
      await s.vault.indexer.update([name]);
    });
  }
});
