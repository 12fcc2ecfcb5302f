// The release build: `compile.sh --all` makes a binary for every desktop from
// this Linux machine, each carrying its own platform's sqlite-vec, the workers
// and the built-in model, listed in SHA256SUMS. Binaries for other systems are
// checked by their header and by the files embedded in them; the linux-x64
// one is run from an empty folder with no node_modules (the CLI, and semantic
// search with the built-in model, with sqlite-vec and with plain tables); the
// linux-arm64 one under qemu when it is installed. One build per run: built
// once here, shared by every test of this file.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { cleanupBuilds, embeddedNames, fileName, linuxBinary, readHeader, registryReachable, releaseBuild, TARGETS, TEST_ASSETS, testAssetDir, VERSION, type Target } from "./helpers/binary";
import { copyVault, REPO, tempDir } from "./helpers/server";

const online = registryReachable();
if (!online) console.log("binaries-targets: skipped: the npm registry cannot be reached, and cross builds fetch Bun runtimes and sqlite-vec packages from it");

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await cleanupBuilds();
});

const EXPECT: Record<Target, { format: string; arch: string; vec: string; musl?: boolean }> = {
  "linux-x64": { format: "ELF", arch: "x86-64", vec: "sqlite-vec-linux-x64/vec0.so" },
  "linux-arm64": { format: "ELF", arch: "aarch64", vec: "sqlite-vec-linux-arm64/vec0.so" },
  "darwin-x64": { format: "Mach-O", arch: "x86-64", vec: "sqlite-vec-darwin-x64/vec0.dylib" },
  "darwin-arm64": { format: "Mach-O", arch: "arm64", vec: "sqlite-vec-darwin-arm64/vec0.dylib" },
  "windows-x64": { format: "PE32+", arch: "x86-64", vec: "sqlite-vec-windows-x64/vec0.dll" },
  "linux-x64-musl": { format: "ELF", arch: "x86-64", vec: "sqlite-vec-linux-x64/vec0.so", musl: true },
};

/** The sqlite-vec library of a package as npm ships it: node_modules for this machine, compile.sh's cache for the rest. */
function vecBytes(rel: string): Buffer {
  const [pkg, file] = rel.split("/") as [string, string];
  const local = join(REPO, "node_modules", pkg, file);
  if (existsSync(local)) return readFileSync(local);
  const version = require("../package-lock.json").packages[`node_modules/${pkg}`].version;
  const cache = process.env.LETTUCE_BUILD_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "lettuce-build");
  return readFileSync(join(cache, `${pkg}-${version}`, file));
}

// What every binary must carry: the three workers (under their source path), the model and its wasm runtime.
const REQUIRED = [
  /^lib\/index\/parse-worker\.(ts|js)$/,
  /^lib\/index\/fts-writer\.(ts|js)$/,
  /^lib\/providers\/builtin-worker\.(ts|js)$/,
  /^model-[a-z0-9]+\.json$/,
  /^vocab-[a-z0-9]+\.json$/,
  ...[1, 2, 3, 4, 5, 6, 7].map((i) => new RegExp(`^group1-shard${i}of7-[a-z0-9]+`)),
  /^tfjs-backend-wasm-[a-z0-9]+\.wasm$/,
  /^tfjs-backend-wasm-simd-[a-z0-9]+\.wasm$/,
  /^tfjs-backend-wasm-threaded-simd-[a-z0-9]+\.wasm$/,
];

describe.skipIf(!online)("compile.sh --all", () => {
  test("builds every target, each listed with its SHA-256 in SHA256SUMS", async () => {
    const b = await releaseBuild();
    if (b.code !== 0) throw new Error(`compile.sh --all failed:\n${b.output}`);
    const sums = new Map(
      readFileSync(join(b.dir, "SHA256SUMS"), "utf8")
        .trim()
        .split("\n")
        .map((l) => l.split(/\s+\*?/) as [string, string])
        .map(([h, f]) => [f, h]),
    );
    const sizes: string[] = [];
    for (const t of TARGETS) {
      const f = join(b.dir, fileName(t));
      expect(existsSync(f)).toBe(true);
      expect(sums.get(fileName(t))).toBe(createHash("sha256").update(readFileSync(f)).digest("hex"));
      sizes.push(`${t} ${(statSync(f).size / 1e6).toFixed(0)} MB`);
    }
    expect(sums.size).toBe(TARGETS.length);
    console.log(`compile.sh --all: ${b.seconds.toFixed(0)} s; ${sizes.join(", ")}`);
  }, 900_000);

  for (const t of TARGETS) {
    test(`${t}: the right header, the workers and model inside, and its own sqlite-vec build`, async () => {
      const b = await releaseBuild();
      expect(b.code).toBe(0);
      const bin = readFileSync(join(b.dir, fileName(t)));
      const want = EXPECT[t];
      const h = readHeader(bin);
      expect(h.format).toBe(want.format as never);
      expect(h.arch).toBe(want.arch as never);
      if (h.format === "ELF") expect(h.interpreter).toContain(want.musl ? "ld-musl-x86_64" : t === "linux-arm64" ? "ld-linux-aarch64" : "ld-linux-x86-64");
      const names = embeddedNames(bin);
      for (const re of REQUIRED) expect(names.some((n) => re.test(n)), `${t} embeds ${re}`).toBe(true);
      const ext = want.vec.split(".").pop();
      expect(names.filter((n) => /^vec0-[a-z0-9]+\.(so|dylib|dll)$/.test(n))).toEqual([expect.stringMatching(new RegExp(`^vec0-[a-z0-9]+\\.${ext}$`))]);
      // The freshness walk built by this machine's C compiler rides only in this machine's target; others compile it at run time.
      const hostTarget = `${process.platform}-${process.arch}`;
      expect(names.filter((n) => /^fingerprint-walk-[a-z0-9]+\.so$/.test(n)).length, `${t} embeds fingerprint-walk.so`).toBe(t === hostTarget ? 1 : 0);
      // The exact bytes of this target's sqlite-vec package are inside, and no other platform's are.
      expect(bin.indexOf(vecBytes(want.vec))).toBeGreaterThan(0);
      for (const other of new Set(Object.values(EXPECT).map((e) => e.vec))) {
        if (other !== want.vec) expect(bin.indexOf(vecBytes(other)), `${t} must not carry ${other}`).toBe(-1);
      }
    }, 900_000);
  }
});

async function run(exe: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const p = Bun.spawn([exe.includes("/") ? exe : Bun.which(exe)!, ...args], { cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe", env: { PATH: "/usr/bin:/bin", HOME: cwd, ...env } });
  const timer = setTimeout(() => p.kill("SIGKILL"), 120_000);
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  return { stdout, stderr, code };
}

describe("the linux-x64 binary, alone in an empty folder", () => {
  test("--version, --version --verbose, index, search and doctor work with no node_modules; sqlite-vec comes from a checked per-user cache", async () => {
    const b = await linuxBinary(online);
    const empty = tempDir("lettuce-empty-");
    dirs.push(empty);
    const exe = join(empty, "lettuce");
    copyFileSync(b.exe, exe);
    const vault = copyVault();
    dirs.push(vault);

    const v = await run(exe, ["--version"], empty);
    expect(v.code).toBe(0);
    // Answered before anything is loaded: no sqlite-vec unpacked, no database opened.
    expect(existsSync(join(empty, ".cache"))).toBe(false);
    expect(v.stdout.trim()).toMatch(new RegExp(`^lettuce ${VERSION.replaceAll(".", "\\.")} \\(commit ${b.commit}(-dirty)?, built \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\)$`));

    const verbose = await run(exe, ["--version", "--verbose", "--json"], empty);
    expect(verbose.code).toBe(0);
    const r = JSON.parse(verbose.stdout);
    expect(r).toMatchObject({ version: VERSION, compiled: true, target: "linux-x64", vectors: { storage: "sqlite-vec", sqliteVec: "v0.1.9" }, freshnessWalk: "built-in" });
    // The asset folder given to compile.sh is inside, every file by its path, byte for byte in size.
    const assets = new Map<string, number>(r.assets.map((a: { path: string; size: number }) => [a.path, a.size]));
    for (const [rel, text] of Object.entries(TEST_ASSETS)) expect(assets.get(join(testAssetDir(), rel)), rel).toBe(Buffer.byteLength(text));
    expect(assets.size).toBe(Object.keys(TEST_ASSETS).length);
    const cacheDir = join(empty, ".cache", "lettuce", `${VERSION}-linux-x64`);
    expect(r.vectors.loadedFrom).toBe(join(cacheDir, "vec0.so"));
    expect(readFileSync(join(cacheDir, "vec0.so")).equals(vecBytes("sqlite-vec-linux-x64/vec0.so"))).toBe(true);
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(cacheDir, "vec0.so")).mode & 0o077).toBe(0);

    // A planted library with other bytes is replaced by the embedded one before loading.
    writeFileSync(join(cacheDir, "vec0.so"), "not the library");
    chmodSync(join(cacheDir, "vec0.so"), 0o600);
    const again = JSON.parse((await run(exe, ["--version", "--json", "--verbose"], empty)).stdout);
    expect(again.vectors.storage).toBe("sqlite-vec");
    expect(readFileSync(join(cacheDir, "vec0.so")).equals(vecBytes("sqlite-vec-linux-x64/vec0.so"))).toBe(true);
    // A cache folder others can write is refused: no library is loaded from it, vectors go to plain tables.
    chmodSync(cacheDir, 0o777);
    const unsafe = JSON.parse((await run(exe, ["--version", "--json", "--verbose"], empty)).stdout);
    expect(unsafe.vectors.storage).toBe("plain");
    expect(unsafe.vectors.reason).toContain("writable by other users");
    chmodSync(cacheDir, 0o700);

    const idx = await run(exe, ["index", vault, "--json"], empty);
    expect(idx.code).toBe(0);
    const search = await run(exe, ["search", vault, "menemen", "--json", "--limit", "3"], empty);
    expect(search.code).toBe(0);
    expect(JSON.parse(search.stdout).items[0].path).toBe("Recipes/Menemen.md");
    // The freshness check ran the walk compiled into the binary, from the same checked cache.
    expect(statSync(join(cacheDir, "fingerprint-walk.so")).mode & 0o077).toBe(0);
    expect(existsSync(join(cacheDir, "fingerprint-walk.c"))).toBe(false);

    const port = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(null) });
    const freePort = port.port!;
    port.stop(true);
    const doc = await run(exe, ["doctor", vault, "--json", "--port", String(freePort)], empty, { LETTUCE_EMBED_PROVIDER: "builtin", LETTUCE_LLM_PROVIDER: "none", OLLAMA_HOST: "127.0.0.1:9" });
    const report = JSON.parse(doc.stdout);
    expect(report.ok).toBe(true);
    expect(doc.code).toBe(0);
    expect(report.checks.find((c: { check: string }) => c.check === "sqlite-vec").status).toBe("ok");
    expect(report.checks.find((c: { check: string }) => c.check === "embeddings").detail).toContain("built-in model");
    expect(existsSync(join(empty, "node_modules"))).toBe(false);
  }, 900_000);

  test("embeds and searches by meaning with the built-in model, with vectors in sqlite-vec and in plain tables", async () => {
    const b = await linuxBinary(online);
    const empty = tempDir("lettuce-empty-");
    dirs.push(empty);
    const exe = join(empty, "lettuce");
    copyFileSync(b.exe, exe);
    for (const storage of ["sqlite-vec", "plain"]) {
      const vault = copyVault();
      dirs.push(vault);
      const env: Record<string, string> = { LETTUCE_EMBED_PROVIDER: "builtin", TMPDIR: empty, ...(storage === "plain" ? { LETTUCE_VECTOR_STORAGE: "plain" } : {}) };
      const res = await run(exe, ["search", vault, "when is the last frost in spring", "--semantic", "--json", "--limit", "3"], empty, env);
      expect(res.stderr).toBe("");
      expect(res.code).toBe(0);
      expect(JSON.parse(res.stdout).items[0].path).toBe("Garden/Frost Dates.md");
      const rel = await run(exe, ["related", vault, "Recipes/Menemen.md", "--json"], empty, env);
      expect(rel.code).toBe(0);
      expect(JSON.parse(rel.stdout).items.length).toBeGreaterThan(0);
      // The vectors went where this storage keeps them.
      const db = new Database(join(vault, ".lettuce/index.db"), { readonly: true });
      const names = (db.query("SELECT name FROM sqlite_master WHERE name IN ('vec_passages', 'plain_passages')").all() as { name: string }[]).map((r) => r.name);
      const recorded = (db.query("SELECT value FROM meta WHERE key = 'vector_storage'").get() as { value: string }).value;
      db.close();
      expect(names).toEqual([storage === "plain" ? "plain_passages" : "vec_passages"]);
      expect(recorded).toBe(storage);
    }
  }, 900_000);
});

// The arm64 Linux binary can run here under qemu's user-mode emulation (Debian's qemu-user with the
// aarch64 C library from libc6-arm64-cross; .ci/run installs them): proof that it starts and loads its own sqlite-vec.
const QEMU_LIBS = "/usr/aarch64-linux-gnu";
const qemu = Bun.which("qemu-aarch64") !== null && existsSync(join(QEMU_LIBS, "lib/ld-linux-aarch64.so.1"));
if (online && !qemu) console.log("binaries-targets: the linux-arm64 run is skipped: qemu-aarch64 and libc6-arm64-cross are not installed");

describe.skipIf(!online || !qemu)("the linux-arm64 release binary under qemu-aarch64", () => {
  test("starts, loads the arm64 sqlite-vec from its cache, indexes and searches", async () => {
    const b = await releaseBuild();
    expect(b.code).toBe(0);
    const empty = tempDir("lettuce-arm64-");
    dirs.push(empty);
    const exe = join(empty, "lettuce");
    copyFileSync(join(b.dir, fileName("linux-arm64")), exe);
    const vault = copyVault();
    dirs.push(vault);
    const q = (args: string[]) => run("qemu-aarch64", [exe, ...args], empty, { QEMU_LD_PREFIX: QEMU_LIBS });
    const v = await q(["--version", "--verbose", "--json"]);
    expect(v.code).toBe(0);
    const r = JSON.parse(v.stdout);
    // No walk built in for a cross target: TinyCC compiles it at start, under qemu too.
    expect(r).toMatchObject({ target: "linux-arm64", compiled: true, vectors: { storage: "sqlite-vec", sqliteVec: "v0.1.9" }, freshnessWalk: "tinycc" });
    expect(readFileSync(r.vectors.loadedFrom).equals(vecBytes("sqlite-vec-linux-arm64/vec0.so"))).toBe(true);
    const search = await q(["search", vault, "menemen", "--json", "--limit", "1"]);
    expect(search.code).toBe(0);
    expect(JSON.parse(search.stdout).items[0].path).toBe("Recipes/Menemen.md");
  }, 900_000);

  test("the freshness walk TinyCC compiles on arm64 gives the fingerprint of the JavaScript walk", async () => {
    const b = await releaseBuild();
    expect(b.code).toBe(0);
    const dir = tempDir("lettuce-arm64-walk-");
    dirs.push(dir);
    const exe = join(dir, "fingerprint-check");
    const build = Bun.spawnSync([process.execPath, "build", "--compile", "--target=bun-linux-arm64", join(REPO, "tests/helpers/fingerprint-check.ts"), "--outfile", exe], { stdout: "pipe", stderr: "pipe" });
    expect(build.exitCode, build.stderr.toString()).toBe(0);
    const vault = copyVault();
    dirs.push(vault);
    mkdirSync(join(vault, "Ünïcode 名前", ".hidden"), { recursive: true });
    writeFileSync(join(vault, "Ünïcode 名前", "a note with a long name past sixteen bytes.md"), "x");
    writeFileSync(join(vault, "Ünïcode 名前", ".hidden", "not listed.md"), "x");
    symlinkSync(join(vault, "Ünïcode 名前"), join(vault, "link"));
    const r = await run("qemu-aarch64", [exe, vault], dir, { QEMU_LD_PREFIX: QEMU_LIBS });
    expect(r.code, r.stderr).toBe(0);
    const got = JSON.parse(r.stdout);
    expect(got.kind).toBe("tinycc");
    expect(got.js.count).toBeGreaterThan(5);
    expect(got.native).toEqual(got.js);
  }, 900_000);
});
