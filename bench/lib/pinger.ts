// A process of its own for bench/abuse.ts: pings the server every PING_EVERY_MS until its stdin closes, then
// prints how long each ping took (a JSON array of ms). A process, not a thread of the benchmark: a thread
// shared the benchmark's process with its 50 MB answers (and the memory they take and give back), and one
// ping in a few thousand waited ~300 ms there that no pause of the server's event loop explained.
const url = process.env.PING_URL!;
const headers = JSON.parse(process.env.PING_HEADERS ?? "{}") as Record<string, string>;
const everyMs = Number(process.env.PING_EVERY_MS ?? 10);
let running = true;
void Bun.stdin.text().then(() => (running = false));
const pauses: number[] = [];
const body = JSON.stringify({ jsonrpc: "2.0", id: "ping", method: "ping" });
// At least one ping, however soon the attack settles.
do {
  const t0 = performance.now();
  await (await fetch(url, { method: "POST", headers, body })).text();
  pauses.push(performance.now() - t0);
  await Bun.sleep(everyMs);
} while (running);
process.stdout.write(JSON.stringify(pauses));
