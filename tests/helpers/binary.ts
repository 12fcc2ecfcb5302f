// The builds for tests/binaries-targets.test.ts: `compile.sh --all` once per
// run, into a temp folder removed by cleanupBuilds() in the file's afterAll
// (bun test runs no process "exit" listeners). Plus what a test needs to look
// inside a binary it cannot run: its header and the names of its embedded files.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO } from "./server";

export const TARGETS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "windows-x64", "linux-x64-musl"] as const;
export type Target = (typeof TARGETS)[number];
export const VERSION: string = require("../../package.json").version;

export function fileName(t: Target): string {
  return `lettuce-${VERSION}-${t}${t.startsWith("windows") ? ".exe" : ""}`;
}

export interface Build {
  dir: string;
  /** The commit compile.sh stamped (HEAD when it started). */
  commit: string;
  code: number;
  output: string;
  seconds: number;
}

const made: string[] = [];

/**
 * A folder of web-UI-like files (html, js, css, json, a nested image, awkward
 * names) that the release build embeds through LETTUCE_ASSET_DIRS, as the web UI's
 * folder will be through compile.sh's ASSET_DIRS.
 */
export const TEST_ASSETS: Record<string, string> = {
  "index.html": "<!doctype html><title>Lettuce</title><script src=js/app.js></script>\n",
  "js/app.js": "console.log('app');\n",
  "css/site.css": "body { color: green }\n",
  "manifest.json": '{"name": "lettuce"}\n',
  "img/leaf icon.png": "\x89PNG not really\n",
  "odd/100% done.txt": "percent and space\n",
};
let assetDir: string | null = null;
export function testAssetDir(): string {
  if (assetDir) return assetDir;
  assetDir = mkdtempSync(join(tmpdir(), "lettuce-assets-"));
  made.push(assetDir);
  for (const [rel, text] of Object.entries(TEST_ASSETS)) {
    mkdirSync(join(assetDir, rel, ".."), { recursive: true });
    writeFileSync(join(assetDir, rel), text);
  }
  return assetDir;
}

async function runCompile(args: string[]): Promise<Build> {
  const dir = mkdtempSync(join(tmpdir(), "lettuce-dist-"));
  made.push(dir);
  const commit = spawnSync("git", ["rev-parse", "--short=12", "HEAD"], { cwd: REPO, encoding: "utf8" }).stdout.trim();
  const t0 = performance.now();
  const p = Bun.spawn(["bash", "./compile.sh", ...args], { cwd: REPO, env: { ...process.env, LETTUCE_DIST: dir, LETTUCE_ASSET_DIRS: testAssetDir() }, stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => p.kill("SIGKILL"), 900_000);
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  return { dir, commit, code, output: out + err, seconds: (performance.now() - t0) / 1000 };
}

let release: Promise<Build> | null = null;
let host: Promise<Build> | null = null;

/** Remove every build and asset folder made so far (a later file builds again if it needs to). */
export async function cleanupBuilds(): Promise<void> {
  await Promise.all([release, host].map((p) => p?.catch(() => null)));
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
  release = host = null;
  assetDir = null;
}

/** `compile.sh --all`, once per test process. */
export function releaseBuild(): Promise<Build> {
  release ??= runCompile(["--all"]);
  return release;
}

/**
 * The linux-x64 binary to run: the release build's when the registry can be
 * reached (one build for the whole file), else compile.sh's quick host build,
 * which needs no network.
 */
export async function linuxBinary(online: boolean): Promise<{ exe: string; commit: string }> {
  if (online) {
    const r = await releaseBuild();
    if (r.code !== 0) throw new Error(`compile.sh --all failed:\n${r.output}`);
    return { exe: join(r.dir, fileName("linux-x64")), commit: r.commit };
  }
  host ??= runCompile([]);
  const h = await host;
  if (h.code !== 0) throw new Error(`compile.sh failed:\n${h.output}`);
  return { exe: join(h.dir, "lettuce"), commit: h.commit };
}

/** Can the npm registry be reached (cross builds fetch Bun runtimes and sqlite-vec packages from it)? */
export function registryReachable(): boolean {
  const r = spawnSync("npm", ["ping"], { timeout: 30_000, encoding: "utf8" });
  return r.status === 0;
}

export interface Header {
  format: "ELF" | "Mach-O" | "PE32+" | "unknown";
  arch: "x86-64" | "aarch64" | "arm64" | "unknown";
  /** ELF only: the program interpreter (the C library's loader). */
  interpreter?: string;
}

/** What `file` would say, read from the header bytes. */
export function readHeader(buf: Buffer): Header {
  if (buf.readUInt32BE(0) === 0x7f454c46) {
    const machine = buf.readUInt16LE(18);
    const arch = machine === 0x3e ? "x86-64" : machine === 0xb7 ? "aarch64" : "unknown";
    // Find PT_INTERP (type 3) among the 64-bit program headers.
    const phoff = Number(buf.readBigUInt64LE(32));
    const phentsize = buf.readUInt16LE(54);
    const phnum = buf.readUInt16LE(56);
    let interpreter: string | undefined;
    for (let i = 0; i < phnum; i++) {
      const ph = phoff + i * phentsize;
      if (buf.readUInt32LE(ph) === 3) {
        const off = Number(buf.readBigUInt64LE(ph + 8));
        const size = Number(buf.readBigUInt64LE(ph + 32));
        interpreter = buf.toString("latin1", off, off + size).replace(/\0+$/, "");
      }
    }
    return { format: "ELF", arch, interpreter };
  }
  if (buf.readUInt32LE(0) === 0xfeedfacf) {
    const cpu = buf.readUInt32LE(4);
    return { format: "Mach-O", arch: cpu === 0x01000007 ? "x86-64" : cpu === 0x0100000c ? "arm64" : "unknown" };
  }
  if (buf.toString("latin1", 0, 2) === "MZ") {
    const pe = buf.readUInt32LE(0x3c);
    if (buf.toString("latin1", pe, pe + 4) !== "PE\0\0") return { format: "unknown", arch: "unknown" };
    const machine = buf.readUInt16LE(pe + 4);
    const magic = buf.readUInt16LE(pe + 24);
    return { format: magic === 0x20b ? "PE32+" : "unknown", arch: machine === 0x8664 ? "x86-64" : machine === 0xaa64 ? "arm64" : "unknown" };
  }
  return { format: "unknown", arch: "unknown" };
}

/**
 * Names of the files in a Bun executable's embedded module graph, read from
 * the bytes (the graph stores each under /$bunfs/root/ on Linux and macOS,
 * B:/~BUN/root/ on Windows).
 */
export function embeddedNames(buf: Buffer): string[] {
  const names = new Set<string>();
  const nameByte = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x2e || c === 0x5f || c === 0x2f || c === 0x2d;
  // Buffer.indexOf over the bytes: far cheaper than a regex over a 140 MB string.
  for (const prefix of ["/$bunfs/root/", "B:/~BUN/root/"].map((p) => Buffer.from(p, "latin1"))) {
    for (let at = buf.indexOf(prefix); at >= 0; at = buf.indexOf(prefix, at + 1)) {
      let end = at + prefix.length;
      while (end < buf.length && end - at < 200 && nameByte(buf[end]!)) end++;
      const name = buf.toString("latin1", at + prefix.length, end).replace(/\/+$/, "");
      if (name.length >= 3) names.add(name);
    }
  }
  return [...names].sort();
}
