// Names as they are on disk, not as an agent types them (the Unicode audit of 2026-12-05): macOS and sync
// clients write names decomposed (NFD), agents and people type them composed (NFC); letter case beyond
// ASCII; characters outside the Basic Multilingual Plane, whose JavaScript length is not SQLite's.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setSetting } from "../lib/store/state-db";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";

const NFD = (s: string) => s.normalize("NFD");
const NFC = (s: string) => s.normalize("NFC");

function vaultWith(files: Record<string, string>): string {
  const root = tempDir("lettuce-unicode-");
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe("an immutable folder whose name is decomposed on disk", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ root: vaultWith({ [`${NFD("Références")}/a.md`]: "# A\nsource\n", [`${NFD("Références")}/b.md`]: "# B\n" }) });
    setSetting(s.vault.stateDb, "immutablePaths", JSON.stringify([`${NFC("Références")}/`]));
  });
  afterAll(() => s.close());

  test("is protected however the agent spells it", async () => {
    for (const dir of [NFC("Références"), NFD("Références")]) {
      const edit: any = await s.callRaw("apply_edits", { path: `${dir}/a.md`, edits: [{ find: "source", replace: "changed" }] });
      expect(edit.kind).toBe("immutable-path");
      const over: any = await s.callRaw("write_note", { path: `${dir}/a.md`, content: "gone\n", overwrite: true });
      expect(over.kind).toBe("immutable-path");
      const del: any = await s.callRaw("delete_note", { path: `${dir}/b.md` });
      expect(del.kind).toBe("immutable-path");
    }
    expect(readFileSync(join(s.root, NFD("Références"), "a.md"), "utf8")).toBe("# A\nsource\n");
    expect(existsSync(join(s.root, NFD("Références"), "b.md"))).toBe(true);
  });
});

describe("folders and tags with characters outside the Basic Multilingual Plane", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({
      root: vaultWith({
        "📁 Projects/top.md": "# Top\n",
        "📁 Projects/Sub/child.md": "# Child\n#𝒜lpha/beta\n\n> [!ai] summarise this\n",
        "📁 Projects/Sub/Deep/grand.md": "# Grand\n",
        "📁 Projects/Sub/pic.png": "png",
      }),
    });
  });
  afterAll(() => s.close());

  test("a folder lists every note under it, and its sub-folders", async () => {
    const all = await s.call("list_notes", { path: "📁 Projects", recursive: true });
    expect(all.items.map((n: any) => n.path).sort()).toEqual(["📁 Projects/Sub/Deep/grand.md", "📁 Projects/Sub/child.md", "📁 Projects/top.md"]);
    expect(all.total).toBe(3);
    const files = await s.call("list_attachments", { path: "📁 Projects" });
    expect(files.items.map((f: any) => f.path)).toEqual(["📁 Projects/Sub/pic.png"]);
  });

  test("a parent tag finds its nested tags, and a folder scope its directives", async () => {
    const tagged = await s.call("notes_by_tag", { tag: "𝒜lpha" });
    expect(tagged.items.map((n: any) => n.path)).toEqual(["📁 Projects/Sub/child.md"]);
    const work = await s.call("pending_directives", { path: "📁 Projects" });
    expect(work.map((d: any) => d.path)).toEqual(["📁 Projects/Sub/child.md"]);
  });
});
