// A child process that must not outlive its parent even while stopped: the
// built-in model's host (lib/providers/model-host.ts) is held with SIGSTOP
// during requests, and a stopped process cannot notice that its IPC channel
// closed. Linux can have the kernel send SIGKILL (which a stopped process does
// not survive) when the parent dies: prctl(PR_SET_PDEATHSIG).
import { dlopen, FFIType } from "bun:ffi";

const PR_SET_PDEATHSIG = 1;
const SIGKILL = 9;

/**
 * Have this process killed when `parentPid` dies; exits at once if it already has. False where the
 * kernel cannot do it (not Linux): the caller must then never leave this process stopped.
 */
export function dieWithParent(parentPid: number): boolean {
  if (process.platform !== "linux") return false;
  try {
    const { symbols } = dlopen("libc.so.6", {
      prctl: { args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64], returns: FFIType.i32 },
      getppid: { args: [], returns: FFIType.i32 },
    });
    if (symbols.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) !== 0) return false;
    // The parent may have gone between our start and the prctl: then we belong to another now.
    if (symbols.getppid() !== parentPid) process.exit(0);
    return true;
  } catch {
    return false;
  }
}
