// Search latency through the real MCP HTTP endpoint, beside two in-process
// references on the same index.db: the bare FTS5 query (the floor) and the
// search tool's own function (searchNotes), which tells transport cost apart
// from the tool's extra work.
import { Database } from "bun:sqlite";
import { ftsPath } from "../../lib/store/fts-db";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { toFtsQuery } from "../../lib/retrieval/fts-query";
import { searchNotes } from "../../lib/retrieval/search";
import { BUN, lastJson, runChild, track } from "./child";
import { makeQueries, type BenchQuery } from "./queries";
import { percentile } from "./stats";

const REPO = resolve(import.meta.dir, "../..");
const MAIN = join(REPO, "main.ts");

export interface Latency {
  p50: number;
  p99: number;
}

export interface SearchFigures {
  queries: number;
  withHits: number;
  topHitMismatches: number; // queries where HTTP's first hit differs from the floor's
  http: Latency;
  tool: Latency; // searchNotes in-process: the tool's work without transport
  floor: Latency;
  /** Per-query HTTP minus floor, so a slow query does not hide in the tails. */
  perQueryOverhead: Latency;
  /** Per-query HTTP minus the in-process tool: the transport alone. */
  perQueryTransport: Latency;
  serverRssMb: number;
  /** The server's RSS right after the timed rounds (serverRssMb is its peak, start-up scan included). */
  serverRssNowMb: number;
  /** False when the server was still busy with something else when timing began. */
  serverIdle: boolean;
}

export interface Server {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

// Keyword latency is what is measured here, so the server must not be embedding
// notes in the background meanwhile (the semantic service does that after a scan).
const SERVER_ENV = { LETTUCE_EMBED_BACKGROUND: "0" };

/** A new token for `vault`, made with the CLI as a person makes one. */
export async function cliToken(vault: string, scope: "read" | "propose" | "write", name: string): Promise<string> {
  return lastJson<{ token: string }>((await runChild([BUN, MAIN, "token", "create", vault, "--scope", scope, "--name", name, "--json"])).stdout).token;
}

/** tools/call over MCP HTTP with a bearer token: the tool's result (its JSON text, parsed). A JSON-RPC error or a tool failure throws. */
export function toolCaller(url: string, token: string): (name: string, args: unknown) => Promise<any> {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}`, "mcp-protocol-version": "2025-06-18" };
  let id = 0;
  return async (name, args) => {
    const r = (await (await fetch(url, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method: "tools/call", params: { name, arguments: args } }) })).json()) as {
      result?: { content: { text: string }[]; isError?: boolean };
    };
    if (!r.result || r.result.isError) throw new Error(`${name} failed: ${JSON.stringify(r).slice(0, 300)}`);
    return JSON.parse(r.result.content[0]!.text);
  };
}

/** `env`: the server's environment on top of this process's (by default, background embedding off). */
export async function startServer(vault: string, env: Record<string, string> = SERVER_ENV): Promise<Server> {
  const p = track(
    Bun.spawn([BUN, MAIN, "serve", vault, "--port", "0"], {
      env: { ...process.env, ...env },
      stdout: "pipe",
      stderr: "pipe",
      stdin: "ignore",
    }),
  );
  const reader = p.stdout.getReader();
  const dec = new TextDecoder();
  let out = "";
  let url: string | null = null;
  const deadline = Date.now() + 180_000;
  // Ready = the endpoint is up and the start-up scan has finished (so it does not compete with the queries).
  while (!(url && /Index current/.test(out))) {
    if (Date.now() > deadline) {
      p.kill();
      throw new Error(`server did not become ready:\n${out}`);
    }
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited:\n${out}\n${await new Response(p.stderr).text()}`);
    out += dec.decode(value);
    url ??= /MCP endpoint: (\S+)/.exec(out)?.[1] ?? null;
  }
  // Keep draining stdout so the server never blocks on a full pipe.
  void (async () => {
    while (!(await reader.read()).done);
  })().catch(() => {});
  return {
    url: url!,
    pid: p.pid,
    async stop() {
      p.kill("SIGTERM");
      const timer = setTimeout(() => p.kill("SIGKILL"), 10_000);
      await p.exited;
      clearTimeout(timer);
    },
  };
}

function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(f[11]) + Number(f[12]);
  } catch {
    return NaN;
  }
}

/** Wait until the server has been (nearly) idle for a second; false if it never settles. */
export async function waitIdle(pid: number, maxMs = 30_000): Promise<boolean> {
  const until = Date.now() + maxMs;
  while (Date.now() < until) {
    const a = cpuTicks(pid);
    if (Number.isNaN(a)) return true; // no /proc: nothing to check
    await Bun.sleep(1000);
    if (cpuTicks(pid) - a <= 5) return true; // at most 5 % of a core
  }
  return false;
}

export function vmRssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

export function vmHwmMb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

function lat(xs: number[]): Latency {
  return { p50: percentile(xs, 50), p99: percentile(xs, 99) };
}

/**
 * Run the query set `rounds` times (after a warm-up round), each query through
 * all three paths back to back, and keep each query's best time per path: the
 * machine is shared, so the minimum is the figure least disturbed by others.
 */
export async function benchSearch(vault: string, nQueries: number, opts: { rounds: number; limit: number }): Promise<SearchFigures & { sample: BenchQuery[] }> {
  const dbPath = join(vault, ".lettuce", "index.db");
  const db = new Database(dbPath, { readonly: true });
  // The full-text table lives in fts.db, attached as the server attaches it.
  db.query("ATTACH DATABASE ? AS ftsdb").run(ftsPath(vault));
  const queries = makeQueries(db, nQueries);
  const token = await cliToken(vault, "read", `bench-${Date.now()}`);
  const server = await startServer(vault);
  let floorDb: Database | null = null;
  try {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
    };
    let id = 0;
    const rpc = async (method: string, params: unknown) => {
      const res = await fetch(server.url, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }) });
      const text = await res.text();
      if (!res.ok) throw new Error(`HTTP ${res.status}: ${text}`);
      return JSON.parse(text);
    };
    const init = await rpc("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "lettuce-bench", version: "1" } });
    headers["mcp-protocol-version"] = init.result.protocolVersion;

    // The floor has a connection of its own. On the tool's connection it ran right after searchNotes had
    // read the same query's pages into that connection's cache, an advantage no server query has
    // (measured in process at 100k notes: 7.09 ms p50 that way, 7.94 ms on its own connection; 1.23 /
    // 1.40 ms at 10k).
    floorDb = new Database(dbPath, { readonly: true });
    floorDb.query("ATTACH DATABASE ? AS ftsdb").run(ftsPath(vault));
    const floorStmt = floorDb.query(
      `SELECT n.path AS path, n.title AS title, snippet(fts, 1, '', '', '…', 16) AS snippet, rank AS score
       FROM fts JOIN notes n ON n.id = fts.rowid WHERE fts MATCH ? ORDER BY rank LIMIT ?`,
    );
    const runFloor = (q: string) => {
      const m = toFtsQuery(q);
      return m ? (floorStmt.all(m, opts.limit) as { path: string }[]) : [];
    };
    const runHttp = async (q: string) => {
      const r = await rpc("tools/call", { name: "search", arguments: { query: q, limit: opts.limit } });
      if (r.error || r.result?.isError) throw new Error(`search ${JSON.stringify(q)} failed: ${JSON.stringify(r.error ?? r.result)}`);
      return JSON.parse(r.result.content[0].text).items as { path: string }[];
    };
    const time = async (fn: () => unknown) => {
      const t0 = performance.now();
      await fn();
      return performance.now() - t0;
    };

    const best = { http: queries.map(() => Infinity), tool: queries.map(() => Infinity), floor: queries.map(() => Infinity) };
    let withHits = 0;
    let mismatches = 0;
    // Warm-up round, which also checks that HTTP answers what the bare query answers.
    for (const { q } of queries) {
      const [h, f] = [await runHttp(q), runFloor(q)];
      searchNotes(db, q, opts.limit);
      if (f.length) withHits++;
      if ((h[0]?.path ?? null) !== (f[0]?.path ?? null)) mismatches++;
    }
    const serverIdle = await waitIdle(server.pid);
    for (let r = 0; r < opts.rounds; r++) {
      for (const [i, { q }] of queries.entries()) {
        // Each path on its own connection, each cold for this query in its own cache (the last query was
        // another). Whichever runs second finds the query's pages warm in the CPU caches: the floor and HTTP
        // take turns at going first.
        const floor = async () => (best.floor[i] = Math.min(best.floor[i]!, await time(() => runFloor(q))));
        const http = async () => (best.http[i] = Math.min(best.http[i]!, await time(() => runHttp(q))));
        if ((i + r) % 2) await http().then(floor);
        else await floor().then(http);
        best.tool[i] = Math.min(best.tool[i]!, await time(() => searchNotes(db, q, opts.limit)));
      }
    }
    return {
      queries: queries.length,
      withHits,
      topHitMismatches: mismatches,
      http: lat(best.http),
      tool: lat(best.tool),
      floor: lat(best.floor),
      perQueryOverhead: lat(best.http.map((h, i) => h - best.floor[i]!)),
      perQueryTransport: lat(best.http.map((h, i) => h - best.tool[i]!)),
      serverRssMb: vmHwmMb(server.pid),
      serverRssNowMb: vmRssMb(server.pid),
      serverIdle,
      sample: queries.slice(0, 14),
    };
  } finally {
    await server.stop();
    floorDb?.close();
    db.close();
  }
}
