// Notes between the write limit (2 MiB) and the size of a note (64 MiB): a write call on one read, hashed and
// decoded it whole, and transformed it, only to refuse the result as too-large, holding every other caller of
// the server 150-850 ms on a 30 MB note; replacing one compressed its old text for the timeline on the
// server's one thread (~300 ms for 30 MB of prose). Calls that cannot bring such a note under the limit are
// refused before it is read; what a replacement must still do is done off the event loop.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VaultContext } from "../lib/vault-context";
import { loadText } from "../lib/write/edit-texts";
import { getEdit } from "../lib/write/edits";
import { deleteNoteOp } from "../lib/write/ops-move";
import { writeNoteOp } from "../lib/write/ops";
import { writeService } from "../lib/write/service";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";
import { longestStall } from "./helpers/event-loop";

const MB = 1024 * 1024;
const sha = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");

/** `mb` megabytes of text that compresses as prose does (not a line said over and over). */
function prose(mb: number): string {
  const words = Array.from({ length: 4000 }, (_, i) => Math.random().toString(36).slice(2, 4 + (i % 8)));
  const out: string[] = [];
  let n = 0;
  for (let i = 0; n < mb * MB; i++) {
    const w = words[(Math.random() * words.length) | 0]! + (i % 12 === 11 ? ".\n" : " ");
    out.push(w);
    n += w.length;
  }
  return out.join("");
}

describe("a note over the write limit, through the server", () => {
  let s: TestServer;
  const line = "An ordinary line of a person's long note, with a [[index]] link and more words.\n";
  beforeAll(async () => {
    s = await startTestServer();
    writeFileSync(join(s.root, "Big.md"), "# Big\n\n> [!ai] summarise this\n\n## Sec\n\n" + line.repeat(Math.ceil((40 * MB) / line.length)));
    await s.vault.indexer.update(["Big.md"]);
    await s.call("read_note", { path: "index.md" }); // the client is connected before timing
  });
  afterAll(() => s.close());

  test("edits that cannot bring it under the limit are too-large at once, the note untouched, no caller held", async () => {
    const before = statSync(join(s.root, "Big.md"));
    const calls: [string, Record<string, unknown>][] = [
      ["apply_edits", { path: "Big.md", edits: [{ find: "zzzz-no-such-text", replace: "x" }] }],
      ["apply_edits", { path: "Big.md", edits: [{ find: "# Big", replace: "# Bigger" }] }],
      ["patch_section", { path: "Big.md", heading: "Sec", mode: "append", content: "x" }],
      ["patch_section", { path: "Big.md", heading: "Sec", mode: "replace", content: "x" }],
      ["complete_directive", { path: "Big.md", line: 3, answer: "done" }],
    ];
    for (const [tool, args] of calls) {
      const { result, stall } = await longestStall(() => s.callRaw(tool, args));
      const r = result as any;
      // Was 200-300 ms (apply_edits) and 600-900 ms (patch_section) on this 40 MB note.
      expect(stall, `${tool} held the event loop`).toBeLessThan(100);
      expect(r.isError, tool).toBe(true);
      expect(r.content[0].text, tool).toContain("too-large");
      expect(r.content[0].text).toContain("cannot bring it under");
    }
    const after = statSync(join(s.root, "Big.md"));
    expect([after.size, after.mtimeMs, after.ino]).toEqual([before.size, before.mtimeMs, before.ino]);
  });

  test("a note over the limit is still shrunk by edits that take out enough, and only by those", async () => {
    const prev = process.env.LETTUCE_MAX_NOTE_BYTES;
    process.env.LETTUCE_MAX_NOTE_BYTES = "2000";
    try {
      const cut = "x".repeat(1500);
      const text = `# Over\n\n## Sec\n\nkeep\n\n${cut}\n\n${"y".repeat(1000)}\n`;
      writeFileSync(join(s.root, "Over.md"), text);
      await s.vault.indexer.update(["Over.md"]);
      const grow: any = await s.callRaw("patch_section", { path: "Over.md", heading: "Sec", mode: "append", content: "more" });
      expect(grow.content[0].text).toContain("too-large");
      const small: any = await s.callRaw("apply_edits", { path: "Over.md", edits: [{ find: "keep", replace: "" }] });
      expect(small.content[0].text).toContain("too-large");
      expect(readFileSync(join(s.root, "Over.md"), "utf8")).toBe(text);
      await s.call("apply_edits", { path: "Over.md", edits: [{ find: `${cut}\n\n`, replace: "" }] });
      expect(readFileSync(join(s.root, "Over.md"), "utf8")).toBe(`# Over\n\n## Sec\n\nkeep\n\n${"y".repeat(1000)}\n`);
    } finally {
      if (prev === undefined) delete process.env.LETTUCE_MAX_NOTE_BYTES;
      else process.env.LETTUCE_MAX_NOTE_BYTES = prev;
    }
  });
});

// The write service as the CLI runs it (no re-indexing: re-indexing a replaced 30 MB note is the index's own
// cost, whoever replaced it). Storing the old text in state.db still costs what SQLite takes to write it.
describe("replacing or deleting a big note", () => {
  let root: string;
  let vault: VaultContext;
  let service: ReturnType<typeof writeService>;
  beforeAll(() => {
    root = tempDir();
    writeFileSync(join(root, "Big.md"), "# Big\n\n" + prose(30));
    writeFileSync(join(root, "Old.md"), "# Old\r\n\r\n" + prose(40).replace(/\n/g, "\r\n"));
    vault = VaultContext.open(root);
    service = writeService(vault, { reindex: false });
  });
  afterAll(() => {
    vault.close();
    rmSync(root, { recursive: true, force: true });
  });
  const meta = { tool: "write_note", agent: "test", token: "t" };

  test("planning write_note over it holds no other caller: read and hashed in turns, its style found on the bytes", async () => {
    const args = { path: "Old.md", content: "new\nshort\n", overwrite: true };
    Bun.gc(true); // the 70 MB of text made above is not collected while the loop is timed
    const { result: plan, stall } = await longestStall(async () => writeNoteOp.plan(vault, args));
    // Was ~250 ms on this 40 MB note: read and hashed at once, and decoded whole to learn its line endings.
    expect(stall).toBeLessThan(120);
    expect(Buffer.from(plan.changes[0]!.after!).toString()).toBe("new\r\nshort\r\n");
  });

  test("the texts it replaced or deleted come back whole from the timeline", async () => {
    const old = readFileSync(join(root, "Old.md"));
    const replaced = await service.execute(writeNoteOp, { path: "Old.md", content: "new\nshort\n", overwrite: true }, meta);
    expect(readFileSync(join(root, "Old.md"), "utf8")).toBe("new\r\nshort\r\n");
    const big = readFileSync(join(root, "Big.md"));
    const deleted = await service.execute(deleteNoteOp, { path: "Big.md" }, { ...meta, tool: "delete_note" });
    for (const [res, bytes] of [[replaced, old], [deleted, big]] as const) {
      const row = getEdit(vault.stateDb, res.editId!)!;
      expect(row.beforeHash).toBe(sha(bytes));
      expect(sha(loadText(vault.stateDb, row.beforeHash!)!)).toBe(sha(bytes));
    }
  });
});
