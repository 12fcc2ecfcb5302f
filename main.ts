#!/usr/bin/env bun
// The lettuce command: see lib/cli/run.ts for the commands.
import { versionLine } from "./lib/version";

const argv = process.argv.slice(2);
// A model host (lib/providers/model-host.ts): the compiled binary started again to run the built-in
// model in a process of its own. Nothing else of the CLI loads.
const modelHost = process.env.LETTUCE_MODEL_HOST === "1" && typeof process.send === "function";
if (modelHost) void import("./lib/providers/builtin-worker");
// `lettuce --version` answers before anything else is loaded (no database, model, provider or worker).
if (argv.length === 1 && ["--version", "-V", "-v", "version"].includes(argv[0]!)) {
  console.log(versionLine());
  process.exit(0);
}

// No top-level await: compile.sh builds with --bytecode, which needs a module without it.
async function main(): Promise<number> {
  // serve, stdio and embed start again with the engine options they want, before anything else runs (see the module).
  if (argv[0] === "serve" || argv[0] === "stdio" || argv[0] === "embed") {
    const jsc = await import("./lib/platform/jsc-options");
    if (jsc.wantsJscOptions(argv)) jsc.execWithJscOptions(argv);
  }
  // A first `lettuce index` of a vault starts again (in a child where it cannot) with a bulk-load allocator setting (see the module).
  if (argv[0] === "index") {
    const child = (await import("./lib/index/bulk-relaunch")).relaunchForColdIndex(argv);
    if (child) return child;
  }
  // Before any database is opened: LETTUCE_SQLITE_LIB must be in place first (macOS).
  const { configureSqlite } = await import("./lib/store/sqlite-lib");
  configureSqlite();
  const { runCli } = await import("./lib/cli/run");
  return runCli(argv);
}

if (!modelHost) {
  main().then(
    (code) => process.exit(code),
    (e) => {
      console.error("lettuce:", e instanceof Error ? e.message : e);
      process.exit(1);
    },
  );
}
