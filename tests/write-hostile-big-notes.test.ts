// Notes between the write limit (2 MiB) and the size of a note (64 MiB): a write call on one read, hashed and
// decoded it whole, and transformed it, only to refuse the result as too-large, holding every other caller of
// the server 150-850 ms on a 30 MB note; replacing one compressed its old text for the timeline on the
// server's one thread (~300 ms for 30 MB of prose). Calls that cannot bring such a note under the limit are
// refused before it is read; what a replacement must still do is done off the event loop.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VaultContext } from "../lib/vault-context";
import { loadText } from "../lib/write/edit-texts";
import { getEdit } from "../lib/write/edits";
import { ChangedLines, noteLinkLines, spliceNoteLines } from "../lib/write/big-note-links";
import { revertEdit } from "../lib/write/revert";
import { deleteNoteOp, moveNoteOp } from "../lib/write/ops-move";
import { writeNoteOp } from "../lib/write/ops";
import { writeService } from "../lib/write/service";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";
import { longestBusy, longestStall } from "./helpers/event-loop";

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

// A person's 30 MB note, indexed as the server indexes every note, replaced by write_note with a line. The
// commit hashed it, inserted its 19 MB of compressed old text into state.db in one transaction and read and
// hashed it once more for the check against a person's save (~110 ms in one stretch), and the re-index
// tokenised its old text to delete its full-text row (0.2-0.45 s), on the server's one thread.
describe("write_note over a person's 30 MB note, through the server", () => {
  let s: TestServer;
  const notes = ["Huge one.md", "Huge two.md"];
  beforeAll(async () => {
    // Watching, as `serve` does: SQLite's checkpoints (and their fsyncs) then run on a thread of their own.
    s = await startTestServer({ watch: true });
    const text = prose(30);
    // Two notes, two texts: the timeline keeps each text once, and the second must be stored as the first was.
    for (const [i, name] of notes.entries()) writeFileSync(join(s.root, name), `# Huge ${i}\n\n${text}`);
    await s.vault.indexer.update(notes);
    await s.vault.settle();
    await s.call("read_note", { path: "index.md" }); // the client is connected before timing
  }, 60_000);
  afterAll(() => s.close());

  test("holds no other caller, and the replaced text comes back whole from the timeline", async () => {
    const stalls: number[] = [];
    const replaced: { hash: string; editId: number }[] = [];
    for (const name of notes) {
      const hash = sha(readFileSync(join(s.root, name)));
      Bun.gc(true); // the text made above is not collected while the loop is timed
      const { result, stall } = await longestStall(() => s.call("write_note", { path: name, content: "short\n", overwrite: true }));
      stalls.push(stall);
      replaced.push({ hash, editId: result.editId });
      expect(readFileSync(join(s.root, name), "utf8")).toBe("short\n");
    }
    // Was 200-220 ms here (the commit alone ~110 ms), now ~15-50 ms on a machine busy with three other test
    // runs. The smaller of two: a stall of the code is in both, a moment the machine gave the process no core
    // is not.
    expect(Math.min(...stalls), `longest stalls ${stalls.map(Math.round).join(", ")} ms`).toBeLessThan(100);
    for (const { hash, editId } of replaced) {
      const row = getEdit(s.vault.stateDb, editId)!;
      expect(row.beforeHash).toBe(hash);
      expect(sha(row.before!)).toBe(hash);
      // Its 19 MB of zstd went into state.db a part at a time, each part in a transaction of its own.
      const parts = s.vault.stateDb.query("SELECT count(*) AS n FROM edit_text_parts p JOIN edit_texts t ON p.grp = t.parts WHERE t.hash = ?").get(hash) as { n: number };
      expect(parts.n).toBeGreaterThan(10);
    }
  }, 60_000);

  // A person's revert (the web UI's button, `lettuce revert`) of those writes: the 30 MB texts come back from
  // the timeline. Loaded, joined and decompressed at once, each held every other caller 150-420 ms.
  test("reverting the replacement holds no other caller, and the note comes back whole", async () => {
    const stalls: number[] = [];
    for (const name of notes) {
      const edit = s.vault.stateDb.query("SELECT id, before_hash AS h FROM agent_edits WHERE path = ? AND tool = 'write_note' ORDER BY id DESC LIMIT 1").get(name) as { id: number; h: string };
      Bun.gc(true);
      const { stall } = await longestStall(() => revertEdit(s.vault, edit.id));
      stalls.push(stall);
      expect(sha(readFileSync(join(s.root, name)))).toBe(edit.h);
    }
    expect(Math.min(...stalls), `longest stalls ${stalls.map(Math.round).join(", ")} ms`).toBeLessThan(100);
  }, 60_000);
});

// move_note of a person's big note, and of the note a big note links to by path. The plan decoded each 30 MB
// note, split it into lines, rewrote and encoded it on the event loop (~0.4 s), and the commit compressed the
// moved note's new text in the timeline row's transaction (~0.3 s).
describe("move_note of big notes, through the server", () => {
  let s: TestServer;
  const mb = 20;
  /**
   * Prose with a relative Markdown link and a path wikilink to the big note every few thousand words, a few
   * thousand links in all: re-indexing a note at the index's cap of 20,000 link rows holds other callers
   * 50-80 ms of its own (docs/security.md), which is not what is measured here.
   */
  const linked = (link: string) => prose(mb).replace(/([a-z0-9]+)\.\n/g, (m, w: string, at: number) => (at % 997 === 0 ? `${w} see [near](Near.md) and [[${link}]].\n` : m));
  beforeAll(async () => {
    s = await startTestServer({ watch: true });
    mkdirSync(join(s.root, "a"), { recursive: true });
    writeFileSync(join(s.root, "a/Big.md"), "# Big\n\nsee [near](Near.md)\n" + linked("a/Big"));
    writeFileSync(join(s.root, "a/Near.md"), "# Near\n");
    writeFileSync(join(s.root, "Linker.md"), "# Linker\n\n" + linked("a/Big") + "\n[[a/Big]] at the end\n");
    await s.vault.indexer.update(["a/Big.md", "a/Near.md", "Linker.md"]);
    await s.vault.settle();
    await s.call("read_note", { path: "index.md" }); // the client is connected before timing
  }, 120_000);
  afterAll(() => s.close());

  test("holds no other caller, rewrites every link, and the timeline keeps each new text whole", async () => {
    const stalls: number[] = [];
    const busies: number[] = [];
    for (const [from, to] of [["a/Big.md", "b/Big.md"], ["b/Big.md", "c/Big.md"]] as const) {
      const linksBefore = (readFileSync(join(s.root, from), "utf8").match(/\[near\]/g) ?? []).length;
      Bun.gc(true);
      const { result, stall, busy } = await longestBusy(() => s.call("move_note", { from, to }), { loopThread: true });
      stalls.push(stall);
      busies.push(busy);
      const moved = readFileSync(join(s.root, to), "utf8");
      const linker = readFileSync(join(s.root, "Linker.md"), "utf8");
      const dir = to.slice(0, 1);
      // Its own relative links follow it, and every path link to it, in it and in Linker.md, names its new place.
      expect(moved.match(/\[near\]\(\.\.\/a\/Near\.md\)/g)?.length).toBe(linksBefore);
      expect(moved).not.toContain(`[[${from.slice(0, -3)}]]`);
      expect(linker).not.toContain(`[[${from.slice(0, -3)}]]`);
      expect(linker).toContain(`[[${dir}/Big]] at the end`);
      expect(result.notesUpdated).toEqual(["Linker.md"]);
      // The new texts are on the timeline, whole, the moved note's written to state.db a part at a time.
      const rows = s.vault.stateDb.query("SELECT path, after_hash AS h FROM agent_edits WHERE id >= ? AND action = 'write'").all(result.editId) as { path: string; h: string }[];
      expect(rows.map((r) => r.path).sort()).toEqual(["Linker.md", to]);
      for (const r of rows) expect(sha(loadText(s.vault.stateDb, r.h)!)).toBe(sha(readFileSync(join(s.root, r.path))));
      const parts = s.vault.stateDb.query("SELECT count(*) AS n FROM edit_text_parts p JOIN edit_texts t ON p.grp = t.parts WHERE t.hash = ?").get(rows.find((r) => r.path === to)!.h) as { n: number };
      expect(parts.n).toBeGreaterThan(3);
    }
    // Was 300-400 ms (plan) and ~300 ms (commit) on 30 MB notes; now 20-50 ms of wall clock, 12-20 ms of the loop
    // thread's CPU. Bounded in that CPU, which a loaded machine does not lengthen (the wall clock reached 100-600 ms
    // beside CI's other tests); the smaller of two.
    expect(Math.min(...busies), `most CPU between two turns ${busies.map(Math.round).join(", ")} ms; stalls ${stalls.map(Math.round).join(", ")} ms`).toBeLessThan(60);
  }, 120_000);

  test("a big note's rewrite reads the note the plan read, or is given its bytes", () => {
    const path = "Linker.md";
    const bytes = readFileSync(join(s.root, path));
    const onDisk = noteLinkLines(path, { root: s.root, path, hash: sha(bytes) });
    expect(typeof onDisk === "object" && onDisk.line.length).toBeGreaterThan(100);
    // Saved since the plan read it: the worker does not rewrite the newer text as if it were the older.
    expect(noteLinkLines(path, { root: s.root, path, hash: sha(Buffer.from("an older text")) })).toBe("changed");
    expect(spliceNoteLines(path, { root: s.root, path, hash: "0" }, new ChangedLines().packed())).toBe("changed");
    expect(noteLinkLines(path, bytes)).toEqual(onDisk);
    expect(noteLinkLines(path, new Uint8Array([0xff, 0xfe, 0x5b, 0x5b]))).toBe("unsupported");
  });

  test("a rewritten line that starts with U+FEFF keeps it", () => {
    const bytes = Buffer.from("# Note\n\uFEFF[[a/Big]] joined from a file that had a byte-order mark\n");
    const changed = new ChangedLines();
    changed.add(1, "\uFEFF[[c/Big]] joined from a file that had a byte-order mark\n");
    const out = spliceNoteLines("Joined.md", bytes, changed.packed());
    expect(Buffer.from(out as Uint8Array).toString()).toBe("# Note\n\uFEFF[[c/Big]] joined from a file that had a byte-order mark\n");
  });
});

// A big note with a link to the moved note on every line: 270,000 lines to rewrite, which crossed between the
// event loop and the worker as objects and strings (~90 ms to receive, ~200 ms to send back). Through the
// write service as the CLI runs it: re-indexing that note (its 20,000 link rows, the index's cap) holds other
// callers 50-80 ms of its own (docs/security.md), whoever changed it.
describe("move_note of a note that a big note links to on every line", () => {
  let root: string;
  let vault: VaultContext;
  const line = "a line that links to [[t/Target]] and has a few more words in it\n";
  const lines = Math.ceil((18 * MB) / line.length);
  beforeAll(async () => {
    root = tempDir();
    mkdirSync(join(root, "t"), { recursive: true });
    writeFileSync(join(root, "t/Target.md"), "# Target\n");
    writeFileSync(join(root, "Every.md"), line.repeat(lines));
    vault = VaultContext.open(root);
    await vault.indexer.fullScan();
  }, 120_000);
  afterAll(() => {
    vault.close();
    rmSync(root, { recursive: true, force: true });
  });

  test("holds no other caller, and every line is rewritten", async () => {
    const service = writeService(vault, { reindex: false });
    const stalls: number[] = [];
    const busies: number[] = [];
    for (const [from, to] of [["t/Target.md", "u/Target.md"], ["u/Target.md", "v/Target.md"]] as const) {
      Bun.gc(true);
      const { result, stall, busy } = await longestBusy(() => service.execute(moveNoteOp, { from, to }, { tool: "move_note", agent: "test", token: "t" }), { loopThread: true });
      stalls.push(stall);
      busies.push(busy);
      expect(result.linksUpdated).toBe(lines);
      expect(readFileSync(join(root, "Every.md"), "utf8")).toBe(line.replace("t/", `${to[0]}/`).repeat(lines));
      await vault.indexer.update(["Every.md", from, to]);
    }
    // Was 320 ms; now 25-40 ms of wall clock, 15-20 ms of the loop thread's CPU (the bound, as above).
    expect(Math.min(...busies), `most CPU between two turns ${busies.map(Math.round).join(", ")} ms; stalls ${stalls.map(Math.round).join(", ")} ms`).toBeLessThan(60);
  }, 120_000);
});

// A big note whose move changes one line: its new text goes on the timeline as the bytes it changes in the
// old one (a delta), decided before the rows' transaction; its CRLF line ends kept by the worker's splice.
describe("move_note of a big note that changes one line of it", () => {
  let root: string;
  let vault: VaultContext;
  beforeAll(async () => {
    root = tempDir();
    mkdirSync(join(root, "Deep"), { recursive: true });
    writeFileSync(join(root, "Deep/Near.md"), "# Near\n");
    writeFileSync(join(root, "Deep/Big.md"), ("# Big\n\nsee [near](Near.md)\n\n" + prose(3)).replace(/\n/g, "\r\n"));
    vault = VaultContext.open(root);
    await vault.indexer.fullScan();
  });
  afterAll(() => {
    vault.close();
    rmSync(root, { recursive: true, force: true });
  });

  test("its new text is stored as a delta of the old, and comes back whole", async () => {
    const before = readFileSync(join(root, "Deep/Big.md"));
    const res = await writeService(vault, { reindex: false }).execute(moveNoteOp, { from: "Deep/Big.md", to: "Big.md" }, { tool: "move_note", agent: "test", token: "t" });
    const after = readFileSync(join(root, "Big.md"));
    expect(after.toString()).toBe(before.toString().replace("[near](Near.md)", "[near](Deep/Near.md)"));
    const row = vault.stateDb.query("SELECT after_hash AS h FROM agent_edits WHERE (id = ? OR group_id = ?) AND action = 'write'").get(res.editId, res.editId) as { h: string };
    expect(row.h).toBe(sha(after));
    const text = vault.stateDb.query("SELECT base, size, length(data) AS n FROM edit_texts WHERE hash = ?").get(row.h) as { base: number | null; size: number; n: number };
    expect(text.base).not.toBeNull();
    expect(text.n).toBeLessThan(1000);
    expect(sha(loadText(vault.stateDb, row.h)!)).toBe(sha(after));
  });
});

// The write service as the CLI runs it (no re-indexing: re-indexing a replaced 30 MB note is the index's own
// cost, whoever replaced it).
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
