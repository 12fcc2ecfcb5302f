// A vault's freshness fingerprint (lib/index/freshness.ts) from one native call:
// fingerprint-walk.c lists the folders, stats every file in two threads and
// sums the terms, so no JavaScript runs per file. Measured at 10k notes in a
// fresh compiled process on this 2-core VM: ~45–50 ms for the JavaScript walk
// and its hashing (an FFI hop, a cold JIT and a hash call per file), ~15 ms
// here; the statx calls alone are ~22 ms on one thread.
//
// The binary built for this machine's target carries it compiled (compile.sh);
// elsewhere Bun's TinyCC compiles it at run time (~5 ms). Where neither works
// (Windows, macOS, musl: no statx or glibc symbols), or where the C walk cannot
// answer exactly, the caller walks in JavaScript.
import { cc, dlopen, ptr } from "bun:ffi";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { unpackEmbedded } from "./cache-dir";
import { isCompiled } from "./embedded";
import source from "./fingerprint-walk.c" with { type: "file" };

export interface WalkFingerprint {
  count: number;
  a: number;
  b: number;
}

interface Walk {
  fingerprint_start(root: unknown, ignored: unknown, threads: number): unknown;
  fingerprint_finish(job: unknown, out: unknown): number;
}
let compiled: Walk | null | undefined;
let loadedKind: WalkKind = "javascript";

/** How this process walks for the fingerprint: the library compile.sh built in, TinyCC at run time, or scan.ts's JavaScript walk. */
export type WalkKind = "built-in" | "tinycc" | "javascript";

const SYMBOLS = {
  fingerprint_start: { args: ["ptr", "ptr", "i32"], returns: "ptr" },
  fingerprint_finish: { args: ["ptr", "ptr"], returns: "i32" },
} as const;

function load(): Walk | null {
  if (process.platform !== "linux" || process.env.LETTUCE_NO_STATX === "1") return null;
  try {
    // A binary for this machine's target carries the walk built by compile.sh: unpacked into the user's
    // cache (checked there, as it is code this process runs) and dlopen'ed in ~1 ms.
    const prebuilt = unpackEmbedded(/^fingerprint-walk.*\.so$/, "fingerprint-walk.so");
    if (prebuilt) {
      const walk = dlopen(prebuilt, SYMBOLS).symbols as unknown as Walk;
      loadedKind = "built-in";
      return walk;
    }
    // Otherwise TinyCC compiles it. It opens the source with the system's open(), which cannot see
    // inside a binary: a compiled build unpacks the source first, the same way.
    const path = isCompiled() ? unpackEmbedded(source, "fingerprint-walk.c")! : source;
    // TinyCC links against libc by name, which needs libc's development files: give it the C library
    // this process has loaded instead (read from /proc/self/maps), and nothing else.
    const libs = loadedCLibraries();
    // (cc takes a list of files, shared libraries included, though its types say one.)
    const walk = cc({ source: [path, ...libs] as unknown as string, flags: libs.length ? ["-nostdlib"] : [], symbols: SYMBOLS }).symbols as unknown as Walk;
    loadedKind = "tinycc";
    return walk;
  } catch {
    return null; // no TinyCC in this build, or a libc without a symbol the walk needs
  }
}

/** The C library (and glibc's older separate thread library) as this process has them mapped. */
function loadedCLibraries(): string[] {
  const paths = readFileSync("/proc/self/maps", "utf8")
    .split("\n")
    .map((line) => line.slice(line.indexOf("/")))
    .filter((p) => /\/lib(c|pthread)\.so\.\d+$/.test(p));
  return [...new Set(paths)];
}

function loaded(): Walk | null {
  if (compiled === undefined) compiled = load();
  return compiled;
}

/** Which walk this process uses (loading it, as the first check would). */
export function fingerprintWalkKind(): WalkKind {
  loaded();
  return loadedKind;
}

/**
 * Starts the native walk for the fingerprint of every note and attachment under `root` (scan.ts's
 * rules, `ignored` being its ignored names) on threads of its own, and returns the function that
 * waits for it: the caller can work meanwhile. That function gives null when the walk could not
 * answer exactly; this one returns null when there is no native walk here.
 */
export function startFingerprintWalk(root: string, ignored: Iterable<string>): (() => WalkFingerprint | null) | null {
  const walk = loaded();
  if (!walk) return null;
  const job = walk.fingerprint_start(ptr(Buffer.from(`${root}\0`)), ptr(Buffer.from(`${[...ignored].join("\0")}\0\0`)), Math.min(2, availableParallelism()));
  if (!job) return null;
  let result: WalkFingerprint | null | undefined;
  return () => {
    if (result === undefined) {
      const out = new Uint32Array(3);
      result = walk.fingerprint_finish(job, ptr(out)) === 0 ? { count: out[0]!, a: out[1]!, b: out[2]! } : null;
    }
    return result;
  };
}
