// Loaded with `bun --preload` into a `lettuce serve` under measurement (bench/request-thread.ts):
// a 1 ms interval on the request thread records how late each tick fires. A late tick is time the
// thread could not take a request: its own work (a background step, a write, a GC pause) or a core
// it did not get. The ticks later than 2 ms go to LAG_PROBE_OUT as [ms since start, ms late].
import { writeFileSync } from "node:fs";

const out = process.env.LAG_PROBE_OUT;
if (out) {
  const late: [number, number][] = [];
  const t0 = performance.now();
  let last = t0;
  setInterval(() => {
    const now = performance.now();
    if (now - last - 1 > 2) late.push([Math.round(now - t0), Math.round((now - last - 1) * 10) / 10]);
    last = now;
  }, 1);
  setInterval(() => writeFileSync(out, JSON.stringify(late)), 1000);
}
