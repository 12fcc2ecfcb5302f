// Run a command in a child process and measure it from the outside: wall time,
// peak RSS and CPU time come from the kernel (wait4 rusage), so they cover
// every thread the child started (Lettuce's parse workers included).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const BUN = process.execPath;

export interface ChildRun {
  pid: number;
  wallMs: number;
  maxRssMb: number;
  cpuMs: number; // user + system, all threads
  stdout: string;
  stderr: string;
  /** CPU per thread, sampled from /proc while the child ran (Linux only; empty elsewhere). */
  threads: ThreadCpu[];
}

export interface ThreadCpu {
  tid: number;
  name: string;
  cpuMs: number;
  /** A process's main thread (the child's own, or that of a process it started: `lettuce index` may relaunch itself). */
  main?: boolean;
  /** The process it belongs to. */
  pid?: number;
}

// Children still running, so that an interrupted benchmark leaves no server behind.
const live = new Set<{ kill(sig?: number | NodeJS.Signals): void }>();

export function track<T extends { kill(sig?: number | NodeJS.Signals): void; exited: Promise<number> }>(p: T): T {
  live.add(p);
  void p.exited.finally(() => live.delete(p));
  return p;
}

export function killChildren(): void {
  for (const p of live) p.kill("SIGKILL");
}

// /proc/<pid>/stat counts in clock ticks; 100 a second on every Linux build that matters here.
const TICK_MS = 10;

export function sampleThreads(pid: number, into: Map<number, ThreadCpu>, depth = 0): void {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return;
  }
  // Processes this one started (a cold `lettuce index` relaunches itself, see lib/index/bulk-relaunch.ts).
  if (depth < 2) {
    for (const t of tids) {
      try {
        for (const c of readFileSync(`/proc/${pid}/task/${t}/children`, "utf8").split(" ")) if (c.trim()) sampleThreads(Number(c), into, depth + 1);
      } catch {
        /* no children file (older kernels) or the thread ended */
      }
    }
  }
  for (const t of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      const name = stat.slice(stat.indexOf("(") + 1, close);
      const f = stat.slice(close + 2).split(" "); // f[0] is field 3 (state): utime is field 14, stime 15
      const cpuMs = (Number(f[11]) + Number(f[12])) * TICK_MS;
      const prev = into.get(Number(t));
      if (!prev || prev.cpuMs < cpuMs) into.set(Number(t), { tid: Number(t), name, cpuMs, main: Number(t) === pid, pid });
    } catch {
      /* the thread ended between readdir and read */
    }
  }
}

/**
 * Run a command to its end and time it. `settle`: write the page cache's dirty pages out first
 * (sync(1), untimed), so that a load of hundreds of MB is not timed while the previous one's
 * writes still drain (at 100k notes that moved single cold runs by up to 40 %).
 */
export async function runChild(cmd: string[], opts: { cwd?: string; env?: Record<string, string>; sampleThreads?: boolean; settle?: boolean } = {}): Promise<ChildRun> {
  if (opts.settle && process.platform !== "win32") Bun.spawnSync(["sync"]);
  const t0 = performance.now();
  const p = track(Bun.spawn(cmd, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdout: "pipe", stderr: "pipe", stdin: "ignore" }));
  const threads = new Map<number, ThreadCpu>();
  const sampler = opts.sampleThreads ? setInterval(() => sampleThreads(p.pid, threads), 25) : null;
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  const wallMs = performance.now() - t0;
  if (sampler) clearInterval(sampler);
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited with ${code}:\n${stderr || stdout}`);
  const ru = p.resourceUsage();
  return {
    pid: p.pid,
    wallMs,
    maxRssMb: ru ? ru.maxRSS / (1024 * 1024) : NaN,
    cpuMs: ru ? Number(ru.cpuTime.total) / 1000 : NaN,
    stdout,
    stderr,
    threads: [...threads.values()].sort((a, b) => b.cpuMs - a.cpuMs),
  };
}

/** CPU split by thread: the main thread, Bun Worker threads, and the rest (JIT compiler, GC, I/O pool). */
export function threadSplit(run: ChildRun): { main: number; workers: number; other: number } {
  const out = { main: 0, workers: 0, other: 0 };
  for (const t of run.threads) {
    if (t.tid === run.pid || t.main) out.main += t.cpuMs;
    else if (t.name === "Worker") out.workers += t.cpuMs;
    else out.other += t.cpuMs;
  }
  return out;
}

/** The last line of stdout that parses as JSON (commands may print other lines first). */
export function lastJson<T>(stdout: string): T {
  const lines = stdout.trim().split("\n").reverse();
  for (const l of lines) {
    if (!l.trim().startsWith("{")) continue;
    try {
      return JSON.parse(l) as T;
    } catch {
      /* not this line */
    }
  }
  throw new Error(`no JSON line in output:\n${stdout}`);
}

/** A temp dir for a bench's vaults and floors; on Ctrl-C the children get the signal too, and the dir must not stay behind. */
export function benchScratch(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const onSignal = () => {
    killChildren();
    rmSync(dir, { recursive: true, force: true });
    process.exit(130);
  };
  process.once("SIGINT", onSignal);
  return {
    dir,
    remove() {
      process.off("SIGINT", onSignal);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
