// What an agent may name and write. New names refused C0 controls but took C1 controls (U+0085 NEXT LINE
// breaks a line in editors and terminals) and the line and paragraph separators U+2028 and U+2029. Half of a
// surrogate pair in write_note's content, patch_section's content, file_page's title or append_log's body was
// stored as U+FFFD without a word, while apply_edits refused it: now every write tool refuses it alike.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  writeFileSync(join(s.root, "Person\u0085Note.md"), "# made by the person\n\nkept\n");
  await s.vault.indexer.update(["Person\u0085Note.md"]);
});
afterAll(() => s.close());

const snapshot = () =>
  readdirSync(s.root, { recursive: true })
    .map(String)
    .filter((f) => !f.startsWith(".lettuce"))
    .sort()
    .map((f) => {
      try {
        return `${f}:${new Bun.CryptoHasher("sha256").update(readFileSync(join(s.root, f))).digest("hex")}`;
      } catch {
        return f; // a folder
      }
    });

describe("control characters and line separators in a new name", () => {
  test("are path-invalid for write_note, file_page and move_note; nothing is written", async () => {
    const before = snapshot();
    for (const name of ["a\u0085b", "a\u2028b", "a\u2029b", "x\u009b2J", "\u0080lead", "Dir\u2028/x"]) {
      for (const [tool, args] of [
        ["write_note", { path: `${name}.md`, content: "x\n" }],
        ["file_page", { path: `${name}.md`, title: "T", content: "x", citations: ["index"] }],
        ["move_note", { from: "Person\u0085Note.md", to: `${name}.md` }],
      ] as const) {
        const r: any = await s.callRaw(tool, args);
        expect(r.isError, `${tool} ${JSON.stringify(name)}`).toBe(true);
        expect(r.content[0].text, `${tool} ${JSON.stringify(name)}`).toContain("path-invalid");
      }
    }
    expect(snapshot()).toEqual(before);
  });

  test("a person's note so named is read and edited by its name", async () => {
    expect((await s.call("read_note", { path: "Person\u0085Note.md" })).content).toContain("made by the person");
    await s.call("apply_edits", { path: "Person\u0085Note.md", edits: [{ find: "kept", replace: "edited" }] });
    expect(readFileSync(join(s.root, "Person\u0085Note.md"), "utf8")).toBe("# made by the person\n\nedited\n");
    // Ordinary names beyond ASCII are untouched by the rule.
    await s.call("write_note", { path: "Ça\u00a0va – naïve.md", content: "x\n" });
    expect(existsSync(join(s.root, "Ça\u00a0va – naïve.md"))).toBe(true);
  });
});

describe("half of a surrogate pair in text to be written", () => {
  test("is invalid-input from every write tool, naming the argument; nothing is written", async () => {
    const before = snapshot();
    const half = "x\ud800y";
    const directive = "Inbox/Meeting Notes 2026-03-02.md";
    const line = readFileSync(join(s.root, directive), "utf8").split("\n").findIndex((l) => /\[!ai\]/i.test(l)) + 1;
    expect(line).toBeGreaterThan(0);
    const calls: [string, Record<string, unknown>, string][] = [
      ["write_note", { path: "New.md", content: half }, "content"],
      ["write_note", { path: "index.md", content: "\udc00", overwrite: true }, "content"],
      ["apply_edits", { path: "index.md", edits: [{ find: "Index", replace: half }] }, "edits[0].replace"],
      ["patch_section", { path: "index.md", heading: "Index", mode: "append", content: half }, "content"],
      ["patch_section", { path: "index.md", heading: half, mode: "append", content: "x" }, "heading"],
      ["file_page", { path: "Page.md", title: half, content: "x", citations: ["index"] }, "title"],
      ["file_page", { path: "Page.md", title: "T", content: half, citations: ["index"] }, "content"],
      ["file_page", { path: "Page.md", title: "T", content: "x", citations: ["index"], tags: ["ok", half] }, "tags[1]"],
      ["append_log", { op: "query", title: half }, "title"],
      ["append_log", { op: "query", title: "t", body: half }, "body"],
      ["complete_directive", { path: directive, line, answer: half }, "answer"],
    ];
    for (const scope of ["write", "propose"] as const) {
      for (const [tool, args, field] of calls) {
        const r: any = await s.callRaw(tool, args, scope);
        const what = `${scope} ${tool} ${field}`;
        expect(r.isError, what).toBe(true);
        const body = JSON.parse(r.content[0].text);
        expect(body.kind, what).toBe("invalid-input");
        expect(body.error, what).toContain(`${field} holds half of a surrogate pair`);
      }
    }
    expect(snapshot()).toEqual(before);
    expect((await s.call("list_my_proposals", {}, "propose")).items ?? []).toEqual([]);
  });
});
