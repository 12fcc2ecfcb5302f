import { readFileSync } from "node:fs";

// How long the test process's event loop (the in-process server's too) went without a turn.

/** The longest the event loop went without a turn while `work` ran, and what `work` gave. */
export async function longestStall<T>(work: () => Promise<T>): Promise<{ result: T; stall: number }> {
  let last = performance.now();
  let stall = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last);
    last = now;
  }, 5);
  try {
    const result = await work();
    stall = Math.max(stall, performance.now() - last);
    return { result, stall };
  } finally {
    clearInterval(tick);
  }
}

/** CPU time (ms) of the thread running the event loop, from the kernel's scheduler counters (Linux; null elsewhere). */
function loopThreadCpu(): number | null {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ")[0]) / 1e6;
  } catch {
    return null;
  }
}

/**
 * longestStall, and the most CPU time used between two turns of the loop (ms). Unlike a stall in wall-clock
 * time, the CPU figure does not grow when a loaded machine gives the process no core for a while: a bound on
 * it holds on a busy CI machine. `loopThread`: only the event loop's own thread (Linux, in steps of the
 * scheduler's tick, ~4 ms), for work with threads of its own beside it; otherwise the whole process (a
 * collector's threads too), for work with none.
 */
export async function longestBusy<T>(work: () => Promise<T>, opts: { loopThread?: boolean } = {}): Promise<{ result: T; stall: number; busy: number }> {
  const cpu = () => {
    const own = opts.loopThread ? loopThreadCpu() : null;
    if (own !== null) return own;
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  let lastCpu = cpu();
  let busy = 0;
  const tick = setInterval(() => {
    const now = cpu();
    busy = Math.max(busy, now - lastCpu);
    lastCpu = now;
  }, 5);
  try {
    const { result, stall } = await longestStall(work);
    busy = Math.max(busy, cpu() - lastCpu);
    return { result, stall, busy };
  } finally {
    clearInterval(tick);
  }
}
