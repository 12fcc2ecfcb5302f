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
// variables: setting one later changes nothing. So these commands start again
// with it (./restart.ts: the same pid, pipes and arguments; nothing else has
// run yet), or run as they are where that cannot be done (Windows, musl).
// LETTUCE_NO_RELAUNCH=1 turns it off.
import { restartWith } from "./restart";

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

/** Start again with JSC_OPTIONS added (the user's own values kept); returns only if that could not be done. */
export function execWithJscOptions(argv: string[]): void {
  const missing = Object.fromEntries(Object.entries(JSC_OPTIONS).filter(([k]) => process.env[k] === undefined));
  restartWith(argv, missing);
}
