// Small numeric and formatting helpers for the benchmark tables.
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Nearest-rank percentile (p in 0..100). */
export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[i]!;
}

export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return "–";
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  return `${ms.toFixed(2)} ms`;
}

export function fmtInt(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

export function loadavg(): string {
  try {
    return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 4).join(" ");
  } catch {
    return "n/a";
  }
}

/** Seeded PRNG (mulberry32): the same seed gives the same query set on every run. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function machineNotes(): string {
  const cpu = cpus()[0]?.model ?? "unknown CPU";
  const sqlite = (new Database(":memory:").query("SELECT sqlite_version() AS v").get() as { v: string }).v;
  let kernel = "";
  try {
    kernel = readFileSync("/proc/sys/kernel/osrelease", "utf8").trim();
  } catch {
    /* not Linux */
  }
  return `${cpu}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Linux ${kernel}, Bun ${Bun.version}, SQLite ${sqlite}`;
}
