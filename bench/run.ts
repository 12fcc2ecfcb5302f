// Benchmarks entry point:  bun bench/run.ts [--quick]
// Runs the foundation benchmark (bench/index-bench.ts), start-up / CLI / peer
// (bench/startup.ts), 100k notes (bench/scale.ts, not with --quick), background
// embedding (bench/embedding.ts: search during the build; full builds not with --quick) and the abuse
// section (bench/abuse.ts) and prints their Markdown reports on stdout (progress,
// with the load average, goes to stderr). Other bench/*.ts scripts are listed,
// not run: each prints its own table; run them by name.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { abuseReport, runAbuseBench } from "./abuse";
import { runIndexBench } from "./index-bench";
import { runScaleBench } from "./scale";
import { runStartupBench } from "./startup";
import { loadavg } from "./lib/stats";

const quick = process.argv.includes("--quick");
if (process.argv.includes("--help")) {
  console.log("usage: bun bench/run.ts [--quick]\n  --quick  2,000 synthetic notes, 50 queries, one run each, no obsidian-hub, no profile, no 100k vault, no qmd; background embedding on 300 notes only");
  process.exit(0);
}
// Timings on a shared machine are only comparable at similar load: say what it was.
console.log(`Load average at start (1/5/15 min, running/total): ${loadavg()}\n`);
console.log(await runIndexBench({ quick }));
console.log("\n" + (await runStartupBench({ quick })));
if (!quick) console.log("\n" + (await runScaleBench()));
else console.log("\n100k-note section skipped (--quick): run `bun bench/scale.ts` (the vault is generated once, ~40 s, and cached).");

// Background embedding (bench/embedding.ts, issue 15 part 1): search idle and during the built-in model's build,
// back to back and 250 ms apart; and, in the full run, time until fully embedded under serve against the
// all-cores floor on a 1,000-note slice (extrapolated to 10k) and on obsidian-hub. Its own process: it ends with exit().
{
  const parts = quick
    ? ["--parts", "latency", "--notes", "300", "--queries", "200", "--spaced", "40"]
    : ["--parts", "latency", "--notes", "10000", "--queries", "1000", "--spaced", "600"];
  const runs = quick ? [parts] : [parts, ["--parts", "build,floor", "--notes", "1000"], ["--parts", "hub"]];
  for (const args of runs) {
    const p = Bun.spawnSync([process.execPath, join(import.meta.dir, "embedding.ts"), ...args], { stdout: "pipe", stderr: "inherit" });
    console.log("\n" + (p.exitCode === 0 ? p.stdout.toString().trim() : `bench/embedding.ts ${args.join(" ")} failed (exit ${p.exitCode})`));
  }
}

// The request thread while the build runs (bench/request-thread.ts): how often and how long it is held, without queries.
{
  const args = quick ? ["--notes", "1000", "--seconds", "20"] : ["--notes", "10000", "--seconds", "60"];
  const p = Bun.spawnSync([process.execPath, join(import.meta.dir, "request-thread.ts"), ...args], { stdout: "pipe", stderr: "inherit" });
  console.log("\n" + (p.exitCode === 0 ? p.stdout.toString().trim() : `bench/request-thread.ts ${args.join(" ")} failed (exit ${p.exitCode})`));
}

// The abuse section (bench/abuse.ts): attacks on a served obsidian-hub, worst ping pause and lost saves.
const hub = join(import.meta.dir, "../../shared/corpora/obsidian-hub");
if (existsSync(hub)) console.log("\n" + abuseReport(await runAbuseBench({ vault: hub, quick })));
else console.log("\nAbuse section skipped: ../shared/corpora/obsidian-hub is not here.");

const others = readdirSync(import.meta.dir).filter((f) => f.endsWith(".ts") && !["run.ts", "index-bench.ts", "abuse.ts", "scale.ts", "startup.ts", "embedding.ts", "request-thread.ts"].includes(f));
if (others.length) {
  console.log("\nOther benchmarks (run each on its own):");
  for (const f of others.sort()) console.log(`  bun bench/${f}${quick ? " --quick" : ""}`);
}
console.log(`\nLoad average at end: ${loadavg()}`);
