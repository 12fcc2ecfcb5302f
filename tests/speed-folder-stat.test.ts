// The freshness check's statx walk (lib/platform/folder-stat.ts, used by
// visitVaultFiles) must list exactly what the scan's lstat walk lists, with
// the same size and the same mtimeMs to the last bit: the fingerprint compares
// them with what the indexer stored from lstatSync. The expected side here is
// the test's own walk with lstatSync, not the code under test.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { closeSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, symlinkSync, ftruncateSync, utimesSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { diskFingerprint } from "../lib/index/freshness";
import { statxAvailable } from "../lib/platform/folder-stat";
import { scanVault, visitVaultFiles } from "../lib/vault/scan";

const FILES_PER_FOLDER = 60;
let root: string;
let outside: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "lettuce-fstat-"));
  outside = mkdtempSync(join(tmpdir(), "lettuce-fstat-out-"));
  writeFileSync(join(outside, "secret.md"), "outside the vault");
  for (const d of ["a", "a/b", "a/b/c", "Café ñandú", ".obsidian", ".hidden", "node_modules", "a/.trash"]) mkdirSync(join(root, d), { recursive: true });
  // Times with all nine digits of nanoseconds, before 1970 too (utimes takes a double and
  // loses them; touch sets them exactly): the ms value's last bit depends on how it is computed.
  let seed = 7;
  const rand = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
  const touches: string[] = [];
  let i = 0;
  for (const d of ["", "a", "a/b", "a/b/c", "Café ñandú"]) {
    for (let k = 0; k < FILES_PER_FOLDER; k++) {
      const name = k === 0 ? "Ünïcode 名前.md" : k === 1 ? "space name.md" : k % 5 === 0 ? `img${k}.png` : `n${k}.md`;
      const p = join(root, d, name);
      writeFileSync(p, "x".repeat(i++ * 37));
      const sec = rand(4) === 0 ? -rand(2_000_000_000) : rand(4_000_000_000);
      touches.push(`touch -h -d @${sec}.${String(rand(1_000_000_000)).padStart(9, "0")} '${p.replaceAll("'", "'\\''")}'`);
    }
  }
  const r = spawnSync("sh", ["-c", touches.join(" && ")], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  for (const hidden of [".obsidian/app.json", ".hidden/x.md", "node_modules/y.md", "a/.trash/z.md", ".dotfile.md"]) writeFileSync(join(root, hidden), "hidden");
  // Past 4 GiB: the size's high word must be read too (sparse, no disk used).
  const fd = openSync(join(root, "a", "huge.bin"), "w");
  ftruncateSync(fd, 5 * 1024 ** 3 + 7);
  closeSync(fd);
  symlinkSync(join(outside, "secret.md"), join(root, "link.md"));
  symlinkSync(outside, join(root, "linked-folder"));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

/** The expected listing, by the test's own lstat walk and the vault's ignore rules: path → [size, mtimeMs, birth or ctime]. */
function expected(): Map<string, [number, number, number]> {
  const out = new Map<string, [number, number, number]>();
  const walk = (rel: string) => {
    for (const name of readdirSync(join(root, rel))) {
      if (name.startsWith(".") || name === "node_modules") continue;
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(join(root, r));
      if (st.isDirectory()) walk(r);
      else if (st.isFile()) out.set(r, [st.size, st.mtimeMs, st.birthtimeMs || st.ctimeMs]);
    }
  };
  walk("");
  return out;
}

describe("the statx folder walk", () => {
  test("runs here (Linux with glibc), so the rest of this file tests it and not the fallback", () => {
    expect(statxAvailable()).toBe(process.platform === "linux");
  });

  test("lists the same files with the same size and mtimeMs as lstatSync, nothing hidden or behind a symlink", () => {
    const got = new Map<string, [number, number]>();
    visitVaultFiles(root, (rel, size, mtimeMs) => got.set(rel, [size, mtimeMs]));
    const want = expected();
    expect(want.size).toBe(5 * FILES_PER_FOLDER + 1);
    expect([...want.values()].filter(([, m]) => m < 0).length).toBeGreaterThan(10);
    expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
    for (const [rel, v] of want) expect(Object.is(got.get(rel)![1], v[1]) && got.get(rel)![0] === v[0]).toBe(true);
    expect(got.get("a/huge.bin")![0]).toBe(5 * 1024 ** 3 + 7);
    expect([...got.keys()].some((k) => k.includes("secret") || k.startsWith("linked-folder") || k.startsWith("."))).toBe(false);
  });

  test("the indexer's scan lists the same entries, with the birth (or change) time lstatSync gives, folders in readdir order", () => {
    const listing = scanVault(root);
    const fromScan = new Map([...listing.notes, ...listing.attachments].map((e) => [e.path, [e.size, e.mtimeMs, e.ctimeMs] as [number, number, number]]));
    expect(fromScan).toEqual(expected());
    // Depth first in readdir order (a cold scan's order decides new notes' ids).
    const folders: string[] = [];
    const walk = (rel: string) => {
      for (const name of readdirSync(join(root, rel))) {
        const r = rel ? `${rel}/${name}` : name;
        if (!name.startsWith(".") && name !== "node_modules" && lstatSync(join(root, r)).isDirectory()) folders.push(r), walk(r);
      }
    };
    walk("");
    expect(listing.folders).toEqual(folders);
    expect(folders.length).toBe(4);
  });

  test("a changed mtime by a nanosecond-scale step changes the fingerprint", () => {
    const before = diskFingerprint(root);
    const p = join(root, "a", "b", "n2.md");
    const st = lstatSync(p);
    utimesSync(p, st.atime, new Date(st.mtimeMs + 1));
    const after = diskFingerprint(root);
    expect(after.count).toBe(before.count);
    expect([after.a, after.b]).not.toEqual([before.a, before.b]);
  });
});
