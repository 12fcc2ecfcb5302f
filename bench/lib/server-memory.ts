// The server's memory through a scale run's sequence, sampled after each step:
//
//   bun bench/lib/server-memory.ts <vault> [searches]
//
// Starts a real `lettuce serve` (keyword only), waits for its start-up scan,
// then sends `searches` searches (default 1,000), lint {limit: 100},
// wiki_health and link_graph depth 3 over MCP HTTP. Prints one JSON line:
// RSS now and peak (VmHWM) in MB after each step.
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { ftsPath } from "../../lib/store/fts-db";
import { makeQueries } from "./queries";
import { cliToken, startServer, vmHwmMb, vmRssMb, waitIdle } from "./search-bench";

const vault = process.argv[2]!;
const searches = Number(process.argv[3] ?? 1000);
const db = new Database(join(vault, ".lettuce", "index.db"), { readonly: true });
db.query("ATTACH DATABASE ? AS ftsdb").run(ftsPath(vault));
const queries = makeQueries(db, 200).map((q) => q.q);
const centre =
  (db.query("SELECT resolved FROM links WHERE resolved IS NOT NULL GROUP BY resolved ORDER BY count(*) DESC LIMIT 1").get() as { resolved: string } | null)?.resolved ??
  (db.query("SELECT path FROM notes LIMIT 1").get() as { path: string }).path;
db.close();
const token = await cliToken(vault, "read", `mem-${Date.now()}`);
const server = await startServer(vault);
const out: Record<string, { rss: number; peak: number; ms?: number }> = {};
const sample = (label: string, ms?: number) => (out[label] = { rss: Math.round(vmRssMb(server.pid)), peak: Math.round(vmHwmMb(server.pid)), ms });
try {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` };
  const call = async (name: string, args: Record<string, unknown>) => {
    const t0 = performance.now();
    const res = await fetch(server.url, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }) });
    const text = await res.text();
    if (!res.ok || text.includes('"isError":true')) throw new Error(`${name} failed: ${text.slice(0, 300)}`);
    return performance.now() - t0;
  };
  sample("ready");
  await waitIdle(server.pid);
  sample("idle");
  for (let i = 0; i < searches; i++) await call("search", { query: queries[i % queries.length]!, limit: 10 });
  sample(`${searches} searches`);
  sample("lint", Math.round(await call("lint", { limit: 100 })));
  sample("lint again", Math.round(await call("lint", { limit: 100 })));
  sample("wiki_health", Math.round(await call("wiki_health", {})));
  sample("link_graph", Math.round(await call("link_graph", { path: centre, depth: 3 })));
} finally {
  await server.stop();
}
console.log(JSON.stringify(out));
