// Binary start-up: how long `lettuce --version` and `lettuce --help` take from
// the compiled binary, and their peak memory, against an empty Bun binary (the
// floor: what any compiled Bun program costs to start). Uses dist/lettuce, or
// builds it with compile.sh.   bun bench/binaries.ts [--runs N]
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const REPO = resolve(import.meta.dir, "..");
const runs = Number(process.argv[process.argv.indexOf("--runs") + 1]) || 15;
const tmp = mkdtempSync(join(tmpdir(), "lettuce-bench-bin-"));

try {
  const exe = join(REPO, "dist/lettuce");
  if (!existsSync(exe)) {
    console.error("building dist/lettuce …");
    const b = Bun.spawnSync(["bash", "./compile.sh"], { cwd: REPO, stdout: "inherit", stderr: "inherit" });
    if (b.exitCode !== 0) throw new Error("compile.sh failed");
  }
  writeFileSync(join(tmp, "empty.ts"), 'console.log("0.0.0");\n');
  const floor = join(tmp, "empty");
  Bun.spawnSync([process.execPath, "build", "--compile", join(tmp, "empty.ts"), "--outfile", floor], { stdout: "ignore" });

  const measure = (cmd: string[]) => {
    const times: number[] = [];
    const rss: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const p = Bun.spawnSync(cmd, { stdout: "ignore", stderr: "ignore", env: { PATH: "/usr/bin:/bin", HOME: tmp } });
      times.push(performance.now() - t0);
      rss.push((p.resourceUsage?.maxRSS ?? 0) / 1048576); // bytes → MB
    }
    times.sort((a, b) => a - b);
    rss.sort((a, b) => a - b);
    const q = (a: number[], f: number) => a[Math.min(a.length - 1, Math.floor(a.length * f))]!;
    return `${q(times, 0.5).toFixed(0)} ms | ${q(times, 0.9).toFixed(0)} ms | ${q(rss, 0.5).toFixed(0)} MB`;
  };
  const load = (await Bun.file("/proc/loadavg").text().catch(() => "?")).split(" ")[0];
  console.log(`## Binary start-up (${runs} runs each, load average ${load}; rough on a shared 2-core machine)\n`);
  console.log(`dist/lettuce: ${(statSync(exe).size / 1e6).toFixed(0)} MB\n`);
  console.log("| command | p50 | p90 | peak RSS (p50) |\n| --- | --- | --- | --- |");
  console.log(`| empty Bun binary (floor) | ${measure([floor])} |`);
  console.log(`| lettuce --version | ${measure([exe, "--version"])} |`);
  console.log(`| lettuce --help (loads every command) | ${measure([exe, "--help"])} |`);
  console.log(`| lettuce --version --verbose (SQLite, sqlite-vec) | ${measure([exe, "--version", "--verbose"])} |`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
