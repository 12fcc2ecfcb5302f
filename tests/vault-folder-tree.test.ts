// list_folders keeps the folder tree between calls and walks again when any
// folder in it changed (lib/vault/folders.ts). The settle window is cut to
// 40 ms here so that each change can be made against a kept tree.
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, renameSync, rmdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { folderWalks, listFolders } from "../lib/vault/folders";
import { startTestServer, tempDir } from "./helpers/server";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const SETTLE = 40;
const settle = () => Bun.sleep(SETTLE + 30);

/** A call that must come from the kept tree (no walk), then its answer. */
function kept(root: string): string[] {
  const before = folderWalks.count;
  const out = listFolders(root, SETTLE);
  expect(folderWalks.count).toBe(before);
  return out;
}

test("a kept tree answers until a folder in it changes: new, removed, renamed, nested, replaced by a link", async () => {
  const root = tempDir();
  const outside = tempDir();
  dirs.push(root, outside);
  for (const f of ["A", "A/B", "C", "D", ".hidden"]) mkdirSync(join(root, f));
  writeFileSync(join(root, "A/B/n.md"), "# n\n");
  await settle();
  expect(listFolders(root, SETTLE)).toEqual(["A", "A/B", "C", "D"]);
  expect(kept(root)).toEqual(["A", "A/B", "C", "D"]);

  // A note written into a folder changes it too: walked again, same answer.
  writeFileSync(join(root, "C/new.md"), "x");
  const walks = folderWalks.count;
  expect(listFolders(root, SETTLE)).toEqual(["A", "A/B", "C", "D"]);
  expect(folderWalks.count).toBe(walks + 1);

  const steps: [() => void, string[]][] = [
    [() => mkdirSync(join(root, "A/B/Deep")), ["A", "A/B", "A/B/Deep", "C", "D"]],
    [() => rmdirSync(join(root, "A/B/Deep")), ["A", "A/B", "C", "D"]],
    [() => renameSync(join(root, "A"), join(root, "Z")), ["C", "D", "Z", "Z/B"]],
    [() => mkdirSync(join(root, "E")), ["C", "D", "E", "Z", "Z/B"]],
    [() => (rmdirSync(join(root, "D")), symlinkSync(outside, join(root, "D"))), ["C", "E", "Z", "Z/B"]],
    [() => mkdirSync(join(root, ".hidden/inner")), ["C", "E", "Z", "Z/B"]],
  ];
  for (const [change, expected] of steps) {
    await settle();
    listFolders(root, SETTLE);
    kept(root);
    change();
    expect(listFolders(root, SETTLE)).toEqual(expected);
  }
});

test("through the server, a folder made a moment ago is listed at once (a tree walked just now is not kept)", async () => {
  const s = await startTestServer();
  try {
    const first = (await s.call("list_folders", {}, "read")) as string[];
    mkdirSync(join(s.root, "Fresh folder"));
    const second = (await s.call("list_folders", {}, "read")) as string[];
    expect(second).toEqual([...first, "Fresh folder"].sort());
    rmdirSync(join(s.root, "Fresh folder"));
    expect(await s.call("list_folders", {}, "read")).toEqual(first);
  } finally {
    await s.close();
  }
});

test("through the server, the walk runs in a read worker, not on the request thread", async () => {
  const s = await startTestServer();
  try {
    const walks = folderWalks.count; // this thread's walks
    mkdirSync(join(s.root, "Walked elsewhere"));
    const listed = (await s.call("list_folders", {}, "read")) as string[];
    expect(listed).toContain("Walked elsewhere");
    expect(folderWalks.count).toBe(walks);
  } finally {
    await s.close();
  }
});
