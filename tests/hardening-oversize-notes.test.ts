// A Markdown file past the size of a note (a log or data dump saved as .md)
// is listed as an attachment: never read whole into the index, and no note
// tool reads or rewrites it. Sparse files make the sizes cheap to test with;
// the real watcher moves files across the line in both directions.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MAX_NOTE_FILE_BYTES } from "../lib/vault/scan";
import { VaultContext } from "../lib/vault-context";
import { startTestServer, waitFor, type TestServer } from "./helpers/server";

setDefaultTimeout(60_000);

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ watch: true });
});
afterAll(() => s?.close());

const paths = async (tool: "list_notes" | "list_attachments") =>
  ((await s.call(tool, { limit: 1000 }, "read")).items as { path: string }[]).map((i) => i.path);
const fail = async (name: string, args: Record<string, unknown>, scope: "read" | "write" = "read") => {
  const res: any = await s.callRaw(name, args, scope);
  expect(res.isError).toBe(true);
  return res as { kind: string; content: { text: string }[] };
};

describe("Markdown files too big to be notes", () => {
  test("a dump saved while the server runs is an attachment: not searched, not read or rewritten as a note", async () => {
    const abs = join(s.root, "Dump.md");
    writeFileSync(abs, "# Dump\n\noversizedumpmarker\n");
    truncateSync(abs, MAX_NOTE_FILE_BYTES + 1);
    await waitFor(async () => (await paths("list_attachments")).includes("Dump.md"), { what: "the watcher to list the dump" });
    expect(await paths("list_notes")).not.toContain("Dump.md");
    expect((await s.call("search", { query: "oversizedumpmarker" }, "read")).total).toBe(0);
    const read = await fail("read_note", { path: "Dump.md" });
    expect(read.kind).toBe("too-large");
    expect(read.content[0]!.text).toContain(String(MAX_NOTE_FILE_BYTES));
    expect((await fail("read_attachment", { path: "Dump.md" })).kind).toBe("too-large");
    expect((await fail("read_outline", { path: "Dump.md" })).kind).toBe("too-large");
    expect((await fail("apply_edits", { path: "Dump.md", edits: [{ find: "Dump", replace: "X" }] }, "write")).kind).toBe("too-large");
    expect((await fail("write_note", { path: "Dump.md", content: "# Replaced\n" }, "write")).kind).toBe("too-large");
    expect((await fail("write_note", { path: "Dump.md", content: "# Replaced\n", overwrite: true }, "write")).kind).toBe("too-large");
    expect((await fail("write_note", { path: "Dump.md", content: "# Replaced\n", expectedHash: "0".repeat(64) }, "write")).kind).toBe("too-large");
    expect((await fail("delete_note", { path: "Dump.md" }, "write")).kind).toBe("too-large");
    // Nothing was written: the file is the person's, byte for byte at the start, and its size.
    expect(readFileSync(abs).subarray(0, 6).toString()).toBe("# Dump");
    expect(Bun.file(abs).size).toBe(MAX_NOTE_FILE_BYTES + 1);
  });

  test("a note grown past the line leaves the notes; cut back under it, it returns, searchable", async () => {
    const rel = "Inbox/Growing.md";
    const abs = join(s.root, rel);
    writeFileSync(abs, "# Growing\n\ngrowingnotemarker\n");
    await waitFor(async () => (await s.call("search", { query: "growingnotemarker" }, "read")).total === 1, { what: "the new note" });
    truncateSync(abs, MAX_NOTE_FILE_BYTES + 10);
    await waitFor(async () => (await paths("list_attachments")).includes(rel), { what: "the grown note to become a file" });
    expect(await paths("list_notes")).not.toContain(rel);
    expect((await s.call("search", { query: "growingnotemarker" }, "read")).total).toBe(0);
    truncateSync(abs, 30);
    await waitFor(async () => (await paths("list_notes")).includes(rel), { what: "the note to come back" });
    expect(await paths("list_attachments")).not.toContain(rel);
    expect((await s.call("search", { query: "growingnotemarker" }, "read")).total).toBe(1);
    expect((await s.call("read_note", { path: rel }, "read")).title).toBe("Growing");
  });

  test("a cold index of the same folder sorts every file the same way the watcher did", async () => {
    await s.vault.settle();
    const watched = {
      notes: (s.vault.indexDb.query("SELECT path FROM notes ORDER BY path").all() as { path: string }[]).map((r) => r.path),
      files: (s.vault.indexDb.query("SELECT path FROM files ORDER BY path").all() as { path: string }[]).map((r) => r.path),
    };
    const change = await s.vault.indexer.fullScan();
    expect(change).toEqual({ changed: [], deleted: [], attachments: [] });
    const again = VaultContext.open(s.root);
    try {
      expect((again.indexDb.query("SELECT path FROM files ORDER BY path").all() as { path: string }[]).map((r) => r.path)).toEqual(watched.files);
      expect(watched.files).toContain("Dump.md");
      expect(watched.notes).not.toContain("Dump.md");
    } finally {
      again.close();
    }
  });
});
