// Worker thread for bench/abuse.ts: pings the server every `everyMs` and
// reports how long each ping took. In a thread of its own, so that the
// benchmark's own work (building a 2 MB batch, reading a 9 MB answer) never
// shows up as a server pause.
declare const self: Worker;

let running = false;
self.onmessage = async (ev: MessageEvent<{ cmd: "start"; url: string; headers: Record<string, string>; everyMs: number } | { cmd: "stop" }>) => {
  const m = ev.data;
  if (m.cmd === "stop") {
    running = false;
    return;
  }
  running = true;
  const pauses: number[] = [];
  const body = JSON.stringify({ jsonrpc: "2.0", id: "ping", method: "ping" });
  while (running) {
    const t0 = performance.now();
    await (await fetch(m.url, { method: "POST", headers: m.headers, body })).text();
    pauses.push(performance.now() - t0);
    await Bun.sleep(m.everyMs);
  }
  self.postMessage(pauses);
};
