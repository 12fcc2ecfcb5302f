// Some settings take effect only when a process starts: the allocator's
// (MIMALLOC_*) and the JavaScript engine's (BUN_JSC_*) are read once, before
// any of our code runs. A command that wants one starts again with it: this
// replaces the process image with the same one, the same arguments and the
// variables added (execve through bun:ffi), so the pid, the open pipes (stdio's
// MCP session) and the terminal stay what they were, and nothing is left
// waiting behind. Where execve cannot be called (Windows, a libc that will not
// load) it returns, and the caller decides (run as it is, or a child process).
import { dlopen, FFIType, ptr } from "bun:ffi";
import { isCompiled } from "./embedded";

/** The command that runs this program again with `argv`: the binary, or Bun and this script. */
export function selfCommand(argv: string[]): string[] {
  return [process.execPath, ...(isCompiled() ? [] : [process.argv[1]!]), ...argv];
}

/** Replace this process with itself (this script, `argv` after it) and `vars` added; returns only if that could not be done. */
export function restartWith(argv: string[], vars: Record<string, string>): void {
  if (process.platform !== "linux" && process.platform !== "darwin") return;
  let execve: (path: unknown, args: unknown, envp: unknown) => number;
  try {
    const lib = dlopen(process.platform === "darwin" ? "libSystem.B.dylib" : "libc.so.6", { execve: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 } });
    execve = lib.symbols.execve as typeof execve;
  } catch {
    return; // musl and others
  }
  const args = selfCommand(argv);
  const envStrings = Object.entries({ ...process.env, ...vars }).flatMap(([k, v]) => (v === undefined ? [] : [`${k}=${v}`]));
  // NUL-terminated copies, kept referenced until the call; arrays of their addresses, NULL-terminated.
  const keep: Buffer[] = [];
  const table = (strings: string[]) => {
    const t = new BigUint64Array(strings.length + 1);
    strings.forEach((s, i) => {
      const b = Buffer.from(`${s}\0`, "utf8");
      keep.push(b);
      t[i] = BigInt(ptr(b));
    });
    return t;
  };
  const argvTable = table(args);
  const envTable = table(envStrings);
  const path = Buffer.from(`${process.execPath}\0`, "utf8");
  execve(ptr(path), ptr(argvTable), ptr(envTable));
  // Still here: execve failed and changed nothing.
  keep.length = 0;
}
