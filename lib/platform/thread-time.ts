// This thread's CPU time and the time it spent runnable but waiting for a core
// (Linux: /proc/thread-self/schedstat, in ns). Benchmarking aids read it: the
// cold index's trace and the built-in model's per-job stats. null elsewhere.
import { readFileSync } from "node:fs";

export function threadTimes(): { cpuMs: number; waitMs: number } | null {
  try {
    const f = readFileSync("/proc/thread-self/schedstat", "utf8").split(" ");
    return { cpuMs: Number(f[0]) / 1e6, waitMs: Number(f[1]) / 1e6 };
  } catch {
    return null;
  }
}
