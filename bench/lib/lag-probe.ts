// Loaded with `bun --preload` into a `lettuce serve` under measurement (bench/request-thread.ts):
// a 1 ms interval on the request thread records how late each tick fires. A late tick is time the
// thread could not take a request: its own work (a background step, a write, a GC pause) or a core
// it did not get. The ticks later than 2 ms go to LAG_PROBE_OUT as [ms since start, ms late, ms of
// CPU the thread used meanwhile, ms it spent runnable but waiting for a core]: the kernel's per-thread
// schedstat tells the two causes apart (-1, -1 where /proc has no schedstat).
import { readFileSync, writeFileSync } from "node:fs";

const out = process.env.LAG_PROBE_OUT;
if (out) {
  const late: [number, number, number, number][] = [];
  // The main thread's id is the process id on Linux.
  const stat = `/proc/self/task/${process.pid}/schedstat`;
  const sched = (): [number, number] | null => {
    try {
      const [cpu, wait] = readFileSync(stat, "latin1").split(" ");
      return [Number(cpu) / 1e6, Number(wait) / 1e6];
    } catch {
      return null;
    }
  };
  const t0 = performance.now();
  let last = t0;
  let lastSched = sched();
  setInterval(() => {
    const now = performance.now();
    const s = lastSched ? sched() : null;
    if (now - last - 1 > 2) {
      const r = (x: number) => Math.round(x * 10) / 10;
      late.push([Math.round(now - t0), r(now - last - 1), s && lastSched ? r(s[0] - lastSched[0]) : -1, s && lastSched ? r(s[1] - lastSched[1]) : -1]);
    }
    last = now;
    lastSched = s;
  }, 1);
  setInterval(() => writeFileSync(out, JSON.stringify(late)), 1000);
}
