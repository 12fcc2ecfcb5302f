// The foundation benchmark (issue 2, part 12): cold index, warm restart, peak
// memory and search latency, each beside a floor measured in the same run.
//
//   bun bench/index-bench.ts [--quick]      (or through bench/run.ts)
//   bun bench/index-bench.ts --search-only  (search over MCP HTTP vs its floors only: each vault indexed once)
//
// Every Lettuce figure comes from the real CLI in a fresh child process
// (`main.ts index`, `main.ts serve`), so each index run is cold and its peak
// RSS is the kernel's. Floors: bench/lib/bare-load.ts (the same notes into one
// FTS5 table, nothing else; a walk + stat of the vault) and the same FTS5 query
// run directly on the same index.db. The machine is shared with other work:
// each timing is repeated and the median (cold, restart) or per-query best
// (search) is kept, and the load average is printed beside the figures.
import { cpSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { benchScratch, BUN, lastJson, runChild, threadSplit, type ChildRun } from "./lib/child";
import { profileCommand } from "./lib/cpu-profile";
import { renderReport, type VaultFigures } from "./lib/report";
import { benchSearch } from "./lib/search-bench";
import { loadavg, machineNotes, median } from "./lib/stats";

const REPO = resolve(import.meta.dir, "..");
const MAIN = join(REPO, "main.ts");
const SHARED = resolve(REPO, "../shared");
const HUB = join(SHARED, "corpora/obsidian-hub");
const GEN_VAULT = join(SHARED, "tools/gen-vault.mjs");

export interface BenchOptions {
  quick: boolean;
}

interface Sizes {
  synthetic: number;
  queries: number;
  coldRuns: number;
  restartRuns: number;
  searchRounds: number;
  hub: boolean;
  profile: boolean;
}

function sizesFor(quick: boolean): Sizes {
  return quick
    ? { synthetic: 2000, queries: 50, coldRuns: 1, restartRuns: 2, searchRounds: 1, hub: false, profile: false }
    : { synthetic: 10000, queries: 200, coldRuns: 3, restartRuns: 5, searchRounds: 3, hub: true, profile: true };
}

interface IndexSummary {
  notes: number;
  changed: number;
  ms: number;
}

interface BareSummary {
  files: number;
  bytes: number;
  ms: number;
}

function log(msg: string): void {
  console.error(`[bench ${new Date().toISOString().slice(11, 19)} load ${loadavg()}] ${msg}`);
}

async function lettuceIndex(vault: string): Promise<{ run: ChildRun; out: IndexSummary }> {
  const run = await runChild([BUN, MAIN, "index", vault, "--json"], { cwd: REPO, sampleThreads: true, settle: true });
  return { run, out: lastJson<IndexSummary>(run.stdout) };
}

async function measureVault(name: string, vault: string, sz: Sizes, scratch: string): Promise<VaultFigures> {
  const loadBefore = loadavg();
  const cold: { run: ChildRun; out: IndexSummary }[] = [];
  const bare: { run: ChildRun; out: BareSummary }[] = [];
  const py: ChildRun[] = [];
  const bareDb = join(scratch, `bare-${name}.db`);
  // Lettuce and the floor take turns, so a burst of load from elsewhere hits both alike.
  for (let i = 0; i < sz.coldRuns; i++) {
    rmSync(join(vault, ".lettuce"), { recursive: true, force: true });
    log(`${name}: cold index ${i + 1}/${sz.coldRuns}`);
    const c = await lettuceIndex(vault);
    if (c.out.changed !== c.out.notes) throw new Error(`${name}: a cold run indexed ${c.out.changed} of ${c.out.notes} notes`);
    cold.push(c);
    for (const s of ["", "-wal", "-shm"]) rmSync(bareDb + s, { force: true });
    log(`${name}: bare FTS5 load ${i + 1}/${sz.coldRuns}`);
    const b = await runChild([BUN, join(REPO, "bench/lib/bare-load.ts"), "load", vault, bareDb], { settle: true });
    bare.push({ run: b, out: lastJson<BareSummary>(b.stdout) });
    // The same floor in Python's sqlite3: a floor measured only in our own runtime could flatter us.
    for (const s of ["", "-wal", "-shm"]) rmSync(bareDb + s, { force: true });
    log(`${name}: bare FTS5 load in Python ${i + 1}/${sz.coldRuns}`);
    py.push(await runChild(["python3", join(REPO, "bench/lib/bare_load.py"), vault, bareDb], { settle: true }));
  }
  for (const s of ["", "-wal", "-shm"]) rmSync(bareDb + s, { force: true });

  const restart: { run: ChildRun; out: IndexSummary }[] = [];
  const walk: ChildRun[] = [];
  for (let i = 0; i < sz.restartRuns; i++) {
    log(`${name}: warm restart ${i + 1}/${sz.restartRuns}`);
    const r = await lettuceIndex(vault);
    if (r.out.changed !== 0) throw new Error(`${name}: a restart on an unchanged vault re-indexed ${r.out.changed} notes`);
    restart.push(r);
    walk.push(await runChild([BUN, join(REPO, "bench/lib/bare-load.ts"), "walk", vault]));
  }

  log(`${name}: search, ${sz.queries} queries × ${sz.searchRounds} rounds`);
  const search = await benchSearch(vault, sz.queries, { rounds: sz.searchRounds, limit: 10 });

  log(`${name}: phase timings`);
  const phases = lastJson<VaultFigures["phases"]>((await runChild([BUN, join(REPO, "bench/lib/phases.ts"), vault])).stdout);

  const med = (xs: number[]) => median(xs);
  return {
    name,
    notes: cold[0]!.out.notes,
    bareFiles: bare[0]!.out.files,
    bytes: bare[0]!.out.bytes,
    cold: {
      wall: med(cold.map((c) => c.run.wallMs)),
      best: Math.min(...cold.map((c) => c.run.wallMs)),
      internal: med(cold.map((c) => c.out.ms)),
      rss: Math.max(...cold.map((c) => c.run.maxRssMb)),
      cpu: med(cold.map((c) => c.run.cpuMs)),
      threads: {
        main: med(cold.map((c) => threadSplit(c.run).main)),
        workers: med(cold.map((c) => threadSplit(c.run).workers)),
        other: med(cold.map((c) => threadSplit(c.run).other)),
      },
    },
    bare: {
      wall: med(bare.map((b) => b.run.wallMs)),
      best: Math.min(...bare.map((b) => b.run.wallMs)),
      internal: med(bare.map((b) => b.out.ms)),
      rss: Math.max(...bare.map((b) => b.run.maxRssMb)),
      cpu: med(bare.map((b) => b.run.cpuMs)),
    },
    pyBare: { wall: med(py.map((p) => p.wallMs)), rss: Math.max(...py.map((p) => p.maxRssMb)), cpu: med(py.map((p) => p.cpuMs)) },
    restart: {
      wall: med(restart.map((r) => r.run.wallMs)),
      internal: med(restart.map((r) => r.out.ms)),
      rss: Math.max(...restart.map((r) => r.run.maxRssMb)),
      walkWall: med(walk.map((w) => w.wallMs)),
    },
    search,
    phases,
    load: `${loadBefore} → ${loadavg()}`,
  };
}

export async function runIndexBench(opts: BenchOptions): Promise<string> {
  const sz = sizesFor(opts.quick);
  const tmp = benchScratch("lettuce-bench-");
  const scratch = tmp.dir;
  const started = new Date();
  const loadStart = loadavg();
  try {
    const vaults: { name: string; dir: string }[] = [];
    if (sz.hub) {
      if (existsSync(HUB)) {
        const dir = join(scratch, "obsidian-hub");
        log("copying obsidian-hub");
        cpSync(HUB, dir, { recursive: true, filter: (s) => !s.includes("/.lettuce") });
        vaults.push({ name: "obsidian-hub", dir });
      } else log(`skipping obsidian-hub: ${HUB} not found`);
    }
    const syn = join(scratch, `synthetic-${sz.synthetic}`);
    mkdirSync(syn);
    log(`generating ${sz.synthetic} synthetic notes`);
    await runChild([Bun.which("node") ?? BUN, GEN_VAULT, syn, String(sz.synthetic)]);
    vaults.push({ name: `synthetic ${sz.synthetic / 1000}k`, dir: syn });

    const figures: VaultFigures[] = [];
    for (const v of vaults) figures.push(await measureVault(v.name, v.dir, sz, scratch));

    let profile: Awaited<ReturnType<typeof profileCommand>> | null = null;
    if (sz.profile) {
      log(`profiling a cold index of ${syn}`);
      rmSync(join(syn, ".lettuce"), { recursive: true, force: true });
      profile = await profileCommand([MAIN, "index", syn, "--json"], REPO);
    }
    return renderReport({
      started,
      quick: opts.quick,
      machine: machineNotes(),
      load: `${loadStart} at start, ${loadavg()} at end`,
      runs: `cold ${sz.coldRuns}×, restart ${sz.restartRuns}×, search ${sz.queries} queries × ${sz.searchRounds} timed round(s) after a warm-up round`,
      figures,
      profile,
    });
  } finally {
    tmp.remove();
  }
}

/**
 * Only the search rows (issue 15, part 2): each vault indexed once, then the same
 * query set through MCP HTTP, in-process `searchNotes` and the bare FTS5 query.
 */
export async function runSearchOnlyBench(opts: BenchOptions): Promise<string> {
  const sz = sizesFor(opts.quick);
  const tmp = benchScratch("lettuce-bench-");
  const scratch = tmp.dir;
  const loadStart = loadavg();
  try {
    const vaults: { name: string; dir: string }[] = [];
    if (sz.hub && existsSync(HUB)) {
      const dir = join(scratch, "obsidian-hub");
      cpSync(HUB, dir, { recursive: true, filter: (s) => !s.includes("/.lettuce") });
      vaults.push({ name: "obsidian-hub", dir });
    }
    const syn = join(scratch, `synthetic-${sz.synthetic}`);
    mkdirSync(syn);
    await runChild([Bun.which("node") ?? BUN, GEN_VAULT, syn, String(sz.synthetic)]);
    vaults.push({ name: `synthetic ${sz.synthetic / 1000}k`, dir: syn });
    const f = (x: number) => `${x.toFixed(2)} ms`;
    const signed = (x: number) => `${x >= 0 ? "+" : "−"}${f(Math.abs(x))}`;
    const rows: string[] = [];
    for (const v of vaults) {
      log(`${v.name}: index`);
      await lettuceIndex(v.dir);
      log(`${v.name}: search, ${sz.queries} queries × ${sz.searchRounds} rounds`);
      const s = await benchSearch(v.dir, sz.queries, { rounds: sz.searchRounds, limit: 10 });
      rows.push(
        `| ${v.name} | ${f(s.floor.p50)} / ${f(s.floor.p99)} | ${f(s.tool.p50)} / ${f(s.tool.p99)} | ${f(s.http.p50)} / ${f(s.http.p99)} | ${signed(s.http.p50 - s.floor.p50)} / ${signed(s.http.p99 - s.floor.p99)} | ${f(s.perQueryTransport.p50)} / ${f(s.perQueryTransport.p99)} | ${s.serverIdle ? "yes" : "**no**"} |`,
      );
    }
    return [
      `## Search over MCP HTTP vs the bare FTS5 query (issue 15, part 2), ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC`,
      "",
      `${sz.queries} queries, each query's best of ${sz.searchRounds} rounds after a warm-up round; load ${loadStart} at start, ${loadavg()} at end. Goal: HTTP p50 and p99 within +1 ms of the floor.`,
      "",
      "| vault | floor p50 / p99 | searchNotes in-process p50 / p99 | MCP HTTP p50 / p99 | HTTP − floor (p50 / p99 of the percentiles) | HTTP − searchNotes per query, p50 / p99 | server idle |",
      "|---|---|---|---|---|---|---|",
      ...rows,
    ].join("\n");
  } finally {
    tmp.remove();
  }
}

if (import.meta.main) {
  const quick = process.argv.includes("--quick");
  console.log(process.argv.includes("--search-only") ? await runSearchOnlyBench({ quick }) : await runIndexBench({ quick }));
}
