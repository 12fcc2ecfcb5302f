// Read workers run at a lower CPU priority than the thread that serves
// requests: on a machine with as many busy threads as cores, the scheduler
// then hands the core to the event loop first, so a ping or a cheap call is
// not kept waiting behind a worker's long statement. Linux only (there
// setpriority() takes a thread id); elsewhere this does nothing. The step is
// relative: a server started under `nice` (a CI runner, a cron job) keeps its
// workers below itself rather than setting them to the same absolute value.
import { dlopen, FFIType } from "bun:ffi";

const STEP = 10;
const LOWEST = 19;

export function lowerThreadPriority(): boolean {
  if (process.platform !== "linux") return false;
  try {
    const { symbols } = dlopen("libc.so.6", {
      gettid: { args: [], returns: FFIType.i32 },
      getpriority: { args: [FFIType.i32, FFIType.u32], returns: FFIType.i32 },
      setpriority: { args: [FFIType.i32, FFIType.u32, FFIType.i32], returns: FFIType.i32 },
    });
    // PRIO_PROCESS with a thread id reads and sets that thread's nice value (Linux semantics). getpriority's
    // -1 is also a real nice value; a failed read only makes the step start from there.
    const tid = symbols.gettid();
    const now = symbols.getpriority(0, tid);
    if (now >= LOWEST) return true;
    return symbols.setpriority(0, tid, Math.min(LOWEST, now + STEP)) === 0;
  } catch {
    return false;
  }
}
