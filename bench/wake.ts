// Wake latency of the await_directives long-poll: a directive written to disk
// → the parked HTTP call returns. 100 wakes; p50/p99 of
//   write → response            (what an agent sees; includes the watcher's debounce)
//   watcher event → response    (from the moment fs.watch reports the file; goal ≤ 250 ms)
// and what 200 parked calls cost while they wait (CPU time over an idle second).
//
//   bun bench/wake.ts [--vault PATH] [--wakes N]
//
// The server runs in this process (real HTTP on 127.0.0.1, real watcher) so
// the bench can see when a call is parked before it writes the file.
import { watch, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { directiveHub } from "../lib/work/directive-hub";
import { serveVaultCopy } from "./lib/served-vault";
import { loadavg, median, percentile } from "./lib/stats";

const { values } = parseArgs({ options: { vault: { type: "string" }, wakes: { type: "string" } } });
const SRC = resolve(values.vault ?? join(import.meta.dir, "../examples/vault"));
const WAKES = Number(values.wakes ?? 100);

const served = await serveVaultCopy(SRC, "wake", { watch: true });
const { root, vault, server, token, indexMs } = served;
const hub = directiveHub(vault);

async function poll(cursor: number, timeoutMs = 30_000): Promise<{ cursor: number; timedOut: boolean; directives: unknown[] }> {
  const res = await fetch(server.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "await_directives", arguments: { cursor, timeout_ms: timeoutMs } } }),
  });
  const body = (await res.json()) as { result: { content: { text: string }[] } };
  return JSON.parse(body.result.content[0]!.text);
}

async function untilParked(n: number): Promise<void> {
  while (hub.parked < n) await Bun.sleep(1);
}

// Our own watcher, to timestamp when the platform reports the write.
let seenAt = 0;
const probe = watch(join(root), { recursive: true }, (_e, f) => {
  if (!seenAt && String(f).endsWith("Wake.md")) seenAt = performance.now();
});

let { cursor } = await poll(0);
const fromWrite: number[] = [];
const fromWatcher: number[] = [];
for (let i = 0; i < WAKES; i++) {
  const p = poll(cursor);
  await untilParked(1);
  seenAt = 0;
  const w = performance.now();
  // Alternate: a new directive, then the same one completed.
  writeFileSync(join(root, "Wake.md"), `# Wake\n\n> [!${i % 2 ? "ai-done" : "ai"}] wake ${i - (i % 2)}\n`);
  const r = await p;
  const done = performance.now();
  if (r.timedOut) throw new Error(`wake ${i} timed out`);
  cursor = r.cursor;
  fromWrite.push(done - w);
  if (seenAt) fromWatcher.push(done - seenAt);
}

// Idle cost of many parked calls: CPU used by this process over one second with 200 parked.
const N = 200;
const parked = Array.from({ length: N }, () => poll(cursor, 20_000));
await untilParked(N);
const cpu0 = process.cpuUsage();
await Bun.sleep(1000);
const cpu = process.cpuUsage(cpu0);
writeFileSync(join(root, "Wake.md"), "# Wake\n\n> [!ai] everyone\n");
const wakeAll0 = performance.now();
await Promise.all(parked);
const wakeAllMs = performance.now() - wakeAll0;

probe.close();
await served.close();

const f = (x: number) => `${x.toFixed(1)} ms`;
console.log(`# await_directives wake latency (${WAKES} wakes, vault ${SRC}, indexed in ${indexMs.toFixed(0)} ms; load ${loadavg()})\n`);
console.log("| measure | p50 | p99 | max |");
console.log("| --- | --- | --- | --- |");
console.log(`| write → poll returns | ${f(median(fromWrite))} | ${f(percentile(fromWrite, 99))} | ${f(Math.max(...fromWrite))} |`);
console.log(`| watcher event → poll returns (${fromWatcher.length} seen) | ${f(median(fromWatcher))} | ${f(percentile(fromWatcher, 99))} | ${f(Math.max(...fromWatcher))} |`);
console.log(`\n${N} parked calls: ${((cpu.user + cpu.system) / 1000).toFixed(1)} ms CPU over 1 s idle; all ${N} answered ${f(wakeAllMs)} after the write.`);
console.log("Goal: write → return p50 ≤ 100 ms; watcher → return ≤ 250 ms.");
