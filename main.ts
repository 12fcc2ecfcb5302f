#!/usr/bin/env bun
// The lettuce command: see lib/cli/run.ts for the commands.
import { runCli } from "./lib/cli/run";
import { loadSqliteVec } from "./lib/store/sqlite-vec";

loadSqliteVec.prepare();
runCli(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    console.error("lettuce:", e instanceof Error ? e.message : e);
    process.exit(1);
  },
);
