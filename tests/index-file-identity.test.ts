// A file at a known path that is another file than the one indexed, with the same size, mtime and ctime:
// files written in one burst (git clone, unzip, cp -r) share their timestamps' tick, and renaming a folder
// does not touch its files' ctimes. So `git mv Current Archive && git mv Next Current` put Next's note at
// Current's path with Current's stamps, and the index kept Current's text and links for good, served or
// not (the sync audit of 2026-12-05). The inode now joins the stamp (lib/platform/change-stamp.ts).
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runLettuce } from "./helpers/cli";
import { startTestServer, tempDir, waitFor, type TestServer } from "./helpers/server";

const roots: string[] = [];
let s: TestServer | undefined;
afterAll(async () => {
  await s?.close();
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/**
 * Current/Status.md and Next/Status.md of one size, with one mtime and (written in one burst) one ctime,
 * as a clone leaves them. The ctime cannot be set: the pair is written again until the two share its tick.
 * Each try writes new files: a kernel with multigrain timestamps (Linux 6.13 on) gives a file whose ctime was
 * read (the stat below) a fine-grained ctime at its next change, so rewriting the same two files missed the
 * tick 2,000 times in a row once a first try had.
 */
function twinFolders(root: string): void {
  for (let attempt = 0; attempt < 2000; attempt++) {
    for (const [dir, week, link] of [["Current", "01", "Alpha"], ["Next", "02", "Bravo"]]) {
      rmSync(join(root, dir!), { recursive: true, force: true });
      mkdirSync(join(root, dir!), { recursive: true });
      writeFileSync(join(root, dir!, "Status.md"), `# Status\n\nweek ${week} see [[${link}]]\n`);
      utimesSync(join(root, dir!, "Status.md"), 1_700_000_000, 1_700_000_000);
    }
    const [a, b] = ["Current", "Next"].map((d) => statSync(join(root, d, "Status.md")));
    if (a!.ctimeMs === b!.ctimeMs && a!.mtimeMs === b!.mtimeMs && a!.size === b!.size) return;
  }
  throw new Error("could not write two files within one ctime tick");
}

function rotate(root: string): void {
  renameSync(join(root, "Current"), join(root, "Archive"));
  renameSync(join(root, "Next"), join(root, "Current"));
}

function vault(): string {
  const root = tempDir();
  roots.push(root);
  writeFileSync(join(root, "Alpha.md"), "# Alpha\n");
  writeFileSync(join(root, "Bravo.md"), "# Bravo\n");
  twinFolders(root);
  return root;
}

test("served: a folder put in another's place with identical stamps is read again", async () => {
  const root = vault();
  s = await startTestServer({ root, watch: true });
  rotate(root);
  await waitFor(async () => (await s!.call("search", { query: "week 02" }, "read")).items.some((i: any) => i.path === "Current/Status.md"), { what: "Next's note at Current's path", timeoutMs: 10_000 });
  const note = await s.call("read_note", { path: "Current/Status.md" }, "read");
  expect(note.content).toContain("week 02");
  expect(note.outgoingLinks.map((l: any) => l.resolvedPath)).toEqual(["Bravo.md"]);
  expect((await s.call("search", { query: "week 01" }, "read")).items.map((i: any) => i.path)).toEqual(["Archive/Status.md"]);
}, 30_000);

test("not served: `lettuce index` and `lettuce search` see it too", async () => {
  const root = vault();
  expect((await runLettuce(["index", root])).code).toBe(0);
  rotate(root);
  const search = await runLettuce(["search", root, "week 02", "--json"]);
  expect(JSON.parse(search.stdout).items.map((i: { path: string }) => i.path)).toEqual(["Current/Status.md"]);
  const index = await runLettuce(["index", root, "--json"]);
  expect(JSON.parse(index.stdout).changed).toBe(0);
}, 30_000);
