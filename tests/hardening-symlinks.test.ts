// Items 4 and 6 of the hardening issue: symlinks are never followed — not by
// the start-up scan, not by the watcher while the server runs, not by any
// tool — and a folder swapped for a symlink while agents write never sends a
// file (or a temp file) outside the vault.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { scanVault } from "../lib/vault/scan";
import { VaultContext } from "../lib/vault-context";
import { BUN, freePort, runLettuce, spawnLettuce } from "./helpers/cli";
import { copyVault, startTestServer, tempDir, waitFor, type TestServer } from "./helpers/server";
import { walkVault } from "./helpers/vault-facts";

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, d.name);
    if (d.isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

describe("links created while the server runs are not followed", () => {
  let s: TestServer;
  let outside: string;
  beforeAll(async () => {
    outside = tempDir("lettuce-outside-");
    mkdirSync(join(outside, "dir"));
    writeFileSync(join(outside, "dir/stolen.md"), "# Stolen\n\noutsidefoldermarker\n");
    writeFileSync(join(outside, "dir/stolen.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    writeFileSync(join(outside, "secret.md"), "# Secret\n\noutsidefilemarker\n");
    s = await startTestServer({ watch: true });
    mkdirSync(join(s.root, ".git"));
    writeFileSync(join(s.root, ".git/config"), "[core]\n\tgitconfigmarker = 1\n");
  });
  afterAll(async () => {
    await s?.close();
    rmSync(outside, { recursive: true, force: true });
  });

  test("a folder link, a note link, a link to .git and a link inside the vault", async () => {
    symlinkSync(join(outside, "dir"), join(s.root, "linkdir"));
    symlinkSync(join(outside, "secret.md"), join(s.root, "Inbox/secret.md"));
    symlinkSync(join(s.root, ".git"), join(s.root, "gitlink"));
    symlinkSync(join(s.root, "Projects"), join(s.root, "Projects-alias"));
    // A real note created after the links: once it is indexed, the watcher has seen the links too.
    writeFileSync(join(s.root, "Inbox/after-links.md"), "# After\n\nafterlinksmarker\n");
    await waitFor(async () => (await s.call("search", { query: "afterlinksmarker" }, "read")).total === 1, { what: "the watcher" });
    await s.vault.settle();

    for (const m of ["outsidefoldermarker", "outsidefilemarker", "gitconfigmarker"]) {
      expect((await s.call("search", { query: m }, "read")).total, m).toBe(0);
    }
    const notes = (await s.call("list_notes", { limit: 1000 }, "read")).items.map((n: any) => n.path);
    const atts = (await s.call("list_attachments", { limit: 1000 }, "read")).items.map((a: any) => a.path);
    for (const p of [...notes, ...atts]) expect(p, p).not.toMatch(/^(linkdir|gitlink|Projects-alias)\/|^Inbox\/secret\.md$/);
    expect(await s.call("list_folders", {}, "read")).not.toEqual(expect.arrayContaining(["linkdir"]));

    for (const [tool, path] of [
      ["read_attachment", "gitlink/config"],
      ["read_attachment", "linkdir/stolen.png"],
      ["read_note", "linkdir/stolen.md"],
      ["read_note", "Inbox/secret.md"],
      ["read_note", "Projects-alias/Lettuce.md"],
      ["list_notes", "linkdir"],
      ["list_attachments", "gitlink"],
    ] as const) {
      const res: any = await s.callRaw(tool, { path }, "read");
      expect(res, `${tool} ${path}`).toMatchObject({ isError: true, kind: "path-invalid" });
      expect(res.content[0].text).not.toMatch(/marker/);
    }
  });

  test("writes refuse to go through a link", async () => {
    for (const path of ["linkdir/new.md", "Projects-alias/new.md", "gitlink/hooks/x.md"]) {
      expect(await s.callRaw("write_note", { path, content: "# x\n" }), path).toMatchObject({ isError: true, kind: "path-invalid" });
    }
    expect(await s.callRaw("write_note", { path: "Inbox/secret.md", content: "# x\n", overwrite: true })).toMatchObject({ isError: true, kind: "path-invalid" });
    expect(readFileSync(join(outside, "secret.md"), "utf8")).toContain("outsidefilemarker");
    expect(filesUnder(outside).sort()).toEqual([join(outside, "dir/stolen.md"), join(outside, "dir/stolen.png"), join(outside, "secret.md")].sort());
  });

  test("a real folder replaced by a link drops out of the index", async () => {
    mkdirSync(join(s.root, "Swapped"));
    writeFileSync(join(s.root, "Swapped/inside.md"), "# Inside\n\nswappedinsidemarker\n");
    await waitFor(async () => (await s.call("search", { query: "swappedinsidemarker" }, "read")).total === 1, { what: "the real folder" });
    rmSync(join(s.root, "Swapped"), { recursive: true });
    mkdirSync(join(outside, "Swapped"));
    writeFileSync(join(outside, "Swapped/inside.md"), "# Inside\n\nswappedinsidemarker\n");
    symlinkSync(join(outside, "Swapped"), join(s.root, "Swapped"));
    await waitFor(async () => (await s.call("search", { query: "swappedinsidemarker" }, "read")).total === 0, { what: "the folder to drop out" });
    expect(await s.callRaw("read_note", { path: "Swapped/inside.md" }, "read")).toMatchObject({ isError: true, kind: "path-invalid" });
  });
});

describe("a folder swapped for a symlink during writes", () => {
  let s: TestServer;
  let outside: string;
  beforeAll(async () => {
    outside = tempDir("lettuce-outside-");
    s = await startTestServer();
    mkdirSync(join(s.root, "Swap"));
  });
  afterAll(async () => {
    await s?.close();
    rmSync(outside, { recursive: true, force: true });
  });

  test("no acknowledged write, and no temp file, lands outside the vault", async () => {
    // Another process swaps Swap/ with a link to `outside`, back and forth, as fast as it can. It uses an
    // atomic exchange, so that Swap is always either the real folder or the link, never missing.
    symlinkSync(outside, join(s.root, "Swap.link"));
    const swapper = Bun.spawn(
      [
        BUN,
        "-e",
        `const { dlopen, FFIType } = require("bun:ffi");
         const { symbols } = dlopen("libc.so.6", { renameat2: { args: [FFIType.i32, FFIType.ptr, FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 } });
         const [a, b] = process.argv.slice(1).map((p) => Buffer.from(p + "\\0"));
         const end = Date.now() + 30000;
         let n = 0;
         while (Date.now() < end) if (symbols.renameat2(-100, a, -100, b, 2) === 0) n++;`,
        join(s.root, "Swap"),
        join(s.root, "Swap.link"),
      ],
      { stdout: "ignore", stderr: "ignore" },
    );
    const acked: { path: string; content: string }[] = [];
    let refused = 0;
    try {
      const clients = await Promise.all([0, 1, 2].map(() => s.client("write")));
      await Promise.all(
        clients.map(async (c, k) => {
          for (let i = 0; i < 60; i++) {
            const path = `Swap/n${k}-${i}.md`;
            const content = `# n${k}-${i}\n`;
            const res: any = await c.callTool({ name: "write_note", arguments: { path, content, overwrite: true } });
            if (res.isError) {
              refused++;
              expect(res.kind, res.content?.[0]?.text).toMatch(/path-invalid|conflict/);
            } else acked.push({ path, content });
          }
        }),
      );
    } finally {
      swapper.kill();
      await swapper.exited;
    }
    // Whichever way round it stopped, put the real folder back at Swap.
    if (lstatSync(join(s.root, "Swap")).isSymbolicLink()) {
      rmSync(join(s.root, "Swap"));
      renameSync(join(s.root, "Swap.link"), join(s.root, "Swap"));
    } else rmSync(join(s.root, "Swap.link"));
    expect(filesUnder(outside)).toEqual([]);
    for (const a of acked) expect(readFileSync(join(s.root, a.path), "utf8"), a.path).toBe(a.content);
    const temps = filesUnder(s.root).filter((p) => p.includes(".lettuce-tmp"));
    expect(temps).toEqual([]);
    console.log(`symlink swap: ${acked.length} writes acknowledged, ${refused} refused, 0 outside the vault`);
    expect(acked.length + refused).toBe(180);
    // The attack really happened: some writes met the link.
    expect(refused).toBeGreaterThan(0);
  }, 60_000);
});

describe("a vault reached through a link", () => {
  const made: string[] = [];
  afterAll(() => {
    for (const d of made) rmSync(d, { recursive: true, force: true });
  });

  test("index, search and serve by the link see every note (the root is resolved; links inside stay unfollowed)", async () => {
    const real = copyVault();
    const dir = tempDir("lettuce-link-");
    made.push(real, dir);
    const link = join(dir, "Notes");
    symlinkSync(real, link);
    const count = walkVault(real).notes.length;
    const indexed = JSON.parse((await runLettuce(["index", link, "--json"])).stdout.trim().split("\n").pop()!);
    expect(indexed).toMatchObject({ notes: count, deleted: 0 });
    // Again by the real path and by the link: nothing changed, nothing deleted.
    for (const p of [real, link]) expect(JSON.parse((await runLettuce(["index", p, "--json"])).stdout.trim().split("\n").pop()!)).toMatchObject({ notes: count, changed: 0, deleted: 0 });
    const found = JSON.parse((await runLettuce(["search", link, "Lettuce", "--json"])).stdout);
    expect(found.total).toBeGreaterThan(0);
    const v = VaultContext.open(link);
    try {
      expect(v.root).toBe(realpathSync(real));
    } finally {
      v.close();
    }
    const srv = spawnLettuce(["serve", link, "--port", String(freePort())], { env: { LETTUCE_EMBED_PROVIDER: "none" } });
    try {
      expect(Number((await srv.waitForStdout(/Index current: (\d+) notes/))[1])).toBe(count);
    } finally {
      await srv.stop();
    }
  });

  test("a root that cannot be listed is an indexing error, never an empty vault: the index keeps its notes", async () => {
    const real = copyVault();
    const dir = tempDir("lettuce-gone-");
    made.push(real, dir);
    const v = VaultContext.open(real);
    try {
      await v.indexer.fullScan();
      const before = (v.indexDb.query("SELECT count(*) AS n FROM notes").get() as { n: number }).n;
      expect(before).toBeGreaterThan(10);
      // The folder moves away (an unmounted drive, a sync client's rename) and a link takes its place.
      renameSync(real, join(dir, "moved"));
      symlinkSync(join(dir, "moved"), real);
      expect(() => scanVault(real)).toThrow(/cannot list the vault folder/);
      await expect(v.indexer.fullScan()).rejects.toThrow(/cannot list the vault folder/);
      // The watcher's path too: every changed path would look deleted.
      const some = (v.indexDb.query("SELECT path FROM notes ORDER BY path LIMIT 3").all() as { path: string }[]).map((r) => r.path);
      await expect(v.indexer.update([...some, "Projects"])).rejects.toThrow(/cannot list the vault folder/);
      rmSync(real);
      await expect(v.indexer.fullScan()).rejects.toThrow(/cannot list the vault folder/);
      await expect(v.indexer.update(some)).rejects.toThrow(/cannot list the vault folder/);
      expect((v.indexDb.query("SELECT count(*) AS n FROM notes").get() as { n: number }).n).toBe(before);
      // Back in place: the same calls see an unchanged vault.
      renameSync(join(dir, "moved"), real);
      expect((await v.indexer.update([...some, "Projects"])).deleted).toEqual([]);
      expect((await v.indexer.fullScan()).deleted).toEqual([]);
      expect((v.indexDb.query("SELECT count(*) AS n FROM notes").get() as { n: number }).n).toBe(before);
    } finally {
      v.close();
    }
  });
});
