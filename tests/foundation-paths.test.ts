// Path safety: every tool that takes a path refuses anything that could leave
// the vault or reach the server's own databases, with kind "path-invalid".
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runLettuce } from "./helpers/cli";
import { copyVault, startTestServer, tempDir, waitFor, type TestServer } from "./helpers/server";

let s: TestServer;
let outside: string;
beforeAll(async () => {
  // A directory outside the vault with a note and an image in it, reachable only through symlinks.
  outside = tempDir("lettuce-outside-");
  writeFileSync(join(outside, "secret.md"), "# Secret\n\nxylophonequartz\n");
  writeFileSync(join(outside, "secret.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  s = await startTestServer();
  symlinkSync(outside, join(s.root, "escape"));
  symlinkSync(join(outside, "secret.md"), join(s.root, "Inbox/linked-secret.md"));
  symlinkSync(join(outside, "secret.png"), join(s.root, "assets/linked.png"));
  // Rescan with the symlinks in place, as on a server started on a vault set up that way.
  await s.vault.indexer.fullScan();
});
afterAll(async () => {
  await s?.close();
  rmSync(outside, { recursive: true, force: true });
});

// Every form of "not a plain vault-relative path" we know of.
const BAD_NOTE_PATHS: Record<string, string> = {
  empty: "",
  "only a dot": ".",
  absolute: "/etc/passwd",
  "absolute into vault": "/Projects/Lettuce.md",
  "windows drive": "C:/Windows/win.ini",
  "home": "~/notes.md",
  "dot-dot": "../outside.md",
  "dot-dot in the middle": "Projects/../../outside.md",
  "dot-dot that stays inside": "Projects/../index.md",
  "percent-encoded dot-dot": "%2e%2e/outside.md",
  "percent-encoded slash": "..%2foutside.md",
  "double-encoded dot-dot": "%252e%252e/outside.md",
  "encoded dot-dot in the middle": "Projects/%2E%2E/%2e%2e/etc/passwd",
  "NUL byte": "index.md\u0000.png",
  "encoded NUL": "index.md%00",
  backslash: "Projects\\Lettuce.md",
  "backslash traversal": "..\\..\\etc\\passwd",
  "control character": "Projects/Lett\u0001uce.md",
  "symlinked folder leaving the vault": "escape/secret.md",
  "symlinked note leaving the vault": "Inbox/linked-secret.md",
  ".lettuce index": ".lettuce/index.db",
  ".lettuce state": ".lettuce/state.db",
  ".lettuce via ./": "./.lettuce/index.db",
  ".lettuce via encoding": "%2elettuce/index.db",
};

const NOTE_TOOLS = ["read_note", "read_outline", "list_outgoing_links", "list_backlinks", "link_graph"];

describe("note tools refuse bad paths", () => {
  for (const tool of NOTE_TOOLS) {
    test(tool, async () => {
      for (const [what, path] of Object.entries(BAD_NOTE_PATHS)) {
        const res: any = await s.callRaw(tool, { path }, "read");
        expect(res.isError, `${tool} ${what}`).toBe(true);
        expect(res.kind, `${tool} ${what}: ${res.content?.[0]?.text}`).toBe("path-invalid");
        expect(res.content[0].text).not.toMatch(/\n\s+at /); // no stack trace
      }
    });
  }
});

describe("read_attachment refuses bad paths", () => {
  test("every bad form, plus a symlinked file and the databases", async () => {
    const cases = { ...BAD_NOTE_PATHS, "symlinked image": "assets/linked.png", "symlinked folder image": "escape/secret.png", ".lettuce WAL": ".lettuce/index.db-wal" };
    for (const [what, path] of Object.entries(cases)) {
      const res: any = await s.callRaw("read_attachment", { path }, "read");
      expect(res.isError, what).toBe(true);
      expect(res.kind, `${what}: ${res.content?.[0]?.text}`).toBe("path-invalid");
    }
  });
});

describe("folder arguments refuse bad paths", () => {
  const BAD_FOLDERS: Record<string, string> = {
    absolute: "/etc",
    "dot-dot": "..",
    "dot-dot below": "Projects/../..",
    "percent-encoded": "%2e%2e",
    "double-encoded": "%252e%252e",
    NUL: "Projects\u0000",
    backslash: "Projects\\2026",
    "symlinked folder": "escape",
    ".lettuce": ".lettuce",
  };
  for (const tool of ["list_notes", "list_attachments"]) {
    test(tool, async () => {
      for (const [what, path] of Object.entries(BAD_FOLDERS)) {
        const res: any = await s.callRaw(tool, { path }, "read");
        expect(res.isError, `${tool} ${what}`).toBe(true);
        expect(res.kind, `${tool} ${what}`).toBe("path-invalid");
      }
    });
  }
});

describe("what lies behind a symlink is never indexed", () => {
  test("not listed, not searchable, not an attachment", async () => {
    const notes = await s.call("list_notes", { limit: 1000 });
    expect(notes.items.some((n: any) => n.path.includes("secret"))).toBe(false);
    expect((await s.call("search", { query: "xylophonequartz" })).total).toBe(0);
    const atts = await s.call("list_attachments", { limit: 1000 });
    expect(atts.items.some((a: any) => a.path.includes("linked") || a.path.includes("secret"))).toBe(false);
    expect(await s.call("list_folders")).not.toContain("escape");
  });
});

describe("files whose names no path can spell", () => {
  test("a backslash, a control character or a non-UTF-8 name: left out of the index, and the person told", async () => {
    const root = copyVault();
    writeFileSync(join(root, "a\\b.md"), "zebraunique1\n");
    writeFileSync(join(root, "x\ny.md"), "zebraunique2\n");
    writeFileSync(Buffer.concat([Buffer.from(root + "/bad"), Buffer.from([0xff, 0xfe]), Buffer.from(".md")]), "zebraunique3\n");
    mkdirSync(join(root, "odd\\dir"));
    writeFileSync(join(root, "odd\\dir", "inner.md"), "zebraunique4\n");
    // A folder whose name is not UTF-8: listed, it was a path no tool could use, its notes left out unsaid.
    const badDir = Buffer.concat([Buffer.from(root + "/dir"), Buffer.from([0xff, 0xfe])]);
    mkdirSync(badDir);
    writeFileSync(Buffer.concat([badDir, Buffer.from("/inner.md")]), "zebraunique7\n");
    const indexed = await runLettuce(["index", root]);
    expect(indexed.code).toBe(0);
    expect(indexed.stderr).toContain('left out "a\\\\b.md": its name has a backslash');
    expect(indexed.stderr).toContain('left out "x\\ny.md": its name has a control character');
    expect(indexed.stderr).toContain("its name has bytes that are not UTF-8");
    expect(indexed.stderr).toContain('left out "odd\\\\dir"');
    expect(indexed.stderr).toContain('left out "dir\ufffd\ufffd": its name has bytes that are not UTF-8');
    const t = await startTestServer({ root, watch: true });
    try {
      for (const w of ["zebraunique1", "zebraunique2", "zebraunique3", "zebraunique4"]) expect((await t.call("search", { query: w })).total).toBe(0);
      const listed = (await t.call("list_notes", { limit: 1000 })).items.map((n: any) => n.path);
      expect(listed.filter((p: string) => /[\\\n\ufffd]/.test(p))).toEqual([]);
      expect((await t.call("list_folders")).filter((p: string) => p.includes("\ufffd"))).toEqual([]);
      // Made while the server watches: the watcher leaves it out too.
      writeFileSync(join(root, "c\\d.md"), "zebraunique5\n");
      writeFileSync(join(root, "fresh.md"), "zebraunique6\n");
      await waitFor(async () => (await t.call("search", { query: "zebraunique6" })).total === 1);
      expect((await t.call("search", { query: "zebraunique5" })).total).toBe(0);
      expect(JSON.stringify(await t.call("get_changes_since", {}))).not.toContain("zebraunique");
      expect(JSON.stringify(await t.call("get_changes_since", {}))).not.toContain("c\\\\d.md");
    } finally {
      await t.close();
    }
  });
});

describe("missing things", () => {
  test("a missing note is note-not-found for every note tool", async () => {
    for (const tool of NOTE_TOOLS) {
      const res: any = await s.callRaw(tool, { path: "Inbox/does not exist.md" }, "read");
      expect(res, tool).toMatchObject({ isError: true, kind: "note-not-found" });
      expect(res.content[0].text).toContain("Inbox/does not exist.md");
    }
  });

  test("a bare name or title that is not a path names the notes it may mean", async () => {
    const r: any = await s.callRaw("read_note", { path: "Lettuce" });
    expect(r.kind).toBe("note-not-found");
    expect(JSON.parse(r.content[0].text)).toMatchObject({ didYouMean: ["Projects/Lettuce.md"] });
    expect(JSON.parse(r.content[0].text).error).toContain('did you mean "Projects/Lettuce.md"');
    const none: any = await s.callRaw("read_note", { path: "Nothing like it" });
    expect(JSON.parse(none.content[0].text).didYouMean).toBeUndefined();
  });

  test("a missing attachment is attachment-not-found; a folder is not a file", async () => {
    expect(await s.callRaw("read_attachment", { path: "assets/none.png" }, "read")).toMatchObject({ isError: true, kind: "attachment-not-found" });
    expect(await s.callRaw("read_attachment", { path: "assets" }, "read")).toMatchObject({ isError: true, kind: "attachment-not-found" });
  });

  test("an attachment path given to read_note is not a note", async () => {
    const res: any = await s.callRaw("read_note", { path: "assets/diagram.png" }, "read");
    expect(res).toMatchObject({ isError: true, kind: "note-not-found" });
  });

  test("harmless spellings of a good path still work", async () => {
    for (const path of ["Projects/Lettuce.md", "Projects//Lettuce.md", "./Projects/Lettuce.md", "Projects/./Lettuce.md", "Projects%2FLettuce.md", "Projects/Lettuce%2Emd"]) {
      expect((await s.call("read_note", { path }, "read")).path, path).toBe("Projects/Lettuce.md");
    }
    // A file whose name merely contains two dots is fine.
    mkdirSync(join(s.root, "Odd"), { recursive: true });
    writeFileSync(join(s.root, "Odd/v1..2 notes.md"), "# Odd\n");
    await s.vault.indexer.update(["Odd/v1..2 notes.md"]);
    expect((await s.call("read_note", { path: "Odd/v1..2 notes.md" }, "read")).title).toBe("Odd");
  });
});
