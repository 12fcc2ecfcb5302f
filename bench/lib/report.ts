// Render the foundation benchmark's figures as Markdown tables.
import type { ProfileRow } from "./cpu-profile";
import type { BenchQuery } from "./queries";
import type { SearchFigures } from "./search-bench";
import { fmtInt, fmtMs } from "./stats";

interface Timing {
  wall: number; // median wall time of the child process, spawn to exit
  best: number;
  internal: number; // the child's own timer (Lettuce: the `ms` of index --json)
  rss: number; // MB, highest over the runs
  cpu: number; // ms of user + system time, all threads
}

export interface VaultFigures {
  name: string;
  notes: number;
  bareFiles: number;
  bytes: number;
  cold: Timing & { threads: { main: number; workers: number; other: number } };
  bare: Timing;
  /** The same bare load in Python's sqlite3 (bench/lib/bare_load.py): median wall, peak RSS, median CPU. */
  pyBare: { wall: number; rss: number; cpu: number };
  restart: { wall: number; internal: number; rss: number; walkWall: number };
  search: SearchFigures & { sample: BenchQuery[] };
  phases: { notes: number; bytes: number; links: number; tags: number; headings: number; ms: Record<string, number> };
  load: string;
}

export interface Report {
  started: Date;
  quick: boolean;
  machine: string;
  load: string;
  runs: string;
  figures: VaultFigures[];
  profile: { duration: string; hot: ProfileRow[]; libTree: ProfileRow[] } | null;
}

const COLD_GOAL = 1.5;
const RESTART_GOAL_MS = 1000;
const HTTP_GOAL_MS = 1;

const yes = (ok: boolean) => (ok ? "yes" : "**no**");
const rate = (n: number, ms: number) => `${fmtInt(n / (ms / 1000))} notes/s`;
const mb = (x: number) => `${x.toFixed(0)} MB`;
const signed = (ms: number) => `${ms >= 0 ? "+" : "−"}${fmtMs(Math.abs(ms))}`;

function table(head: string[], rows: string[][]): string {
  return [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");
}

function headline(f: VaultFigures): string[][] {
  const vault = `${f.name} (${fmtInt(f.notes)} notes, ${(f.bytes / 1e6).toFixed(1)} MB)`;
  const ratio = f.cold.wall / f.bare.wall;
  const s = f.search;
  const d50 = s.http.p50 - s.floor.p50;
  const d99 = s.http.p99 - s.floor.p99;
  return [
    [`cold index, wall (median)`, vault, `${fmtMs(f.cold.wall)} · ${rate(f.notes, f.cold.wall)}`, `${fmtMs(f.bare.wall)} · ${rate(f.bareFiles, f.bare.wall)}`, `${ratio.toFixed(2)}×`, `≤ ${COLD_GOAL}×`, yes(ratio <= COLD_GOAL)],
    [`cold index vs Python sqlite3 (median)`, "", fmtMs(f.cold.wall), fmtMs(f.pyBare.wall), `${(f.cold.wall / f.pyBare.wall).toFixed(2)}×`, `≤ ${COLD_GOAL}×`, yes(f.cold.wall / f.pyBare.wall <= COLD_GOAL)],
    // CPU time (all threads, from the kernel) moves less with the machine's load than wall time does.
    [`cold index, CPU (median; floor: Bun · Python)`, "", fmtMs(f.cold.cpu), `${fmtMs(f.bare.cpu)} · ${fmtMs(f.pyBare.cpu)}`, `${(f.cold.cpu / f.bare.cpu).toFixed(2)}× · ${(f.cold.cpu / f.pyBare.cpu).toFixed(2)}×`, "", ""],
    [`peak RSS, cold index`, "", mb(f.cold.rss), mb(f.bare.rss), `${(f.cold.rss / f.bare.rss).toFixed(2)}×`, "", ""],
    [`warm restart, unchanged (median)`, "", fmtMs(f.restart.wall), `${fmtMs(f.restart.walkWall)} (walk + stat)`, signed(f.restart.wall - f.restart.walkWall), "< 1 s", yes(f.restart.wall < RESTART_GOAL_MS)],
    [`search p50, MCP HTTP`, "", fmtMs(s.http.p50), fmtMs(s.floor.p50), signed(d50), `≤ +${HTTP_GOAL_MS} ms`, yes(d50 <= HTTP_GOAL_MS)],
    [`search p99, MCP HTTP`, "", fmtMs(s.http.p99), fmtMs(s.floor.p99), signed(d99), `≤ +${HTTP_GOAL_MS} ms`, yes(d99 <= HTTP_GOAL_MS)],
  ];
}

export function renderReport(r: Report): string {
  const out: string[] = [];
  out.push(`## Foundation benchmark${r.quick ? " (--quick)" : ""}, ${r.started.toISOString().slice(0, 16).replace("T", " ")} UTC`);
  out.push("");
  out.push(`- Machine: ${r.machine}`);
  out.push(`- Load average (1/5/15 min, running/total tasks): ${r.load}`);
  out.push(`- Runs: ${r.runs}`);
  out.push("");
  out.push(
    table(
      ["measure", "vault", "Lettuce", "floor", "Lettuce vs floor", "goal", "met"],
      r.figures.flatMap((f) => headline(f)),
    ),
  );
  out.push("");
  out.push(
    "Floors: cold index — the same notes read and inserted (file name + text) into one FTS5 table, same tokenizer and pragmas, one transaction, in a fresh Bun process; restart — a fresh Bun process that walks the vault and stats every note; search — the same FTS5 MATCH (translated by `toFtsQuery`) ranked by `rank`, same `snippet()`, `LIMIT 10`, run with bun:sqlite on the same index.db. Wall times are spawn-to-exit of the child process; RSS and CPU come from the kernel (all threads).",
  );

  out.push("\n### Cold index in detail\n");
  out.push(
    table(
      ["vault", "Lettuce wall median / best", "Lettuce own timer", "Lettuce CPU: all · main thread · parse workers · other", "bare wall median / best", "bare own timer", "bare CPU", "load during"],
      r.figures.map((f) => [
        f.name,
        `${fmtMs(f.cold.wall)} / ${fmtMs(f.cold.best)}`,
        fmtMs(f.cold.internal),
        `${fmtMs(f.cold.cpu)} · ${fmtMs(f.cold.threads.main)} · ${fmtMs(f.cold.threads.workers)} · ${fmtMs(f.cold.threads.other)}`,
        `${fmtMs(f.bare.wall)} / ${fmtMs(f.bare.best)}`,
        fmtMs(f.bare.internal),
        fmtMs(f.bare.cpu),
        f.load,
      ]),
    ),
  );
  out.push(
    "\nCPU is user + system time from the kernel; the split by thread is sampled from /proc every 25 ms (\"other\" is mostly Bun's JIT compiler threads and GC). The main thread inserts into SQLite, the parse workers read, hash, parse and resolve links: whichever is busier bounds the wall time.",
  );
  out.push("\nRestart: Lettuce's own timer " + r.figures.map((f) => `${fmtMs(f.restart.internal)} (${f.name}), peak RSS ${mb(f.restart.rss)}`).join("; ") + ".");

  out.push("\n### Search latency in detail\n");
  out.push(
    table(
      ["vault", "queries (with hits)", "floor p50 / p99", "searchNotes in-process p50 / p99", "MCP HTTP p50 / p99", "HTTP − floor per query, p50 / p99", "HTTP − searchNotes per query, p50 / p99", "top hit ≠ floor", "server peak RSS"],
      r.figures.map((f) => {
        const s = f.search;
        return [
          f.name,
          `${s.queries} (${s.withHits})`,
          `${fmtMs(s.floor.p50)} / ${fmtMs(s.floor.p99)}`,
          `${fmtMs(s.tool.p50)} / ${fmtMs(s.tool.p99)}`,
          `${fmtMs(s.http.p50)} / ${fmtMs(s.http.p99)}`,
          `${signed(s.perQueryOverhead.p50)} / ${signed(s.perQueryOverhead.p99)}`,
          `${signed(s.perQueryTransport.p50)} / ${signed(s.perQueryTransport.p99)}`,
          String(s.topHitMismatches),
          mb(s.serverRssMb),
        ];
      }),
    ),
  );
  out.push(
    "\n`searchNotes` is the search tool's own function called in-process on the same database: HTTP − searchNotes is the transport (HTTP, auth, JSON-RPC, zod, JSON), searchNotes − floor is the tool's extra work (it also counts all matches when the page is full). Each query's best of the rounds is kept; HTTP is timed from `fetch` to the body read.",
  );
  for (const f of r.figures) {
    if (!f.search.serverIdle) out.push(`\n**Warning:** the server on ${f.name} was still using CPU for something else when timing began; its latencies are suspect.`);
  }
  out.push("\nThe server runs with `LETTUCE_EMBED_BACKGROUND=0`, so no background embedding competes with the queries.");
  const sample = r.figures.at(-1)?.search.sample ?? [];
  if (sample.length) out.push(`\nQuery mix (in turn): ${sample.map((q) => `${q.kind} \`${q.q}\``).join(", ")}, …`);

  out.push("\n### Where a cold index spends its time (one thread, each phase alone)\n");
  const phaseNames = ["scan", "read", "hash", "decode", "parse", "clone"];
  out.push(
    table(
      ["vault", "notes · links · tags · headings", ...phaseNames, "bare FTS5 load", "Lettuce cold (wall)"],
      r.figures.map((f) => [
        f.name,
        `${fmtInt(f.phases.notes)} · ${fmtInt(f.phases.links)} · ${fmtInt(f.phases.tags)} · ${fmtInt(f.phases.headings)}`,
        ...phaseNames.map((p) => fmtMs(f.phases.ms[p] ?? NaN)),
        fmtMs(f.bare.internal),
        fmtMs(f.cold.wall),
      ]),
    ),
  );
  out.push(
    "\nscan = walk + stat; read = read every file; hash = sha256; decode = UTF-8; parse = `parseNote` (frontmatter, marked lexer, tags, links, headings); clone = `structuredClone` of every parse result, what handing them from a worker to the main thread costs (both sides). Best of two passes.",
  );

  if (r.profile) {
    const p = r.profile;
    out.push(`\n### CPU profile of a cold index (main thread, ${p.duration}; Bun --cpu-prof-md)\n`);
    out.push(table(["self %", "self", "function", "where"], p.hot.map((h) => [`${h.selfPct.toFixed(1)}%`, h.self, `\`${h.fn}\``, h.where])));
    out.push("\nOur own frames by total time (native costs land on the source line that called them):\n");
    out.push(table(["total %", "total", "function", "where"], p.libTree.map((h) => [`${h.totalPct.toFixed(1)}%`, h.total, `\`${h.fn}\``, h.where])));
  }
  return out.join("\n");
}
