// A cold `lettuce index` of one vault, two checkouts taking turns with the floors (the bare FTS5 load in
// Bun and in Python, bench/lib/bare-load.ts and bare_load.py): for an A/B of a change to the cold index
// on a shared machine, where only interleaved runs compare. Each checkout indexes its own copy of the
// vault (made once, in a temp dir), deleted before each run; every figure is the kernel's (wait4).
//
//   bun bench/cold-ab.ts --base DIR [--runs 5] [--vault DIR] [--new .]
// (--base: another checkout, e.g. `git worktree add ../lettuce-base HEAD~1` with its own node_modules.)
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { BUN, lastJson, runChild, threadSplit, type ChildRun } from "./lib/child";
import { loadavg, median } from "./lib/stats";

const argv = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = argv.indexOf(name);
  return i === -1 ? dflt : argv[i + 1]!;
};
const REPO = resolve(import.meta.dir, "..");
const runs = Number(opt("--runs", "5"));
const vault = resolve(opt("--vault", join(REPO, "../shared/corpora/obsidian-hub")));
const sides = [
  ["base", resolve(opt("--base", ""))],
  ["new", resolve(opt("--new", REPO))],
] as const;

if (!argv.includes("--base")) {
  console.error("usage: bun bench/cold-ab.ts --base DIR [--runs 5] [--vault DIR] [--new DIR]");
  process.exit(2);
}

const scratch = mkdtempSync(join(tmpdir(), "lettuce-cold-ab-"));
const copies = new Map<string, string>();
for (const [name] of sides) {
  const dir = join(scratch, name);
  cpSync(vault, dir, { recursive: true, filter: (s) => !s.includes("/.lettuce") });
  copies.set(name, dir);
}
const bareDb = join(scratch, "bare.db");
const dropBare = () => {
  for (const s of ["", "-wal", "-shm"]) rmSync(bareDb + s, { force: true });
};

type Row = { wall: number; cpu: number; main?: number; workers?: number; other?: number };
const rows = new Map<string, Row[]>();
const push = (k: string, r: ChildRun) => {
  const t = threadSplit(r);
  (rows.get(k) ?? rows.set(k, []).get(k)!).push({ wall: r.wallMs, cpu: r.cpuMs, ...(r.threads.length ? t : {}) });
};
console.error(`load ${loadavg()}`);
try {
  for (let i = 0; i < runs; i++) {
    // The order turns each round, so that neither side always follows the same one.
    const order = i % 2 ? [...sides].reverse() : sides;
    for (const [name, root] of order) {
      const dir = copies.get(name)!;
      rmSync(join(dir, ".lettuce"), { recursive: true, force: true });
      const r = await runChild([BUN, join(root, "main.ts"), "index", dir, "--json"], { cwd: root, sampleThreads: true, settle: true });
      const out = lastJson<{ notes: number; changed: number }>(r.stdout);
      if (out.changed !== out.notes) throw new Error(`${name}: a cold run indexed ${out.changed} of ${out.notes}`);
      push(name, r);
    }
    dropBare();
    push("bare Bun", await runChild([BUN, join(REPO, "bench/lib/bare-load.ts"), "load", vault, bareDb], { settle: true }));
    dropBare();
    push("bare Python", await runChild(["python3", join(REPO, "bench/lib/bare_load.py"), vault, bareDb], { settle: true }));
    console.error(`round ${i + 1}/${runs} done, load ${loadavg()}`);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

const f = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? "–" : `${Math.round(x)}`);
const med = (k: string, field: keyof Row) => median(rows.get(k)!.map((r) => r[field] ?? NaN));
console.log(`${vault}, ${runs} interleaved runs, medians (ms); load at the end ${loadavg()}`);
console.log("| run | wall | CPU user+sys | main · workers · other | wall vs Bun floor | wall vs Python floor | CPU vs Bun floor | every wall | every CPU |");
console.log("|---|---:|---:|---|---:|---:|---:|---|---|");
for (const k of rows.keys()) {
  const wall = med(k, "wall");
  const cpu = med(k, "cpu");
  const ratio = (floor: string, field: keyof Row) => (med(k, field) / med(floor, field)).toFixed(2) + "×";
  const split = rows.get(k)![0]!.main === undefined ? "" : `${f(med(k, "main"))} · ${f(med(k, "workers"))} · ${f(med(k, "other"))}`;
  console.log(
    `| ${k} | ${f(wall)} | ${f(cpu)} | ${split} | ${ratio("bare Bun", "wall")} | ${ratio("bare Python", "wall")} | ${ratio("bare Bun", "cpu")} | ${rows.get(k)!.map((r) => f(r.wall)).join(" ")} | ${rows.get(k)!.map((r) => f(r.cpu)).join(" ")} |`,
  );
}
