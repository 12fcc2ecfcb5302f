// LETTUCE_COLD_TRACE=1: print where a cold index spends its time, one line per
// phase on stderr: a clock time (ms, mod 1e6: compare lines across threads), this thread's CPU
// time (Linux: /proc/thread-self/schedstat, in ns; elsewhere process CPU) and its minor page faults (Linux).
// A benchmarking aid (bench/index-bench.ts reads no part of it); off, it costs one env read.
import { readFileSync } from "node:fs";
import { threadTimes } from "../platform/thread-time";

const on = process.env.LETTUCE_COLD_TRACE === "1";

function threadCpuMs(): number {
  const t = threadTimes();
  if (t) return t.cpuMs;
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

// This thread's minor page faults so far (Linux: field 10 of /proc/thread-self/stat): a cold index
// faults in ~160 MB of fresh memory across its threads, and this says which thread does it when.
function threadFaults(): string {
  try {
    const s = readFileSync("/proc/thread-self/stat", "utf8");
    return `, faults ${s.slice(s.lastIndexOf(")") + 2).split(" ")[7]}`;
  } catch {
    return "";
  }
}

export function coldTrace(label: string, thread = "main"): void {
  if (!on) return;
  console.error(`[cold ${thread}] ${label}: at ${((performance.timeOrigin + performance.now()) % 1e6).toFixed(0)} ms, thread cpu ${threadCpuMs().toFixed(0)} ms${threadFaults()}`);
}
