// LETTUCE_COLD_TRACE=1: print where a cold index spends its time, one line per
// phase on stderr: a clock time (ms, mod 1e6: compare lines across threads) and this thread's CPU
// time (Linux: /proc/thread-self/schedstat, in ns; elsewhere process CPU).
// A benchmarking aid (bench/index-bench.ts reads no part of it); off, it costs one env read.
import { threadTimes } from "../platform/thread-time";

const on = process.env.LETTUCE_COLD_TRACE === "1";

function threadCpuMs(): number {
  const t = threadTimes();
  if (t) return t.cpuMs;
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

export function coldTrace(label: string, thread = "main"): void {
  if (!on) return;
  console.error(`[cold ${thread}] ${label}: at ${((performance.timeOrigin + performance.now()) % 1e6).toFixed(0)} ms, thread cpu ${threadCpuMs().toFixed(0)} ms`);
}
