// `lettuce index` on a vault with no index yet starts again (../platform/restart.ts;
// a child process where that cannot be done) with mimalloc's purging of freed
// memory turned off (MIMALLOC_PURGE_DELAY=-1).
//
// Why: a cold index allocates and frees a great deal (file buffers, parsed
// notes, SQLite's full-text segments) on four threads, and mimalloc hands freed
// pages back to the kernel 10 ms after they empty (madvise), only for them to
// fault back in moments later: on a 10k-note vault that cost 1.2-2.0 s of the
// run's ~8 s of CPU (mimalloc's scavenger thread, page faults on every thread;
// measured, load ~8). The option is read once, when the allocator starts, so
// only the environment a process starts with can set it: hence the relaunch,
// which costs one process start (~40 ms from source, less compiled).
//
// It also turns off JSC's top tier, the FTL compiler (BUN_JSC_useFTLJIT=0; JSC's
// options too are read only at start-up). A cold index keeps three threads busy
// (main, parse worker, full-text writer) on few cores, and compiling the parser
// with FTL, on a JIT thread beside them, costs more CPU than the faster code
// gives back in one pass over the vault: obsidian-hub 1.86 -> 1.62 s of CPU
// (user+sys, median of 7), synthetic 10k 4.07 -> 3.77 s (median of 5), while
// the parse worker's own CPU moved within +/-3 % (docs/performance-log.md, wave 14).
// A value already in the environment wins.
//
// Only for `lettuce index`, a short job: a long-running `serve` must give
// memory back, so its first index keeps the default. Any other command, an
// existing index (an update reads few files), or an environment that sets
// the option already (or LETTUCE_NO_RELAUNCH=1) runs in this process as before.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { restartWith, selfCommand } from "../platform/restart";

/** The settings a cold index starts again with (the bench's profile of one uses them too). */
export function coldIndexEnv(): Record<string, string> {
  return { MIMALLOC_PURGE_DELAY: "-1", BUN_JSC_useFTLJIT: process.env.BUN_JSC_useFTLJIT ?? "0" };
}

/** The child's exit code, or null when this process should do the work itself. */
export function relaunchForColdIndex(argv: string[]): Promise<number> | null {
  if (argv[0] !== "index" || process.env.MIMALLOC_PURGE_DELAY !== undefined || process.env.LETTUCE_NO_RELAUNCH === "1") return null;
  const positionals = argv.slice(1).filter((a) => !a.startsWith("-"));
  // Anything unusual (no vault, two vaults, a help flag): the command itself explains.
  if (positionals.length !== 1 || argv.some((a) => a === "--help" || a === "-h")) return null;
  const vault = resolve(positionals[0]!);
  if (!existsSync(vault) || existsSync(join(vault, ".lettuce", "index.db"))) return null;
  // In place where it can (the same pid and terminal, nothing left waiting); else in a child (Windows).
  const vars = coldIndexEnv();
  restartWith(argv, vars);
  let child: ReturnType<typeof Bun.spawn>;
  try {
    child = Bun.spawn(selfCommand(argv), {
      env: { ...process.env, ...vars },
      stdio: ["inherit", "inherit", "inherit"],
    });
  } catch {
    return null; // cannot start a process here: index in this one
  }
  // A signal sent to this process alone (not its group) reaches the indexer too.
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    try {
      process.on(sig, () => child.kill(sig));
    } catch {
      /* a signal this platform cannot listen for */
    }
  }
  return child.exited;
}
