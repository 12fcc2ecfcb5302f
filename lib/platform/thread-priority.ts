// Read workers run at a lower CPU priority than the thread that serves
// requests: on a machine with as many busy threads as cores, the scheduler
// then hands the core to the event loop first, so a ping or a cheap call is
// not kept waiting behind a worker's long statement. Linux only (there
// setpriority() takes a thread id); elsewhere this does nothing. The step is
// relative: a server started under `nice` (a CI runner, a cron job) keeps its
// workers below itself rather than setting them to the same absolute value.
import { dlopen, FFIType } from "bun:ffi";
import { readdirSync } from "node:fs";

const STEP = 10;
const LOWEST = 19;

export function lowerThreadPriority(): boolean {
  return lowerPriorityOf("self");
}

/**
 * Every thread of this process, the runtime's own (compiler, collector) included: a process that does
 * only background work (the model host, lib/providers/model-host.ts). Threads started later inherit the
 * nice value of the thread that starts them.
 */
export function lowerProcessPriority(): boolean {
  return lowerPriorityOf("all");
}

function lowerPriorityOf(which: "self" | "all"): boolean {
  if (process.platform !== "linux") return false;
  try {
    const { symbols } = dlopen("libc.so.6", {
      gettid: { args: [], returns: FFIType.i32 },
      getpriority: { args: [FFIType.i32, FFIType.u32], returns: FFIType.i32 },
      setpriority: { args: [FFIType.i32, FFIType.u32, FFIType.i32], returns: FFIType.i32 },
    });
    // PRIO_PROCESS with a thread id reads and sets that thread's nice value (Linux semantics). getpriority's
    // -1 is also a real nice value; a failed read only makes the step start from there.
    const lower = (tid: number) => {
      const now = symbols.getpriority(0, tid);
      return now >= LOWEST || symbols.setpriority(0, tid, Math.min(LOWEST, now + STEP)) === 0;
    };
    if (which === "self") return lower(symbols.gettid());
    let ok = true;
    for (const tid of readdirSync("/proc/self/task")) ok = lower(Number(tid)) && ok;
    return ok;
  } catch {
    return false;
  }
}
