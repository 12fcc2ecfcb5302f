// Benchmarks entry point:  bun bench/run.ts [--quick]
// Runs the foundation benchmark (bench/index-bench.ts), start-up / CLI / peer
// (bench/startup.ts), 100k notes (bench/scale.ts, not with --quick) and the abuse
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
  console.log("usage: bun bench/run.ts [--quick]\n  --quick  2,000 synthetic notes, 50 queries, one run each, no obsidian-hub, no profile, no 100k vault, no qmd");
  process.exit(0);
}
// Timings on a shared machine are only comparable at similar load: say what it was.
console.log(`Load average at start (1/5/15 min, running/total): ${loadavg()}\n`);
console.log(await runIndexBench({ quick }));
console.log("\n" + (await runStartupBench({ quick })));
if (!quick) console.log("\n" + (await runScaleBench()));
else console.log("\n100k-note section skipped (--quick): run `bun bench/scale.ts` (the vault is generated once, ~40 s, and cached).");

// The abuse section (bench/abuse.ts): attacks on a served obsidian-hub, worst ping pause and lost saves.
const hub = join(import.meta.dir, "../../shared/corpora/obsidian-hub");
if (existsSync(hub)) console.log("\n" + abuseReport(await runAbuseBench({ vault: hub, quick })));
else console.log("\nAbuse section skipped: ../shared/corpora/obsidian-hub is not here.");

const others = readdirSync(import.meta.dir).filter((f) => f.endsWith(".ts") && !["run.ts", "index-bench.ts", "abuse.ts", "scale.ts", "startup.ts"].includes(f));
if (others.length) {
  console.log("\nOther benchmarks (run each on its own):");
  for (const f of others.sort()) console.log(`  bun bench/${f}${quick ? " --quick" : ""}`);
}
console.log(`\nLoad average at end: ${loadavg()}`);
