// move_note of a note that many notes link to rewrites them all in one call. It wrote every temp file at once,
// one descriptor each: with 20,000 backlinks it ran out (EMFILE) and failed, and under the common limit of
// 1,024 descriptors a note with about a thousand backlinks could not be moved at all. Temp files are now
// written a few at a time (lib/write/commit.ts). Here the test process's own limit leaves the call a few
// hundred descriptors, fewer than the notes it rewrites.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { canLimitDescriptors, withOwnDescriptorLimit } from "./helpers/fd-limit";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";

if (!canLimitDescriptors) console.log("write-many-backlinks: skipped: this process cannot set its own descriptor limit here (Linux's libc)");

const NOTES = 1500;
let s: TestServer;
let root: string;
beforeAll(async () => {
  root = tempDir();
  mkdirSync(join(root, "notes"));
  writeFileSync(join(root, "Target.md"), "# Target\n");
  for (let i = 0; i < NOTES; i++) writeFileSync(join(root, "notes", `n${i}.md`), `# n${i}\n\nsee [[Target]] and [[Target#x|the target]]\n`);
  s = await startTestServer({ root });
}, 120_000);
afterAll(async () => {
  await s?.close();
  rmSync(root, { recursive: true, force: true });
});

test.skipIf(!canLimitDescriptors)("a note with more backlinks than free descriptors moves, and every link follows it", async () => {
  const open = readdirSync("/proc/self/fd").length;
  const out = await withOwnDescriptorLimit(open + 300, () => s.call("move_note", { from: "Target.md", to: "Moved/Goal.md" }));
  expect(out.linksUpdated).toBe(2 * NOTES);
  expect(out.notesUpdated.length).toBe(NOTES);
  expect(existsSync(join(root, "Target.md"))).toBe(false);
  expect(readFileSync(join(root, "notes/n7.md"), "utf8")).toBe("# n7\n\nsee [[Goal]] and [[Goal#x|the target]]\n");
  // No temp file left behind.
  expect(readdirSync(join(root, "notes")).filter((n) => !/^n\d+\.md$/.test(n))).toEqual([]);
  const back = await s.call("list_backlinks", { path: "Moved/Goal.md", limit: 1 }, "read");
  expect(back.total).toBe(2 * NOTES); // links, two a note
}, 120_000);
