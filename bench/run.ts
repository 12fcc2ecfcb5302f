// Benchmarks entry point:  bun bench/run.ts [--quick]
// Runs the foundation benchmark (bench/index-bench.ts) and prints its Markdown
// report on stdout (progress goes to stderr). Other bench/*.ts scripts are
// listed, not run: each prints its own table; run them by name.
import { readdirSync } from "node:fs";
import { runIndexBench } from "./index-bench";

const quick = process.argv.includes("--quick");
if (process.argv.includes("--help")) {
  console.log("usage: bun bench/run.ts [--quick]\n  --quick  2,000 synthetic notes, 50 queries, one run each, no obsidian-hub, no profile");
  process.exit(0);
}
console.log(await runIndexBench({ quick }));

const others = readdirSync(import.meta.dir).filter((f) => f.endsWith(".ts") && f !== "run.ts" && f !== "index-bench.ts");
if (others.length) {
  console.log("\nOther benchmarks (run each on its own):");
  for (const f of others.sort()) console.log(`  bun bench/${f}${quick ? " --quick" : ""}`);
}
