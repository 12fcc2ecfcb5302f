// A note saved while the server has no file descriptor to spare (a burst of connections, another program's
// leak): its read failed with EMFILE, the pass took the note for one deleted since the event, and the save was
// never indexed (no later event names it). A read that fails for a moment fails the pass, which the watcher
// tries again (0.5 s, doubling: lib/index/watcher.ts, tested with full scans in hardening-fd-limit); a note
// truly gone is still skipped. The same for a folder that cannot be listed.
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VaultContext } from "../lib/vault-context";
import { readAndParse } from "../lib/index/parse-job";
import { statEntry } from "../lib/vault/scan";
import { copyVault } from "./helpers/server";
import { canLimitDescriptors, withNoFreeDescriptors } from "./helpers/fd-limit";

if (!canLimitDescriptors) console.log("index-read-shortage: skipped: this process cannot set its own descriptor limit here (Linux's libc)");

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

test.skipIf(!canLimitDescriptors)("a note that cannot be opened for want of descriptors is an error, not a note gone", async () => {
  const root = copyVault();
  roots.push(root);
  const entry = statEntry(root, "Garden/Compost.md")!;
  const shortOf = await withNoFreeDescriptors(() => {
    try {
      readAndParse(root, { entry, knownHash: null });
      return null;
    } catch (e) {
      return e;
    }
  });
  expect((shortOf as { code?: string } | null)?.code).toBe("EMFILE");
  // Gone for good: skipped, as before.
  expect(readAndParse(root, { entry: { ...entry, path: "Garden/No such note.md" }, knownHash: null }).missing).toBe(true);
});

/**
 * In an indexed copy of the example vault, `write` adds files; `path` is indexed with no descriptor free
 * (the pass must fail on EMFILE), then again with descriptors (the new notes come in).
 */
async function indexedInShortage(write: (root: string) => void, path: string, expected: string[]): Promise<void> {
  const root = copyVault();
  roots.push(root);
  const v = VaultContext.open(root);
  try {
    await v.indexer.fullScan();
    write(root);
    const failed = await withNoFreeDescriptors(() => v.indexer.update([path]).then(() => null, (e: unknown) => e));
    expect(String(failed)).toContain("EMFILE");
    expect((await v.indexer.update([path])).changed).toEqual(expected);
  } finally {
    v.close();
  }
}

test.skipIf(!canLimitDescriptors)("a save indexed while no descriptor is free fails the pass, and is indexed when tried again", () =>
  indexedInShortage((root) => writeFileSync(join(root, "Inbox/Saved in a shortage.md"), "# Saved in a shortage\n\nquetzalcoatlus\n"), "Inbox/Saved in a shortage.md", [
    "Inbox/Saved in a shortage.md",
  ]));

test.skipIf(!canLimitDescriptors)("a new folder that cannot be listed for want of descriptors fails the pass; listed later, its notes are indexed", () =>
  indexedInShortage(
    (root) => {
      mkdirSync(join(root, "Moved in"));
      writeFileSync(join(root, "Moved in", "Arrived.md"), "# Arrived\n");
    },
    "Moved in",
    ["Moved in/Arrived.md"],
  ));
