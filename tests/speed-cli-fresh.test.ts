// `lettuce search`'s freshness check (issue 15, part 7), through the real CLI
// process: on an unchanged vault it reads the index without indexing or
// writing anything; every kind of change on disk is still seen by the next
// search, including the ones a check of folder mtimes would miss; a running
// `serve` is trusted to keep the index current.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, runLettuce, spawnLettuce } from "./helpers/cli";
import { indexMeta } from "./helpers/index-meta";
import { copyVault, waitFor } from "./helpers/server";

setDefaultTimeout(60_000);

let vault: string;
beforeAll(async () => {
  vault = copyVault();
  mkdirSync(join(vault, "Deep", "er"), { recursive: true });
  writeFileSync(join(vault, "Deep", "er", "Probe.md"), "# Probe\n\nthe word is alphaword today\n");
  writeFileSync(join(vault, "Deep", "Café ñandú.md"), "# Café\n\nunicodeprobe lives here\n");
  expect((await runLettuce(["index", vault, "--json"])).code).toBe(0);
});
afterAll(() => {
  if (vault) rmSync(vault, { recursive: true, force: true });
});

const meta = (key: string) => indexMeta(vault, key);

async function search(q: string): Promise<{ items: { path: string }[]; total: number }> {
  const r = await runLettuce(["search", vault, q, "--json"]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}
const paths = async (q: string) => (await search(q)).items.map((h) => h.path).sort();

/** Run `fn`, then put the mtimes of these folders back, so that only the files' own stats can tell. */
function keepingFolderMtimes(folders: string[], fn: () => void): void {
  const before = folders.map((f) => statSync(f));
  fn();
  folders.forEach((f, i) => utimesSync(f, before[i]!.atime, before[i]!.mtime));
}

/** The index files' bytes and mtimes: a search that wrote nothing leaves them as they were. */
function indexFiles(): string {
  return ["index.db", "fts.db"].map((f) => {
    const st = statSync(join(vault, ".lettuce", f));
    return `${f}:${st.size}:${st.mtimeMs}`;
  }).join(" ");
}

describe("lettuce search, no serve: an exact check", () => {
  test("unchanged vault, searched twice: the answer is right and the index files are not touched", async () => {
    expect(await paths("alphaword")).toEqual(["Deep/er/Probe.md"]);
    const before = indexFiles();
    const gen = meta("gen");
    // A non-ASCII file name takes the same fast path (its fingerprint on disk and in the index agree).
    expect(await paths("unicodeprobe")).toEqual(["Deep/Café ñandú.md"]);
    expect(indexFiles()).toBe(before);
    expect(meta("gen")).toBe(gen);
  });

  test("a note saved in place, same size, new mtime, folder mtimes untouched: the next search sees it", async () => {
    const file = join(vault, "Deep", "er", "Probe.md");
    const oldText = readFileSync(file, "utf8");
    const newText = oldText.replace("alphaword", "betaworda");
    expect(newText.length).toBe(oldText.length);
    keepingFolderMtimes([vault, join(vault, "Deep"), join(vault, "Deep", "er")], () => {
      writeFileSync(file, newText);
      const st = statSync(file);
      utimesSync(file, st.atime, new Date(st.mtimeMs + 3000));
    });
    expect(statSync(file).size).toBe(Buffer.byteLength(oldText));
    expect(await paths("betaworda")).toEqual(["Deep/er/Probe.md"]);
    expect(await paths("alphaword")).toEqual([]);
  });

  test("a note saved in place with the same size and its mtime put back (a sync tool): the status change time tells", async () => {
    const file = join(vault, "Deep", "er", "Probe.md");
    const oldText = readFileSync(file, "utf8");
    const newText = oldText.replace("betaworda", "gammaword");
    expect(newText.length).toBe(oldText.length);
    keepingFolderMtimes([vault, join(vault, "Deep"), join(vault, "Deep", "er")], () => {
      const st = statSync(file);
      writeFileSync(file, newText);
      utimesSync(file, st.atime, st.mtime);
    });
    expect(await paths("gammaword")).toEqual(["Deep/er/Probe.md"]);
    expect(await paths("betaworda")).toEqual([]);
    // And back, the same way (the tests below expect the old text).
    keepingFolderMtimes([vault, join(vault, "Deep"), join(vault, "Deep", "er")], () => {
      const st = statSync(file);
      writeFileSync(file, oldText);
      utimesSync(file, st.atime, st.mtime);
    });
    expect(await paths("betaworda")).toEqual(["Deep/er/Probe.md"]);
  });

  test("a note renamed (same size and mtime, new path), a note deleted, a note added: each seen", async () => {
    const from = join(vault, "Deep", "er", "Probe.md");
    const to = join(vault, "Deep", "er", "Renamed.md");
    keepingFolderMtimes([join(vault, "Deep", "er")], () => renameSync(from, to));
    expect(await paths("betaworda")).toEqual(["Deep/er/Renamed.md"]);

    keepingFolderMtimes([join(vault, "Deep", "er")], () => unlinkSync(to));
    expect(await paths("betaworda")).toEqual([]);

    keepingFolderMtimes([join(vault, "Deep")], () => writeFileSync(join(vault, "Deep", "New one.md"), "# New\n\ngammaword\n"));
    expect(await paths("gammaword")).toEqual(["Deep/New one.md"]);
  });

  test("an attachment added or changed is indexed before the search answers", async () => {
    const gen = meta("gen");
    writeFileSync(join(vault, "Deep", "diagram.png"), "not really a png");
    await search("gammaword");
    const after = meta("gen");
    expect(after).not.toBe(gen);
    const db = new Database(join(vault, ".lettuce", "index.db"), { readonly: true });
    try {
      expect(db.query("SELECT size FROM files WHERE path = 'Deep/diagram.png'").get()).toEqual({ size: 16 });
    } finally {
      db.close();
    }
  });

  test("a damaged or forged freshness cache costs time, never a stale answer", async () => {
    const cache = join(vault, ".lettuce", "fresh.json");
    // The search after an index change computes the fingerprint of the new generation and keeps it.
    await search("gammaword");
    expect(JSON.parse(readFileSync(cache, "utf8")).gen).toBe(meta("gen"));
    for (const junk of ["{not json", JSON.stringify({ v: 1, gen: meta("gen"), count: 1, a: 2, b: 3 }), "[]", '{"v":1,"gen":null}']) {
      const file = join(vault, "Deep", "New one.md");
      const text = readFileSync(file, "utf8").replace(/\w+word\w*/, `w${Math.random().toString(36).slice(2, 9)}word`);
      writeFileSync(cache, junk);
      keepingFolderMtimes([join(vault, "Deep")], () => {
        writeFileSync(file, text);
        utimesSync(file, new Date(), new Date(Date.now() + 7000 + Math.random() * 1000));
      });
      const word = /(w\w+word)/.exec(text)![1]!;
      expect(await paths(word)).toEqual(["Deep/New one.md"]);
    }
  });
});

describe("lettuce search while a serve owns the vault", () => {
  test("the index is read as the server keeps it: no scan from the CLI, and nothing written", async () => {
    // A presence file naming a live process other than the CLI (this test runner) stands for a serve
    // whose watcher has not caught up yet: the CLI must trust it and not scan.
    const presence = join(vault, ".lettuce", "serve.json");
    writeFileSync(presence, JSON.stringify({ pid: process.pid, url: "http://127.0.0.1:1/mcp", startedAt: new Date().toISOString() }));
    try {
      writeFileSync(join(vault, "Deep", "Unseen.md"), "# Unseen\n\ndeltaword\n");
      const before = indexFiles();
      expect(await paths("deltaword")).toEqual([]);
      expect(await paths("unicodeprobe")).toEqual(["Deep/Café ñandú.md"]);
      expect(indexFiles()).toBe(before);
    } finally {
      rmSync(presence, { force: true });
    }
    // Without the server, the next search scans and finds it.
    expect(await paths("deltaword")).toEqual(["Deep/Unseen.md"]);
  });

  test("with a real serve, a note written on disk is found once its watcher has indexed it", async () => {
    const serve = spawnLettuce(["serve", vault, "--port", String(freePort())]);
    try {
      await serve.waitForStdout(/MCP endpoint: /);
      writeFileSync(join(vault, "Deep", "Served.md"), "# Served\n\nepsilonword\n");
      await waitFor(async () => (await paths("epsilonword")).length === 1, { timeoutMs: 20_000, intervalMs: 200, what: "the served note in a CLI search" });
      expect(await paths("epsilonword")).toEqual(["Deep/Served.md"]);
    } finally {
      await serve.stop();
    }
  });
});
