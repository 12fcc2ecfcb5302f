// The CLI's fast paths (issue 15, part 7), through the real `lettuce` process:
// a search on an unchanged vault runs no index transaction, yet an edit made
// in place (which leaves the folder's mtime alone) is still seen; commands load
// their modules only when run.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync, utimesSync, writeFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { runLettuce } from "./helpers/cli";
import { indexMeta } from "./helpers/index-meta";
import { copyVault } from "./helpers/server";

setDefaultTimeout(60_000);

let vault: string;
beforeAll(async () => {
  vault = copyVault();
  expect((await runLettuce(["index", vault, "--json"])).code).toBe(0);
});
afterAll(() => {
  if (vault) rmSync(vault, { recursive: true, force: true });
});

const meta = (key: string) => indexMeta(vault, key);
const generation = () => meta("gen");

describe("lettuce search on an indexed vault", () => {
  test("unchanged: answers without writing the index", async () => {
    const before = generation();
    const indexedAt = meta("indexedAt");
    expect(before).not.toBeNull();
    expect(indexedAt).not.toBeNull();
    const r = await runLettuce(["search", vault, "lettuce", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).total).toBeGreaterThan(0);
    expect(generation()).toBe(before);
    expect(meta("indexedAt")).toBe(indexedAt);
  });

  // Both walks: the native one (Linux) and the JavaScript one every other platform runs.
  for (const [walk, env] of [["native walk", {}], ["JavaScript walk", { LETTUCE_NO_STATX: "1" }]] as const) {
    test(`an edit in place, folder mtime untouched, is found by the next search (${walk})`, async () => {
      const dir = vault;
      const dirStat = statSync(dir);
      const note = join(vault, `freshness-probe-${walk.split(" ")[0]}.md`);
      // A new note changes the folder; put its mtime back so only the file's own stat can tell.
      writeFileSync(note, "# Probe\n\nnothing yet\n");
      utimesSync(dir, dirStat.atime, dirStat.mtime);
      expect(JSON.parse((await runLettuce(["search", vault, "nothing yet", "--json"], { env })).stdout).items.map((h: { path: string }) => h.path)).toContain(note.slice(vault.length + 1));
      const word = `zqx${Date.now().toString(36)}`;
      writeFileSync(note, `# Probe\n\nnow it says ${word}\n`);
      // Same size class, new mtime on the file only (as an editor saving in place does).
      utimesSync(note, new Date(), new Date(Date.now() + 5000));
      utimesSync(dir, dirStat.atime, dirStat.mtime);
      const r = await runLettuce(["search", vault, word, "--json"], { env });
      expect(r.code).toBe(0);
      const page = JSON.parse(r.stdout) as { items: { path: string }[]; total: number };
      expect(page.items.map((h) => h.path)).toEqual([note.slice(vault.length + 1)]);
    });
  }

  test("--help says what the freshness check looks at", async () => {
    const r = await runLettuce(["search", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/size, modification time and status change time/);
  });

  test("a malformed query is no error and no crash", async () => {
    const r = await runLettuce(["search", vault, '"unclosed AND OR (', "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).items).toEqual([]);
  });
});
