// Platform details that break binaries away from Linux, tested on Linux:
// Windows paths (through the path helpers with Windows rules), case-insensitive
// file systems (through the real server, with the file system's case rule
// overridden), line endings on write, and the per-user cache folder that a
// native library is loaded from.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { caseTwins, isCaseInsensitive } from "../lib/platform/case";
import { secureDir, unpackToCache, userCacheRoot, UnsafeCacheError } from "../lib/platform/cache-dir";
import { embeddedRoot, workerEntry } from "../lib/platform/embedded";
import { nativeToVault, platformPathProblem, POSIX, toAbsolute, toVaultRelative, WINDOWS } from "../lib/platform/paths";
import { startTestServer, tempDir } from "./helpers/server";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("Windows paths (path helpers with Windows rules)", () => {
  const ROOT = "C:\\Users\\Ada Lovelace\\Notes";

  test("agent paths with '/' land under a C:\\ vault root, and come back as '/' paths", () => {
    expect(toAbsolute(ROOT, "Projects/Lettuce.md", WINDOWS)).toBe("C:\\Users\\Ada Lovelace\\Notes\\Projects\\Lettuce.md");
    expect(toAbsolute(ROOT, "", WINDOWS)).toBe(ROOT);
    expect(toAbsolute("C:/Users/Ada Lovelace/Notes/", "a/b/c.md", WINDOWS)).toBe("C:\\Users\\Ada Lovelace\\Notes\\a\\b\\c.md");
    expect(toVaultRelative(ROOT, "C:\\Users\\Ada Lovelace\\Notes\\Projects\\Lettuce.md", WINDOWS)).toBe("Projects/Lettuce.md");
    expect(toVaultRelative(ROOT, ROOT, WINDOWS)).toBe("");
    // Windows compares paths without regard to case (and drive letters too).
    expect(toVaultRelative(ROOT, "c:\\users\\ada lovelace\\notes\\Inbox\\x.md", WINDOWS)).toBe("Inbox/x.md");
    // UNC roots.
    expect(toVaultRelative("\\\\nas\\share\\Notes", "\\\\nas\\share\\Notes\\a\\b.md", WINDOWS)).toBe("a/b.md");
    // A watcher or readdir name with backslashes is a '/' path on Windows; on POSIX a backslash belongs to the name.
    expect(nativeToVault("Projects\\Lettuce.md", WINDOWS)).toBe("Projects/Lettuce.md");
    expect(nativeToVault("odd\\name.md", POSIX)).toBe("odd\\name.md");
  });

  test("anything outside the vault is outside: parents, siblings sharing a prefix, other drives, UNC elsewhere", () => {
    for (const abs of [
      "C:\\Users\\Ada Lovelace",
      "C:\\Users\\Ada Lovelace\\Notes-private\\secret.md",
      "C:\\Users\\Ada Lovelace\\Notes2",
      "D:\\Users\\Ada Lovelace\\Notes\\a.md",
      "\\\\nas\\share\\Notes\\a.md",
      "C:\\Windows\\win.ini",
    ]) {
      expect(toVaultRelative(ROOT, abs, WINDOWS), abs).toBeNull();
    }
    expect(toVaultRelative("/home/ada/Notes", "/home/ada/Notes-private/x.md", POSIX)).toBeNull();
    expect(toVaultRelative("/home/ada/Notes", "/home/ada/Notes/..foo/x.md", POSIX)).toBe("..foo/x.md");
  });

  test("names Windows would read as something else are refused: devices, streams, trailing dots and spaces, 8.3 aliases", () => {
    const bad = [
      "CON.md",
      "Inbox/nul.md",
      "aux",
      "Projects/com1.md",
      "lpt9.txt",
      "conin$.md",
      "note.md:secret",
      "note.md::$DATA",
      "sources./paper.md", // would be sources/paper.md: around the immutable prefix
      "sources /paper.md",
      "Inbox/idea.md.",
      "SOURCE~1/paper.md",
      'what"s.md',
      "a<b.md",
      "a|b.md",
      "why?.md",
      "star*.md",
    ];
    for (const p of bad) expect(platformPathProblem(p, WINDOWS), p).not.toBeNull();
    const good = ["Projects/Lettuce.md", "console.md", "Inbox/null hypothesis.md", "com10.md", "a.b.c.md", "Ünïcödé/naïve café.md", "tilde~in name.md", "sources/paper.md"];
    for (const p of good) expect(platformPathProblem(p, WINDOWS), p).toBeNull();
    // On Linux and macOS those are ordinary names.
    for (const p of bad) expect(platformPathProblem(p, POSIX)).toBeNull();
  });

  test("embedded files are found under Bun's Windows root as under the POSIX one", () => {
    expect(embeddedRoot("file:///B:/~BUN/root/lettuce.exe")).toBe("B:/~BUN/root/");
    expect(embeddedRoot("file:///$bunfs/root/lettuce")).toBe("/$bunfs/root/");
    expect(embeddedRoot("file:///work/lettuce/lib/x.ts")).toBeNull();
    expect(workerEntry("lib/index/parse-worker.ts", "file:///B:/~BUN/root/lettuce.exe", "./parse-worker.ts")).toBe("B:/~BUN/root/lib/index/parse-worker.ts");
    expect(workerEntry("lib/index/parse-worker.ts", "file:///$bunfs/root/lettuce", "./parse-worker.ts")).toBe("/$bunfs/root/lib/index/parse-worker.ts");
    expect(workerEntry("lib/index/parse-worker.ts", "file:///repo/lib/index/parse-pool.ts", "./parse-worker.ts")).toBe("file:///repo/lib/index/parse-worker.ts");
  });

  test("the per-user cache folder: LOCALAPPDATA on Windows, Library/Caches on macOS, XDG on Linux", () => {
    expect(userCacheRoot("win32", { LOCALAPPDATA: "C:\\Users\\Ada\\AppData\\Local" }, "C:\\Users\\Ada")).toBe("C:\\Users\\Ada\\AppData\\Local\\lettuce\\cache");
    expect(userCacheRoot("win32", {}, "C:\\Users\\Ada")).toBe("C:\\Users\\Ada\\AppData\\Local\\lettuce\\cache");
    expect(userCacheRoot("darwin", {}, "/Users/ada")).toBe("/Users/ada/Library/Caches/lettuce");
    expect(userCacheRoot("linux", { XDG_CACHE_HOME: "/home/ada/.xdg" }, "/home/ada")).toBe("/home/ada/.xdg/lettuce");
    expect(userCacheRoot("linux", { XDG_CACHE_HOME: "relative/ignored" }, "/home/ada")).toBe("/home/ada/.cache/lettuce");
    expect(userCacheRoot("linux", { LETTUCE_CACHE_DIR: "/srv/lettuce-cache" }, "/home/ada")).toBe("/srv/lettuce-cache");
  });
});

describe("the cache a native library is loaded from", () => {
  const LIB = new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 1, 2, 3, 4, 5]);

  test("a fresh cache: folder 0700, file 0600 with exactly the embedded bytes; a planted copy or symlink is replaced", () => {
    const base = tempDir("lettuce-cache-");
    dirs.push(base);
    const dir = join(base, "lettuce", "0.1.0-linux-x64");
    const p = unpackToCache("vec0.so", LIB, dir);
    expect(readFileSync(p)).toEqual(Buffer.from(LIB));
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(p).mode & 0o777).toBe(0o600);
    writeFileSync(p, "planted");
    expect(readFileSync(unpackToCache("vec0.so", LIB, dir))).toEqual(Buffer.from(LIB));
    const elsewhere = join(base, "evil.so");
    writeFileSync(elsewhere, "evil");
    rmSync(p);
    symlinkSync(elsewhere, p);
    const again = unpackToCache("vec0.so", LIB, dir);
    expect(lstatSync(again).isSymbolicLink()).toBe(false);
    expect(readFileSync(again)).toEqual(Buffer.from(LIB));
    expect(readFileSync(elsewhere, "utf8")).toBe("evil"); // written around, never through
    expect(readdirSync(dir).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });

  test("a cache folder others could have made or can write is refused, never used", () => {
    const base = tempDir("lettuce-cache-");
    dirs.push(base);
    // World-writable.
    const open = join(base, "open");
    mkdirSync(open, { mode: 0o700 });
    chmodSync(open, 0o777);
    expect(() => unpackToCache("vec0.so", LIB, open)).toThrow(UnsafeCacheError);
    expect(existsSync(join(open, "vec0.so"))).toBe(false);
    // Owned by another user (this test runs as root in CI; elsewhere chown is refused and this part is moot).
    const theirs = join(base, "theirs");
    mkdirSync(theirs, { mode: 0o700 });
    let chowned = true;
    try {
      chownSync(theirs, 65534, 65534);
    } catch {
      chowned = false;
    }
    if (chowned) expect(() => unpackToCache("vec0.so", LIB, theirs)).toThrow(/belongs to another user/);
    // A symlink where the folder should be (pre-created in a shared place).
    const target = join(base, "target");
    mkdirSync(target, { mode: 0o700 });
    const link = join(base, "link");
    symlinkSync(target, link);
    expect(() => secureDir(link)).toThrow(/symbolic link/);
    // A folder whose parent others can write (and is not sticky like /tmp): they could swap it.
    const shared = join(base, "shared");
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    expect(() => secureDir(join(shared, "lettuce"))).toThrow(/writable by other users/);
    // /tmp-like: world-writable but sticky, so what is ours stays ours.
    chmodSync(shared, 0o1777);
    expect(() => secureDir(join(shared, "lettuce2"))).not.toThrow();
  });
});

describe("case-insensitive file systems", () => {
  test("the probe finds this Linux file system case-sensitive; LETTUCE_FS_CASE overrides it", () => {
    const root = tempDir();
    dirs.push(root);
    mkdirSync(join(root, ".lettuce"));
    expect(isCaseInsensitive(root, {})).toBe(false);
    expect(readdirSync(join(root, ".lettuce"))).toEqual([]); // the probe cleans up
    expect(isCaseInsensitive(root, { LETTUCE_FS_CASE: "insensitive" })).toBe(true);
    expect(caseTwins(["A/Idea.md", "a/idea.md", "A/Other.md", "caf\u00e9.md", "cafe\u0301.md"])).toEqual([["A/Idea.md", "a/idea.md"], ["cafe\u0301.md", "caf\u00e9.md"]]);
  });

  test("an agent writing a note in another letter case reaches the note on disk, not a second one (what macOS and Windows need)", async () => {
    {
      const s = await startTestServer();
      try {
        const before = readFileSync(join(s.root, "Garden/Frost Dates.md"), "utf8");
        const refused = await s.callRaw("write_note", { path: "garden/frost dates.md", content: "# Frost\n" });
        expect(refused.isError).toBe(true);
        expect(readFileSync(join(s.root, "Garden/Frost Dates.md"), "utf8")).toBe(before);
        await s.call("write_note", { path: "GARDEN/frost dates.md", content: "# Frost Dates\n\nReplaced.\n", overwrite: true });
        expect(readFileSync(join(s.root, "Garden/Frost Dates.md"), "utf8")).toBe("# Frost Dates\n\nReplaced.\n");
        // A new note in an existing folder goes into that folder as spelled on disk.
        await s.call("write_note", { path: "garden/Greenhouse.md", content: "# Greenhouse\n" });
        expect(existsSync(join(s.root, "garden"))).toBe(false);
        expect(readFileSync(join(s.root, "Garden/Greenhouse.md"), "utf8")).toBe("# Greenhouse\n");
        const listed = (await s.call("list_notes", { path: "Garden", limit: 100 })).items.map((i: { path: string }) => i.path);
        expect(listed.filter((p: string) => p.toLowerCase() === "garden/frost dates.md")).toEqual(["Garden/Frost Dates.md"]);
        expect(listed).toContain("Garden/Greenhouse.md");
      } finally {
        await s.close();
      }
    }
  });
});

test("two notes differing only in case (possible on Linux): each is read and written as itself", async () => {
  const s = await startTestServer();
  try {
    writeFileSync(join(s.root, "Inbox/Idea.md"), "# Idea\n\nupper\n");
    writeFileSync(join(s.root, "Inbox/idea.md"), "# idea\n\nlower\n");
    await s.vault.indexer.update(["Inbox/Idea.md", "Inbox/idea.md"]);
    expect((await s.call("read_note", { path: "Inbox/Idea.md" })).content).toContain("upper");
    expect((await s.call("read_note", { path: "Inbox/idea.md" })).content).toContain("lower");
    await s.call("write_note", { path: "Inbox/idea.md", content: "# idea\n\nchanged\n", overwrite: true });
    expect(readFileSync(join(s.root, "Inbox/Idea.md"), "utf8")).toBe("# Idea\n\nupper\n");
    expect(readFileSync(join(s.root, "Inbox/idea.md"), "utf8")).toBe("# idea\n\nchanged\n");
  } finally {
    await s.close();
  }
});

test("line endings: a CRLF note stays CRLF through patch_section and append-style edits", async () => {
  const s = await startTestServer();
  try {
    const crlf = "# Windows note\r\n\r\n## Log\r\n\r\nfirst\r\n\r\n## End\r\n\r\nbye\r\n";
    writeFileSync(join(s.root, "Inbox/crlf.md"), crlf);
    await s.vault.indexer.update(["Inbox/crlf.md"]);
    await s.call("patch_section", { path: "Inbox/crlf.md", heading: "Log", mode: "append", content: "second\nthird" });
    const after = readFileSync(join(s.root, "Inbox/crlf.md"), "utf8");
    expect(after).toContain("first");
    expect(after).toContain("third");
    expect(after.replace(/\r\n/g, "")).not.toContain("\n"); // every line break is still CRLF
    expect(after.endsWith("bye\r\n")).toBe(true);
  } finally {
    await s.close();
  }
});
