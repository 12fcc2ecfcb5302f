// Read workers run at a lower CPU priority than the thread that serves
// requests: on a machine with as many busy threads as cores, the scheduler
// then hands the core to the event loop first, so a ping or a cheap call is
// not kept waiting behind a worker's long statement. Linux only (there
// setpriority() takes a thread id); elsewhere this does nothing.
import { dlopen, FFIType } from "bun:ffi";

const NICE = 10;

export function lowerThreadPriority(): boolean {
  if (process.platform !== "linux") return false;
  try {
    const { symbols } = dlopen("libc.so.6", {
      gettid: { args: [], returns: FFIType.i32 },
      setpriority: { args: [FFIType.i32, FFIType.u32, FFIType.i32], returns: FFIType.i32 },
    });
    // PRIO_PROCESS with a thread id sets that thread's nice value (Linux semantics).
    return symbols.setpriority(0, symbols.gettid(), NICE) === 0;
  } catch {
    return false;
  }
}
