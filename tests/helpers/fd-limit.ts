// This test process's own descriptor limit, lowered and restored through libc (getrlimit/setrlimit by FFI),
// not by spawning prlimit(1): a spawn needs descriptors, and one that failed at the limit left the whole test
// run (one process) unable to open a file (a CI run of 2026-12-07: every later test failed).
import { dlopen, FFIType, ptr } from "bun:ffi";
import { closeSync, openSync, readdirSync } from "node:fs";

const RLIMIT_NOFILE = 7; // Linux, x86-64 and arm64

function openLibc() {
  if (process.platform !== "linux") return null;
  try {
    return dlopen("libc.so.6", {
      getrlimit: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
      setrlimit: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
    }).symbols;
  } catch {
    return null;
  }
}
const libc = openLibc();

/** Whether this process can lower and restore its own limit here. */
export const canLimitDescriptors = libc !== null;

function softLimit(): bigint {
  const lim = new BigUint64Array(2);
  if (libc!.getrlimit(RLIMIT_NOFILE, ptr(lim)) !== 0) throw new Error("getrlimit failed");
  return lim[0]!;
}

function setSoftLimit(to: bigint): void {
  const lim = new BigUint64Array(2);
  if (libc!.getrlimit(RLIMIT_NOFILE, ptr(lim)) !== 0) throw new Error("getrlimit failed");
  lim[0] = to;
  if (libc!.setrlimit(RLIMIT_NOFILE, ptr(lim)) !== 0) throw new Error("setrlimit failed");
}

/** The lowest descriptor number not in use: limited to it, the process can open none. */
function lowestFree(): number {
  const used = new Set(readdirSync("/proc/self/fd").map(Number));
  let n = 0;
  while (used.has(n)) n++;
  return n;
}

/** Run `fn` with no descriptor free in this process (keep it short: other threads share the limit). */
export function withNoFreeDescriptors<T>(fn: () => T | Promise<T>): Promise<T> {
  return withOwnDescriptorLimit(lowestFree(), async () => {
    // The listing's own descriptor, and any closed since, leave a few numbers free below the limit: held here.
    const held: number[] = [];
    try {
      for (;;) held.push(openSync("/dev/null", "r"));
    } catch {
      /* EMFILE: none left */
    }
    try {
      return await fn();
    } finally {
      for (const fd of held) closeSync(fd);
    }
  });
}

/** Run `fn` with this process's soft limit at `limit`, restored after. */
export async function withOwnDescriptorLimit<T>(limit: number, fn: () => T | Promise<T>): Promise<T> {
  const soft = softLimit();
  setSoftLimit(BigInt(limit));
  try {
    return await fn();
  } finally {
    setSoftLimit(soft);
  }
}
