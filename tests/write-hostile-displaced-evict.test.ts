// A person's slow in-place save, through the file their editor holds open, goes on after an agent's edit
// replaced the note: lib/write/displaced.ts watches the displaced file and puts the save back. Only 64 files
// are watched at once; a move rewriting 70 linking notes displaced 70 more, and the oldest watch, the
// person's, ended at once: half their save was put back, the other half went to a file no name led to.
// Watches that hold nothing (the move's notes, which nobody had open) now end first.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { closeSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, tempDir, waitFor, type TestServer } from "./helpers/server";

const LINKING = 70; // past the 64 watched at once

let s: TestServer;
beforeAll(async () => {
  const root = tempDir();
  writeFileSync(join(root, "n.md"), "# N\n\nold text\n\n## Agent\n\nx\n");
  writeFileSync(join(root, "Hub.md"), "# Hub\n");
  mkdirSync(join(root, "b"));
  for (let i = 0; i < LINKING; i++) writeFileSync(join(root, "b", `b${i}.md`), "links [[Hub]]\n");
  s = await startTestServer({ root });
});
afterAll(() => s.close());

test("a save in two halves around a move that displaces 70 more notes is in the vault whole", async () => {
  const fd = openSync(join(s.root, "n.md"), "r+"); // the person's editor holds the note open
  try {
    await s.call("patch_section", { path: "n.md", heading: "Agent", mode: "append", content: "- agent line" });
    const full = `# N\n\nthe person's new text, first half ${"a".repeat(200)}\n\nsecond half: the end of the person's save\n`;
    const cut = full.indexOf("second half");
    writeSync(fd, full.slice(0, cut), 0);
    const moved = await s.call("move_note", { from: "Hub.md", to: "Hub2.md" });
    expect(moved.notesUpdated.length).toBe(LINKING);
    await Bun.sleep(300);
    writeSync(fd, full.slice(cut), Buffer.byteLength(full.slice(0, cut)));
    ftruncateSync(fd, Buffer.byteLength(full));
    const whole = () => readdirSync(s.root).filter((f) => /^n.*\.md$/.test(f)).some((f) => readFileSync(join(s.root, f), "utf8") === full);
    await waitFor(whole, { timeoutMs: 15_000, what: "the person's whole save in the vault" });
    expect(readFileSync(join(s.root, "n.md"), "utf8")).toBe(full);
  } finally {
    closeSync(fd);
  }
  // The move's own rewrites all landed.
  for (let i = 0; i < LINKING; i++) expect(readFileSync(join(s.root, "b", `b${i}.md`), "utf8")).toBe("links [[Hub2]]\n");
}, 60_000);
