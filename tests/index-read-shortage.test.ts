// A note saved while the server has no file descriptor to spare (a burst of connections, another program's
// leak): its read failed with EMFILE, the pass took the note for one deleted since the event, and the save was
// never indexed (no later event names it). A read that fails for a moment fails the pass, which the watcher
// tries again; a note truly gone is still skipped.
import { afterAll, expect, test } from "bun:test";
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VaultContext } from "../lib/vault-context";
import { readAndParse } from "../lib/index/parse-job";
import { statEntry } from "../lib/vault/scan";
import { copyVault, waitFor } from "./helpers/server";

const prlimit = process.platform === "linux" ? Bun.which("prlimit") : null;
if (!prlimit) console.log("index-read-shortage: skipped: prlimit(1) is not here (util-linux) to lower this process's descriptor limit");

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

const softLimit = () => readFileSync("/proc/self/limits", "utf8").match(/Max open files\s+(\d+)/)![1]!;
const setSoftLimit = (to: number | string) => Bun.spawnSync([prlimit!, "--pid", String(process.pid), `--nofile=${to}:`]).exitCode;
/** The lowest descriptor number not in use. */
function lowestFree(): number {
  const used = new Set(readdirSync("/proc/self/fd").map(Number));
  let n = 0;
  while (used.has(n)) n++;
  return n;
}

/**
 * No descriptor free until the returned function is called. prlimit(1), which gives them back, is a child
 * process that needs a few itself: the limit leaves room for 16, and this process holds those 16 meanwhile.
 */
function useUpDescriptors(): () => void {
  const soft = softLimit();
  expect(setSoftLimit(lowestFree() + 16)).toBe(0);
  const held: number[] = [];
  try {
    for (;;) held.push(openSync("/dev/null", "r"));
  } catch {
    /* EMFILE: none left */
  }
  return () => {
    for (const fd of held) closeSync(fd);
    expect(setSoftLimit(soft)).toBe(0);
  };
}

test.skipIf(!prlimit)("a note that cannot be opened for want of descriptors is an error, not a note gone", () => {
  const root = copyVault();
  roots.push(root);
  const entry = statEntry(root, "Garden/Compost.md")!;
  let shortOf: unknown;
  const giveBack = useUpDescriptors();
  try {
    readAndParse(root, { entry, knownHash: null });
  } catch (e) {
    shortOf = e;
  } finally {
    giveBack();
  }
  expect((shortOf as { code?: string } | undefined)?.code).toBe("EMFILE");
  // Gone for good: skipped, as before.
  expect(readAndParse(root, { entry: { ...entry, path: "Garden/No such note.md" }, knownHash: null }).missing).toBe(true);
});

test.skipIf(!prlimit)("a save indexed while no descriptor is free is indexed once one is", async () => {
  const root = copyVault();
  roots.push(root);
  const v = VaultContext.open(root);
  try {
    await v.indexer.fullScan();
    v.startWatching();
    await Bun.sleep(200);
    writeFileSync(join(root, "Inbox/Saved in a shortage.md"), "# Saved in a shortage\n\nquetzalcoatlus\n");
    // Before the watcher's debounce (60 ms) runs the pass: none free while it reads the note.
    const giveBack = useUpDescriptors();
    await Bun.sleep(400);
    giveBack();
    await waitFor(() => v.indexDb.query("SELECT 1 FROM notes WHERE path = 'Inbox/Saved in a shortage.md'").get(), {
      what: "the note saved in the shortage indexed by the retried pass",
      timeoutMs: 10_000,
    });
  } finally {
    v.close();
  }
}, 30_000);

test.skipIf(!prlimit)("a new folder that cannot be listed for want of descriptors fails the pass; listed later, its notes are indexed", async () => {
  const root = copyVault();
  roots.push(root);
  const v = VaultContext.open(root);
  try {
    await v.indexer.fullScan();
    mkdirSync(join(root, "Moved in"));
    writeFileSync(join(root, "Moved in", "Arrived.md"), "# Arrived\n");
    let failed: unknown = null;
    const giveBack = useUpDescriptors();
    try {
      await v.indexer.update(["Moved in"]);
    } catch (e) {
      failed = e;
    } finally {
      giveBack();
    }
    expect(String(failed)).toContain("EMFILE");
    expect((await v.indexer.update(["Moved in"])).changed).toEqual(["Moved in/Arrived.md"]);
  } finally {
    v.close();
  }
});
