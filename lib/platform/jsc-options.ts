// `lettuce serve`, `lettuce stdio` and `lettuce embed` run the built-in model
// for minutes or for the server's life, and the JavaScript engine's block warm-up thread (JSC's
// useWarmUpMarkedBlocks, a thread named JSCWarmUp that pre-touches memory for
// the garbage collector) took ~2 ms of a second core per query embedding while
// the model's own time stayed the same: on a 2-core machine that thread
// competes with the model worker and the request thread. Turned off, measured
// side by side (bench/semantic-speed.ts, quiet, 10k notes): one query
// embedding 7.7–8.8 ms against 10.7–11.2 ms, an uncached hybrid
// semantic_search 15.1–15.6 ms against 18.8–18.9 ms.
//
// The engine reads its options once, when the process starts, from BUN_JSC_*
// variables: setting one later changes nothing. So these commands replace
// their own process image with the same one and the option set (execve: the
// same pid, stdio and arguments; nothing else has run yet). Where execve cannot
// be called (Windows, a libc that will not load), they run as they are.
// LETTUCE_NO_RELAUNCH=1 turns it off.
import { dlopen, FFIType, ptr } from "bun:ffi";
import { isCompiled } from "./embedded";

export const JSC_OPTIONS: Record<string, string> = { BUN_JSC_useWarmUpMarkedBlocks: "0" };
const COMMANDS = new Set(["serve", "stdio", "embed"]);

/** Does this process start without some of JSC_OPTIONS? (One set by the user, to any value, is theirs.) */
export function lacksJscOptions(env: Record<string, string | undefined> = process.env): boolean {
  return env.LETTUCE_NO_RELAUNCH !== "1" && Object.keys(JSC_OPTIONS).some((k) => env[k] === undefined);
}

/** Does this command want the options, and does this process lack them? */
export function wantsJscOptions(argv: string[], env: Record<string, string | undefined> = process.env): boolean {
  return COMMANDS.has(argv[0] ?? "") && lacksJscOptions(env);
}

/** Replace this process with itself (the same script, `argv` after it) and JSC_OPTIONS set; returns only if that could not be done. */
export function execWithJscOptions(argv: string[]): void {
  if (process.platform !== "linux" && process.platform !== "darwin") return;
  let execve: (path: unknown, args: unknown, envp: unknown) => number;
  try {
    const lib = dlopen(process.platform === "darwin" ? "libSystem.B.dylib" : "libc.so.6", { execve: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 } });
    execve = lib.symbols.execve as typeof execve;
  } catch {
    return; // musl and others: run as we are
  }
  const args = [process.execPath, ...(isCompiled() ? [] : [process.argv[1]!]), ...argv];
  const env = { ...JSC_OPTIONS, ...process.env };
  const envStrings = Object.entries(env).flatMap(([k, v]) => (v === undefined ? [] : [`${k}=${v}`]));
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
  // Still here: execve failed (and changed nothing). Run in this process.
  keep.length = 0;
}
