// Item 5 of the hardening issue: dot-files and dot-folders (.git, .obsidian,
// .trash, .env, …) are invisible to agents. Every read, write and listing
// tool answers path-invalid for them, and nothing in them is ever listed or
// found by search — for any token scope and any spelling of the path.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, waitFor, type TestServer } from "./helpers/server";

// Secrets a person keeps beside their notes, each with a marker word no visible note has.
const SECRETS: Record<string, string> = {
  ".git/config": "[remote] url = https://token:ghp_gitsecretmarker@github.com/x\n",
  ".obsidian/plugins/x/data.json": '{"apiKey": "obsidianpluginmarker"}\n',
  ".trash/Old secret.md": "# Old secret\n\ntrashedmarker\n",
  ".env": "OPENAI_API_KEY=envfilemarker\n",
  "Projects/.private.md": "# Private\n\ndotfilemarker\n",
  "Projects/.hidden/inner.md": "# Inner\n\ndotfoldermarker\n",
  "node_modules/pkg/README.md": "# pkg\n\nnodemodulesmarker\n",
};
const MARKERS = ["gitsecretmarker", "obsidianpluginmarker", "trashedmarker", "envfilemarker", "dotfilemarker", "dotfoldermarker", "nodemodulesmarker"];

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ watch: true });
  for (const [rel, text] of Object.entries(SECRETS)) {
    mkdirSync(join(s.root, rel, ".."), { recursive: true });
    writeFileSync(join(s.root, rel), text);
  }
  // As on a server started on a vault set up this way, and as the watcher sees them arrive.
  await s.vault.indexer.fullScan();
  await s.vault.settle();
});
afterAll(() => s?.close());

// Spellings of each secret: as is, percent-encoded, with ./ and doubled slashes.
function spellings(rel: string): string[] {
  return [rel, `./${rel}`, rel.replace("/", "//"), rel.replace(/^\./, "%2e"), encodeURIComponent(rel), rel.replace(/^\./, "%252e")];
}

describe("read tools refuse hidden paths with path-invalid", () => {
  for (const scope of ["read", "write"] as const) {
    test(`read_attachment and read_note (${scope} token)`, async () => {
      for (const rel of Object.keys(SECRETS)) {
        for (const p of spellings(rel)) {
          for (const tool of ["read_attachment", "read_note"]) {
            const res: any = await s.callRaw(tool, { path: p }, scope);
            expect(res.isError, `${tool} ${p}`).toBe(true);
            expect(res.kind, `${tool} ${p}: ${res.content?.[0]?.text}`).toBe("path-invalid");
            for (const m of MARKERS) expect(res.content[0].text).not.toContain(m);
          }
        }
      }
    });
  }

  test("every note tool and folder argument", async () => {
    const notes = ["read_outline", "list_outgoing_links", "list_backlinks", "link_graph", "suggest_links"];
    for (const tool of notes) {
      for (const p of [".trash/Old secret.md", "Projects/.private.md", "Projects/.hidden/inner.md"]) {
        expect(await s.callRaw(tool, { path: p }, "read"), `${tool} ${p}`).toMatchObject({ isError: true, kind: "path-invalid" });
      }
    }
    for (const tool of ["list_notes", "list_attachments", "pending_directives", "lint"]) {
      for (const p of [".git", ".obsidian", ".trash", "Projects/.hidden", "node_modules", "%2etrash"]) {
        expect(await s.callRaw(tool, { path: p }, "read"), `${tool} ${p}`).toMatchObject({ isError: true, kind: "path-invalid" });
      }
    }
  });
});

describe("write tools refuse hidden paths and write nothing there", () => {
  test("create, edit, move into and out of, delete", async () => {
    const before = readFileSync(join(s.root, ".trash/Old secret.md"), "utf8");
    const calls: [string, Record<string, unknown>][] = [
      ["write_note", { path: ".obsidian/snippets/evil.md", content: "# x\n" }],
      ["write_note", { path: ".trash/Old secret.md", content: "# x\n", overwrite: true }],
      ["write_note", { path: "Projects/.private.md", content: "# x\n", overwrite: true }],
      ["write_note", { path: ".env", content: "X=1\n", overwrite: true }],
      ["apply_edits", { path: ".trash/Old secret.md", edits: [{ find: "trashedmarker", replace: "x" }] }],
      ["patch_section", { path: "Projects/.private.md", heading: "Private", mode: "append", content: "x" }],
      ["move_note", { from: "Projects/Lettuce.md", to: ".trash/Lettuce.md" }],
      ["move_note", { from: ".trash/Old secret.md", to: "Inbox/Recovered.md" }],
      ["delete_note", { path: ".trash/Old secret.md" }],
      // node_modules in another letter case: a write respells folders to the disk's case, so these reached it.
      ["write_note", { path: "NODE_MODULES/pkg/README.md", content: "# x\n", overwrite: true }],
      ["write_note", { path: "Node_Modules/pkg/new.md", content: "# x\n" }],
      ["move_note", { from: "Inbox/quick-thought.md", to: "Node_Modules/hidden.md" }],
      ["read_note", { path: "NODE_MODULES/pkg/README.md" }],
    ];
    for (const [tool, args] of calls) {
      const res: any = await s.callRaw(tool, args, "write");
      expect(res.isError, `${tool} ${JSON.stringify(args)}`).toBe(true);
      expect(res.kind, `${tool}: ${res.content?.[0]?.text}`).toBe("path-invalid");
    }
    expect(readFileSync(join(s.root, ".trash/Old secret.md"), "utf8")).toBe(before);
    expect(readFileSync(join(s.root, ".env"), "utf8")).toBe(SECRETS[".env"]!);
    expect(readFileSync(join(s.root, "node_modules/pkg/README.md"), "utf8")).toBe(SECRETS["node_modules/pkg/README.md"]!);
    expect(readdirSync(join(s.root, "node_modules/pkg"))).toEqual(["README.md"]);
    expect((await s.call("read_note", { path: "Projects/Lettuce.md" })).path).toBe("Projects/Lettuce.md");
  });
});

describe("listings and search never show hidden files", () => {
  test("list_notes, list_attachments, list_folders, list_tags, search", async () => {
    const notes = await s.call("list_notes", { limit: 1000 }, "read");
    const atts = await s.call("list_attachments", { limit: 1000 }, "read");
    const folders: string[] = await s.call("list_folders", {}, "read");
    const hidden = (p: string) => p.split("/").some((part) => part.startsWith(".") || part === "node_modules");
    expect(notes.items.filter((n: any) => hidden(n.path))).toEqual([]);
    expect(atts.items.filter((a: any) => hidden(a.path))).toEqual([]);
    expect(folders.filter(hidden)).toEqual([]);
    for (const m of MARKERS) expect((await s.call("search", { query: m }, "read")).total, m).toBe(0);
    const all = JSON.stringify(await s.call("lint", {}, "read"));
    for (const m of [".trash", ".obsidian", ".git/", "node_modules"]) expect(all).not.toContain(m);
  });

  test("a hidden file created while the server runs stays invisible", async () => {
    writeFileSync(join(s.root, "Inbox/.draft.md"), "# Draft\n\nlatedotmarker\n");
    writeFileSync(join(s.root, "Inbox/visible.md"), "# Visible\n\nlatevisiblemarker\n");
    // The visible one arrives (so the watcher did run), the hidden one never does.
    await waitFor(async () => (await s.call("search", { query: "latevisiblemarker" }, "read")).total === 1, { what: "the visible note" });
    await s.vault.settle();
    expect((await s.call("search", { query: "latedotmarker" }, "read")).total).toBe(0);
    expect(await s.callRaw("read_note", { path: "Inbox/.draft.md" }, "read")).toMatchObject({ isError: true, kind: "path-invalid" });
  });
});
