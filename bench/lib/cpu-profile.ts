// Run a command under Bun's sampling profiler (--cpu-prof-md) and pull the
// interesting rows out of its Markdown report. The profiler samples the main
// thread only: parse workers do not appear, which is what we want to see —
// the main thread is the one that inserts into SQLite.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUN, runChild } from "./child";
import { coldIndexEnv } from "../../lib/index/bulk-relaunch";

export interface ProfileRow {
  selfPct: number;
  self: string;
  totalPct: number;
  total: string;
  fn: string;
  where: string;
}

function tableAfter(md: string, heading: string): ProfileRow[] {
  const start = md.indexOf(heading);
  if (start === -1) return [];
  const rows: ProfileRow[] = [];
  for (const line of md.slice(start).split("\n").slice(1)) {
    if (line.startsWith("## ")) break;
    const cells = line.split("|").map((c) => c.trim());
    // | Self% | Self | Total% | Total | Function | Location |  or  | Total% | Total | Self% | Self | Function | Location |
    if (cells.length < 8 || !/^[\d.]+%$/.test(cells[1]!)) continue;
    const selfFirst = heading.includes("Self");
    rows.push({
      selfPct: parseFloat(selfFirst ? cells[1]! : cells[3]!),
      self: selfFirst ? cells[2]! : cells[4]!,
      totalPct: parseFloat(selfFirst ? cells[3]! : cells[1]!),
      total: selfFirst ? cells[4]! : cells[2]!,
      fn: cells[5]!.replace(/`/g, ""),
      where: cells[6]!.replace(/`/g, ""),
    });
  }
  return rows;
}

export async function profileCommand(args: string[], repo: string): Promise<{ duration: string; hot: ProfileRow[]; libTree: ProfileRow[] }> {
  const dir = mkdtempSync(join(tmpdir(), "lettuce-bench-prof-"));
  try {
    // The profiled process must be the one that works: a cold `lettuce index` would otherwise relaunch
    // itself (lib/index/bulk-relaunch.ts) and the profile show a parent waiting. Same allocator and JIT settings.
    await runChild([BUN, "--cpu-prof-md", `--cpu-prof-dir=${dir}`, ...args], { env: { LETTUCE_NO_RELAUNCH: "1", ...coldIndexEnv() } });
    const file = readdirSync(dir).find((f) => f.endsWith(".md"));
    if (!file) throw new Error("the profiler wrote no report");
    const md = readFileSync(join(dir, file), "utf8");
    const duration = /\|\s*([\d.]+m?s)\s*\|\s*\d+\s*\|/.exec(md)?.[1] ?? "?";
    const rel = (r: ProfileRow) => ({ ...r, where: r.where.replace(repo + "/", "") });
    return {
      duration,
      hot: tableAfter(md, "## Hot Functions (Self Time)").slice(0, 12).map(rel),
      // The call tree's rows in our own lib/ show which source line a native cost belongs to.
      libTree: tableAfter(md, "## Call Tree (Total Time)")
        .filter((r) => r.where.startsWith(repo + "/lib/"))
        .slice(0, 12)
        .map(rel),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
