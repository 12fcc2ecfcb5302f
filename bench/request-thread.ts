// How long `lettuce serve`'s request thread is held while the built-in model embeds a vault in the
// background, against the same server with background embedding off (issue 15 part 1: the thread
// that answers requests must not do the background work). Unlike search latency from a client, this
// needs no queries and sees every hold, so two runs a few minutes apart agree closely.
//
//   bun bench/request-thread.ts [--vault DIR | --notes N] [--seconds S] [--dump FILE]
//
// Each server runs S seconds (default 60) on its own copy of an indexed vault (a synthetic one of N
// notes by default, 10,000) with bench/lib/lag-probe.ts preloaded. Printed per phase: late ticks of
// the 1 ms probe timer over 5, 10 and 20 ms per minute, the 99th percentile of the late ones and the
// longest. "Start" is the first 10 s (the pass counts and splits what it will embed), "build" the rest.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { BUN } from "./lib/child";
import { JSC_OPTIONS } from "../lib/platform/jsc-options";
import { loadavg, percentile } from "./lib/stats";
import { synthVault } from "./lib/synth-vault";

const REPO = resolve(import.meta.dir, "..");
const MAIN = join(REPO, "main.ts");
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const SECONDS = Number(arg("--seconds") ?? 60);
const NOTES = Number(arg("--notes") ?? 10_000);
const START_MS = 10_000;

function source(): { dir: string; label: string; temp: boolean } {
  const given = arg("--vault");
  if (given) return { dir: resolve(given), label: given, temp: false };
  return { dir: synthVault(NOTES, "lettuce-lag-synth-"), label: `synthetic ${NOTES.toLocaleString("en")}`, temp: true };
}

/** Serve a copy of the indexed vault for SECONDS with the probe in; returns the late ticks. */
async function probe(indexed: string, background: boolean): Promise<Tick[]> {
  const root = mkdtempSync(join(tmpdir(), "lettuce-lag-"));
  cpSync(indexed, root, { recursive: true });
  // A copy's files are new to the index (other inodes and times): index it first, so that serve starts as a
  // restart does and its first seconds are not a re-read of every note.
  const ix = Bun.spawnSync([BUN, MAIN, "index", root], { stdout: "ignore", stderr: "pipe" });
  if (ix.exitCode !== 0) throw new Error(ix.stderr.toString());
  const out = join(root, ".lag.json");
  // The engine options set here, so that serve does not start itself again (which would drop --preload).
  const env = { ...process.env, ...JSC_OPTIONS, LAG_PROBE_OUT: out, LETTUCE_EMBED_PROVIDER: "builtin", LETTUCE_LLM_PROVIDER: "none", LETTUCE_EMBED_BACKGROUND: background ? "1" : "0" };
  const child = Bun.spawn([BUN, "--preload", join(import.meta.dir, "lib/lag-probe.ts"), MAIN, "serve", root, "--port", "0"], { env, stdout: "ignore", stderr: "ignore" });
  try {
    await Bun.sleep(SECONDS * 1000);
    return JSON.parse(readFileSync(out, "utf8"));
  } finally {
    child.kill();
    await child.exited;
    rmSync(root, { recursive: true, force: true });
  }
}

type Tick = [at: number, late: number, cpu: number, wait: number];

function row(label: string, phase: string, ticks: Tick[], from: number, to: number): string {
  const inPhase = ticks.filter(([at]) => at >= from && at < to);
  const xs = inPhase.map(([, ms]) => ms);
  const perMin = (over: number) => ((xs.filter((x) => x > over).length * 60_000) / (to - from)).toFixed(1);
  const worst = xs.length ? Math.max(...xs).toFixed(1) : "–";
  // Of the ticks over 5 ms late: how much of their lateness the thread ran, and how much it waited for a core.
  const long = inPhase.filter(([, ms, cpu]) => ms > 5 && cpu >= 0);
  const sum = (i: 1 | 2 | 3) => long.reduce((n, t) => n + t[i], 0);
  const share = (i: 2 | 3) => (long.length ? `${Math.round((100 * sum(i)) / sum(1))} %` : "–");
  return `| ${label} | ${phase} | ${perMin(5)} | ${perMin(10)} | ${perMin(20)} | ${xs.length ? percentile(xs, 99).toFixed(1) : "–"} | ${worst} | ${share(2)} | ${share(3)} |`;
}

const src = source();
try {
  const indexed = mkdtempSync(join(tmpdir(), "lettuce-lag-indexed-"));
  cpSync(src.dir, indexed, { recursive: true });
  const ix = Bun.spawnSync([BUN, MAIN, "index", indexed], { stdout: "ignore", stderr: "pipe" });
  if (ix.exitCode !== 0) throw new Error(ix.stderr.toString());
  const load0 = loadavg();
  const idle = await probe(indexed, false);
  const busy = await probe(indexed, true);
  const dump = arg("--dump");
  if (dump) writeFileSync(dump, JSON.stringify({ idle, busy }));
  const end = SECONDS * 1000;
  console.log(`\n### The request thread during a background build: ${src.label}, ${SECONDS} s per server (${new Date().toISOString()})\n`);
  console.log("| server | phase | late > 5 ms /min | > 10 ms /min | > 20 ms /min | p99 of late ticks (ms) | longest (ms) | > 5 ms late: running | waiting for a core |");
  console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|");
  // The first second is start-up (opening the index, the first freshness walk): the same in both.
  console.log(row("background embedding off", "start (1-10 s)", idle, 1000, START_MS));
  console.log(row("background embedding on", "start (1-10 s)", busy, 1000, START_MS));
  console.log(row("background embedding off", `build (10-${SECONDS} s)`, idle, START_MS, end));
  console.log(row("background embedding on", `build (10-${SECONDS} s)`, busy, START_MS, end));
  console.log(`\nLate ticks: a 1 ms timer on the request thread firing more than 2 ms late; "running" and "waiting for a core" split the lateness of those over 5 ms by the kernel's schedstat of the thread (the rest: asleep, e.g. on a lock or I/O). Load average: ${load0} at start, ${loadavg()} at end.`);
  rmSync(indexed, { recursive: true, force: true });
} finally {
  if (src.temp) rmSync(src.dir, { recursive: true, force: true });
}
