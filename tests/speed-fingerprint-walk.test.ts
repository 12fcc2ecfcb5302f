// The CLI's freshness check walks natively on Linux (lib/platform/fingerprint-walk.c,
// compiled here by Bun's TinyCC, as a binary for another target does). Its
// fingerprint must equal the one scan.ts's own walk gives (diskFingerprintJs), bit
// for bit, on a tree built to trip it: hidden and ignored entries, symlinks in and
// out, a FIFO, names of every length the hash's branches care about, Unicode and names that are not UTF-8,
// nanosecond and pre-1970 times, a size past 4 GiB, and more folders than the
// walk keeps open at once.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { closeSync, ftruncateSync, lstatSync, mkdirSync, mkdtempSync, openSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { diskFingerprintJs } from "../lib/index/freshness";
import { fingerprintWalkKind, startFingerprintWalk } from "../lib/platform/fingerprint-walk";
import { NEVER_INDEXED_NAMES } from "../lib/vault/paths";

let root: string;
let outside: string;

const native = () => {
  const finish = startFingerprintWalk(root, NEVER_INDEXED_NAMES);
  const fp = finish?.();
  if (!fp) throw new Error("no native walk here, or no answer");
  return fp;
};

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "lettuce-fpwalk-"));
  outside = mkdtempSync(join(tmpdir(), "lettuce-fpwalk-out-"));
  writeFileSync(join(outside, "secret.md"), "outside the vault");
  let seed = 11;
  const rand = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
  const touches: string[] = [];
  const put = (rel: string, bytes: number) => {
    writeFileSync(join(root, rel), "y".repeat(bytes));
    const sec = rand(5) === 0 ? -rand(2_000_000_000) : rand(4_000_000_000);
    touches.push(`touch -h -d @${sec}.${String(rand(1_000_000_000)).padStart(9, "0")} '${join(root, rel).replaceAll("'", "'\\''")}'`);
  };
  // Every name length from 1 to 70 bytes: xxHash32's short and striped paths and each remainder.
  mkdirSync(join(root, "lengths"));
  for (let n = 1; n <= 70; n++) put(`lengths/${"abcdefghij".repeat(8).slice(0, n)}`, n * 3);
  // 300 folders: past the 256 the walk keeps open, the rest are stat'ed while listed.
  for (let d = 0; d < 300; d++) {
    mkdirSync(join(root, "many", `f${d}`), { recursive: true });
    put(`many/f${d}/note.md`, d);
  }
  for (const d of ["Café ñandú/深い/더", "a/b/c/d/e/f/g"]) mkdirSync(join(root, d), { recursive: true });
  put("Café ñandú/深い/더/Ünïcode 名前.md", 10);
  put("a/b/c/d/e/f/g/deep.md", 20);
  put("top.md", 0);
  const fd = openSync(join(root, "a", "huge.bin"), "w");
  ftruncateSync(fd, 6 * 1024 ** 3 + 3);
  closeSync(fd);
  const r = spawnSync("sh", ["-c", touches.join(" && ")], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  // What the scan never lists.
  // Node_Modules: scan.ts ignores the name in any case; the walk compared it exactly (the sync audit of 2026-12-05).
  // Recycle bins and NAS thumbnails (@eaDir, #recycle, $RECYCLE.BIN) too.
  for (const d of [".obsidian", ".hidden", "node_modules", "a/.trash", ".git/objects", "b/Node_Modules", "c/@eaDir", "#recycle", "$RECYCLE.BIN"]) mkdirSync(join(root, d), { recursive: true });
  for (const f of [".obsidian/app.json", ".hidden/x.md", "node_modules/y.md", "a/.trash/z.md", ".dotfile.md", ".git/objects/o", "a/node_modules", "b/Node_Modules/w.md", "c/@eaDir/t.md", "#recycle/old.md", "$RECYCLE.BIN/r.md"]) writeFileSync(join(root, f), "hidden");
  symlinkSync(join(outside, "secret.md"), join(root, "link.md"));
  symlinkSync(outside, join(root, "linked-folder"));
  symlinkSync(join(root, "a"), join(root, "loop"));
  spawnSync("mkfifo", [join(root, "pipe.md")]);
  // Names that are not UTF-8 (a stray byte, an overlong "/", a surrogate): scan.ts's walk cannot name
  // them, so neither walk lists them; a 4-byte character is fine.
  const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))));
  writeFileSync(bytes(root, "/bad", [0xff], "name.md"), "x");
  writeFileSync(bytes(root, "/overlong", [0xc0, 0xaf], ".md"), "x");
  writeFileSync(bytes(root, "/surrogate", [0xed, 0xa0, 0x80], ".md"), "x");
  mkdirSync(bytes(root, "/folder", [0xfe]));
  writeFileSync(bytes(root, "/folder", [0xfe], "/inside.md"), "x");
  writeFileSync(join(root, "emoji 🥬.md"), "yyyy");
  // Names no tool path can spell (lib/vault/unaddressable.ts): a backslash, a newline, a tab, DEL; a folder too.
  for (const f of ["back\\slash.md", "new\nline.md", "tab\there.md", "del\u007f.md"]) writeFileSync(join(root, f), "x");
  mkdirSync(join(root, "odd\\folder"));
  writeFileSync(join(root, "odd\\folder", "inside.md"), "x");
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

describe("the native freshness walk", () => {
  test("runs here (Linux), so the rest of this file tests it and not the fallback", () => {
    expect(startFingerprintWalk(root, NEVER_INDEXED_NAMES) !== null).toBe(process.platform === "linux");
    expect(fingerprintWalkKind()).toBe(process.platform === "linux" ? "tinycc" : "javascript");
  });

  test("gives the fingerprint scan.ts's walk gives, on a tree built to trip it", () => {
    const js = diskFingerprintJs(root);
    expect(js.count).toBe(70 + 300 + 5);
    expect(native()).toEqual(js);
  });

  test("sees an edit in place by one nanosecond-scale step, a new file, a removed one; not a new hidden or ignored one", () => {
    const before = native();
    const p = join(root, "many", "f7", "note.md");
    const st = lstatSync(p);
    utimesSync(p, st.atime, new Date(st.mtimeMs + 1));
    const edited = native();
    expect(edited.count).toBe(before.count);
    expect([edited.a, edited.b]).not.toEqual([before.a, before.b]);
    expect(edited).toEqual(diskFingerprintJs(root));

    writeFileSync(join(root, ".hidden", "new.md"), "x");
    writeFileSync(join(root, "node_modules", "new.md"), "x");
    symlinkSync(join(outside, "secret.md"), join(root, "many", "f3", "link2.md"));
    expect(native()).toEqual(edited);

    writeFileSync(join(root, "many", "f3", "added.md"), "x");
    const added = native();
    expect(added.count).toBe(before.count + 1);
    expect(added).toEqual(diskFingerprintJs(root));
    rmSync(join(root, "many", "f3", "added.md"));
    expect(native()).toEqual(edited);
  });

  test("a vault folder that is not there is no answer (the caller walks, and fails, its own way)", () => {
    expect(startFingerprintWalk(join(root, "nope"), NEVER_INDEXED_NAMES)!()).toBeNull();
  });

  test("two walks at once, and one whose result is asked for twice, are both right", () => {
    const want = diskFingerprintJs(root);
    const a = startFingerprintWalk(root, NEVER_INDEXED_NAMES)!;
    const b = startFingerprintWalk(root, NEVER_INDEXED_NAMES)!;
    expect(b()).toEqual(want);
    expect(a()).toEqual(want);
    expect(a()).toEqual(want);
  });
});
