// What one lint page and wiki_health add to a process's memory on a big vault:
//
//   bun bench/lib/lint-memory.ts <vault>
//
// Opens the vault's index read-only (as a read worker does), then runs the
// jobs a scale run sends and prints RSS and the JS heap after each, in MB.
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { runJob } from "../../lib/offload/jobs";
import { ftsPath } from "../../lib/store/fts-db";

const vault = process.argv[2]!;
const db = new Database(join(vault, ".lettuce", "index.db"), { readonly: true });
db.query("ATTACH DATABASE ? AS ftsdb").run(ftsPath(vault));
const mb = (x: number) => Math.round(x / 2 ** 20);
const peak = () => {
  const m = /VmHWM:\s+(\d+) kB/.exec(require("node:fs").readFileSync("/proc/self/status", "utf8"));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
};
const out: Record<string, unknown> = {};
const step = (label: string, fn: () => unknown) => {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  fn();
  const c = process.cpuUsage(c0);
  const ms = performance.now() - t0;
  Bun.gc(true);
  const m = process.memoryUsage();
  out[label] = { ms: Math.round(ms), cpuMs: Math.round((c.user + c.system) / 1000), rss: mb(m.rss), heap: mb(m.heapUsed), peak: peak() };
};
step("open", () => db.query("SELECT count(*) FROM notes").get());
step("lint", () => runJob(db, { kind: "lint", filter: {}, offset: 0, limit: 100 }));
step("lint again", () => runJob(db, { kind: "lint", filter: {}, offset: 0, limit: 100 }));
step("health", () => runJob(db, { kind: "health" }));
console.log(JSON.stringify(out, null, 1));
