// Background embedding under `lettuce serve` (issue 15 part 1, issue 14 part 5):
//  1. time until obsidian-hub (or a synthetic vault) is fully embedded by the
//     built-in model with no queries arriving, the CPU of the request (main)
//     thread against the model workers', and how the progress line's estimate
//     compared with the real time;
//  2. `search` p50/p99 over HTTP from this process, idle (background embedding
//     off) and while the background build runs, plus how far the build got;
//  3. the same vault embedded by `lettuce embed` (every core, not serving), the
//     floor the serve-mode time is compared with;
//  4. (--parts model) the built-in model's cost per passage in worker CPU time,
//     with the library's own tokenizer and kernels (LETTUCE_EMBED_PLAIN=1) and
//     with ours, on obsidian-hub passages and on short texts (their titles).
//     CPU time, not wall time: it holds up on a loaded machine.
//
//   bun bench/embedding.ts [--vault DIR | --notes N] [--queries N] [--spaced N] [--gap-ms N] [--parts latency,build,hub,floor]
//                          [--after-count] [--slowest]
//
// --slowest (latency) prints, to stderr, the slowest queries of each run with when they started, the CPU each
// server thread used during the back-to-back run, and the server's log on the same clock: where a tail comes from.
//
// The 10k-vault goal (serve-mode full embedding < 2x the all-cores floor) on a slice sized to
// finish in minutes: `bun bench/embedding.ts --parts build,floor --notes 1000` prints both times,
// their ratio, and the 10k figures extrapolated linearly (gen-vault's notes are alike, so passages
// and time scale with the note count).
//
// Each run copies the vault to a temp dir (no .lettuce), so embedding is cold.
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { BuiltinEmbedder } from "../lib/providers/builtin";
import { splitPassages } from "../lib/semantic/passages";
import { splitFrontmatter } from "../lib/vault/parse";
import { BUN, sampleThreads, track, type ThreadCpu } from "./lib/child";
import { fmtMs, loadavg, percentile } from "./lib/stats";
import { synthVault } from "./lib/synth-vault";

const REPO = resolve(import.meta.dir, "..");
const MAIN = join(REPO, "main.ts");
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
};
const HUB = resolve(REPO, "../shared/corpora/obsidian-hub");
const QUERIES = Number(arg("--queries") ?? 200);
const SYNTH_NOTES = Number(arg("--notes") ?? 300);
const SPACED_GAP_MS = Number(arg("--gap-ms") ?? 250);
const spacedN = Number(arg("--spaced") ?? 200);
const log = (s: string) => process.stderr.write(`${s}\n`);
const PARTS = new Set((arg("--parts") ?? "latency,build,hub,floor").split(","));
const SLOWEST = process.argv.includes("--slowest");
const AFTER_COUNT = process.argv.includes("--after-count");
const ENV = { LETTUCE_EMBED_PROVIDER: "builtin", LETTUCE_LLM_PROVIDER: "none", LETTUCE_EMBED_LOG_MS: "10000" };

function copy(src: string, label: string): string {
  const root = mkdtempSync(join(tmpdir(), `lettuce-embed-${label}-`));
  cpSync(src, root, { recursive: true, filter: (s) => !s.includes("/.lettuce") });
  return root;
}

interface Served {
  url: string;
  token: string;
  pid: number;
  lines: { at: number; text: string }[];
  threads: Map<number, ThreadCpu>;
  timeline: { at: number; workers: number }[];
  t0: number;
  /** Stop or restart the 50 ms thread sampler (timed search runs stop it: see latency()). */
  sampling(on: boolean): void;
  waitFor(re: RegExp, timeoutMs: number): Promise<string>;
  stop(): Promise<void>;
}

/** A worker thread of the server, or any thread of a process it started (the model hosts under serve, lib/providers/model-host.ts). */
function modelThread(t: ThreadCpu, serverPid: number): boolean {
  return t.pid !== undefined && t.pid !== serverPid ? true : t.tid !== serverPid && t.name === "Worker";
}

async function serve(root: string, env: Record<string, string>): Promise<Served> {
  const t0 = performance.now();
  const p = track(Bun.spawn([BUN, MAIN, "serve", root, "--port", "0"], { env: { ...process.env, ...ENV, ...env }, stdout: "pipe", stderr: "inherit", stdin: "ignore" }));
  const lines: { at: number; text: string }[] = [];
  const threads = new Map<number, ThreadCpu>();
  // Worker CPU over time (one sample a second): where the model's cores sat idle (start-up, the tail).
  const timeline: { at: number; workers: number }[] = [];
  let lastMark = 0;
  let sampling = true;
  const sampler = setInterval(() => {
    if (!sampling) return;
    sampleThreads(p.pid, threads);
    const now = performance.now() - t0;
    if (now - lastMark >= 1000) {
      lastMark = now;
      let workers = 0;
      for (const t of threads.values()) if (modelThread(t, p.pid)) workers += t.cpuMs;
      timeline.push({ at: now, workers });
    }
  }, 50);
  let buf = "";
  const waiters: (() => void)[] = [];
  void (async () => {
    const dec = new TextDecoder();
    for await (const chunk of p.stdout) {
      buf += dec.decode(chunk);
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        lines.push({ at: performance.now() - t0, text: buf.slice(0, i) });
        buf = buf.slice(i + 1);
      }
      for (const w of waiters.splice(0)) w();
    }
  })();
  const waitFor = async (re: RegExp, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = lines.find((l) => re.test(l.text));
      if (hit) return hit.text;
      if (Date.now() > deadline) throw new Error(`serve: no line matching ${re} within ${timeoutMs} ms:\n${lines.map((l) => l.text).join("\n")}`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 1000);
      });
    }
  };
  await waitFor(/Web UI/, 60_000);
  const url = /MCP endpoint: (\S+)/.exec(lines.map((l) => l.text).join("\n"))![1]!;
  const tokenIdx = lines.findIndex((l) => /shown only this once/.test(l.text));
  const token = lines.slice(tokenIdx + 1).find((l) => l.text.trim())!.text.trim();
  return {
    url,
    token,
    pid: p.pid,
    lines,
    threads,
    timeline,
    t0,
    waitFor,
    sampling(on: boolean) {
      sampling = on;
    },
    async stop() {
      clearInterval(sampler);
      p.kill("SIGTERM");
      const t = setTimeout(() => p.kill("SIGKILL"), 10_000);
      await p.exited;
      clearTimeout(t);
    },
  };
}

function cpuSplit(s: Served): { main: number; workers: number; other: number } {
  const out = { main: 0, workers: 0, other: 0 };
  for (const t of s.threads.values()) {
    if (t.tid === s.pid) out.main += t.cpuMs;
    else if (modelThread(t, s.pid)) out.workers += t.cpuMs;
    else out.other += t.cpuMs;
  }
  return out;
}

let rpcId = 1;
async function call(s: Served, name: string, args: Record<string, unknown>): Promise<any> {
  const res = await fetch(s.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${s.token}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: rpcId++, method: "tools/call", params: { name, arguments: args } }),
  });
  const j = (await res.json()) as any;
  return JSON.parse(j.result.content[0].text);
}

const WORDS = ["plugin", "theme", "vault", "graph", "template", "daily", "note", "link", "tag", "search", "canvas", "sync", "publish", "markdown", "folder", "zettelkasten", "dataview", "calendar", "task", "backlink"];
// When each query of the last run started (ms on this process's clock), for --slowest.
let startedAt: number[] = [];

async function searchLatencies(s: Served, n: number, gapMs = 0): Promise<number[]> {
  const out: number[] = [];
  startedAt = [];
  for (let i = 0; i < n; i++) {
    const q = `${WORDS[i % WORDS.length]} ${WORDS[(i * 7 + 3) % WORDS.length]}`;
    if (gapMs) await Bun.sleep(gapMs);
    const t = performance.now();
    startedAt.push(t);
    await call(s, "search", { query: q, limit: 10 });
    out.push(performance.now() - t);
  }
  return out;
}

/** The slowest queries of a run, each with when it started (s since the run's first) and its query number. */
function slowest(lat: number[], at: number[], k = 12): string {
  return lat
    .map((ms, i) => ({ ms, i }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, k)
    .map(({ ms, i }) => `${ms.toFixed(1)} ms @${((at[i]! - at[0]!) / 1000).toFixed(2)} s (#${i})`)
    .join(", ");
}

// Seconds and passages of the last serve build and `lettuce embed` floor of the synthetic vault (for the ratio).
const measured: { build?: { secs: number; passages: number }; floor?: { secs: number; passages: number } } = {};

/** Serve a copy, wait until fully embedded (no queries), report time, rate, CPU split, estimates. */
async function fullBuild(src: string, label: string, workers?: string): Promise<string[]> {
  const root = copy(src, label);
  const s = await serve(root, workers ? { LETTUCE_EMBED_WORKERS: workers } : {});
  try {
    await s.waitFor(/Index current/, 600_000);
    const start = s.lines.find((l) => /in the background/.test(l.text))?.at ?? 0;
    const done = await s.waitFor(/Semantic index current/, 3_600_000);
    const doneAt = s.lines.find((l) => /Semantic index current/.test(l.text))!.at;
    const m = /(\d+) notes embedded \((\d+) passages by the model\) in (\d+) s/.exec(done)!;
    const passages = Number(m[2]);
    const secs = (doneAt - start) / 1000;
    const cpu = cpuSplit(s);
    const progress = s.lines.filter((l) => /passages to go/.test(l.text));
    const estimates = progress.map((l) => {
      const eta = /about (\d+) s/.exec(l.text);
      return eta ? `at ${Math.round((l.at - start) / 1000)} s: said ${eta[1]} s more, took ${Math.round((doneAt - l.at) / 1000)} s` : null;
    }).filter(Boolean);
    const firstLeft = /([\d,]+) passages to go/.exec(progress[0]?.text ?? "")?.[1];
    if (src !== HUB) measured.build = { secs, passages };
    // Worker CPU over wall time: how many cores the model kept busy (2.0 = both, all the time).
    const busy = (cpu.workers / 1000 / secs).toFixed(2);
    const idle = idleSpans(s.timeline, start, doneAt);
    return [
      `| ${label} | ${workers ?? "default"} | ${m[1]} | ${passages} | ${Math.round(secs)} s | ${(passages / secs).toFixed(1)} | ${fmtMs(cpu.main)} | ${fmtMs(cpu.workers)} | ${busy} | ${firstLeft ?? "–"} |`,
      ...(estimates.length ? [`|  | estimates: ${estimates.slice(0, 3).join("; ")} |`] : []),
      `|  | model cores idle: ${idle} |`,
    ];
  } finally {
    await s.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * Where the model's two cores sat idle during a build, in core-seconds, from the per-second worker CPU:
 * before the workers' first busy second, in the last 10 s, and in between.
 */
function idleSpans(timeline: { at: number; workers: number }[], start: number, end: number): string {
  const cores = Math.min(2, availableParallelism());
  const pts = timeline.filter((p) => p.at >= start - 1000 && p.at <= end + 1000);
  if (pts.length < 3) return "too short to tell";
  let first = -1;
  const spans = { start: 0, middle: 0, tail: 0 };
  for (let i = 1; i < pts.length; i++) {
    const dt = (pts[i]!.at - pts[i - 1]!.at) / 1000;
    const busy = (pts[i]!.workers - pts[i - 1]!.workers) / 1000;
    if (first < 0 && busy > 0.5 * dt) first = pts[i]!.at;
    const idle = Math.max(0, cores * dt - busy);
    if (first < 0) spans.start += idle;
    else if (pts[i]!.at > end - 10_000) spans.tail += idle;
    else spans.middle += idle;
  }
  return `${spans.start.toFixed(1)} core-s until the workers' first busy second (${((first - start) / 1000).toFixed(1)} s after the pass began), ${spans.middle.toFixed(1)} between, ${spans.tail.toFixed(1)} in the last 10 s`;
}

/** `lettuce embed` on a copy (every core, no server): the floor. */
async function cliEmbed(src: string): Promise<string> {
  const root = copy(src, "cli");
  try {
    const ix = Bun.spawnSync([BUN, MAIN, "index", root], { env: { ...process.env, ...ENV }, stdout: "ignore", stderr: "pipe" });
    if (ix.exitCode !== 0) throw new Error(ix.stderr.toString());
    const t = performance.now();
    const p = Bun.spawnSync([BUN, MAIN, "embed", root, "--json"], { env: { ...process.env, ...ENV }, stdout: "pipe", stderr: "pipe" });
    if (p.exitCode !== 0) throw new Error(p.stderr.toString());
    const secs = (performance.now() - t) / 1000;
    const r = JSON.parse(p.stdout.toString().trim().split("\n").pop()!);
    measured.floor = { secs, passages: r.embedded };
    return `| \`lettuce embed\` (all cores, ${Math.min(2, availableParallelism())} workers) | ${r.notes} notes | ${r.embedded} passages | ${Math.round(secs)} s | ${(r.embedded / secs).toFixed(1)}/s |`;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function latency(src: string): Promise<string[]> {
  // Back to back, the queries hold the build back for their whole run (it pauses while requests come and resumes
  // LETTUCE_BACKGROUND_IDLE_MS, 150 ms, after the last): that measures the pause. Spaced further apart than that,
  // the build runs between them and each query arrives while a batch is under way: that measures what a request
  // pays for the build going on (an agent's calls come seconds apart).
  const measure = async (s: Served, root: string) => {
    await searchLatencies(s, 20);
    const info = async () => (await call(s, "get_vault_info", {})).embedding as { notesEmbedded: number; passagesLeft: number | null } | undefined;
    const b0 = await info();
    // This process is the client, and its own garbage (the vault it generated, the runs before) is collected
    // whenever the collector likes: collect it before each timed run, so that the client's pauses fall
    // into neither the idle nor the busy figures.
    Bun.gc(true);
    // The sampler reads /proc for every thread of the server and of its model processes each 50 ms: more
    // threads, so more of this client's CPU, during a build than idle. Timed runs go without it.
    s.sampling(false);
    const client = new Map<number, ThreadCpu>();
    if (SLOWEST) {
      sampleThreads(s.pid, s.threads);
      sampleThreads(process.pid, client, 2);
    }
    const cpuBefore = SLOWEST ? new Map([...s.threads, ...client].map(([tid, t]) => [tid, t.cpuMs])) : null;
    const backToBack = await searchLatencies(s, QUERIES);
    const backToBackAt = startedAt;
    if (SLOWEST) {
      sampleThreads(s.pid, s.threads);
      sampleThreads(process.pid, client, 2);
      const used = (m: Map<number, ThreadCpu>) => [...m.values()].map((t) => `${t.name}#${t.tid} ${t.cpuMs - (cpuBefore!.get(t.tid) ?? 0)}`).filter((x) => !x.endsWith(" 0"));
      const dir = join(root, ".lettuce");
      log(`index files: ${readdirSync(dir).map((f) => `${f} ${(statSync(join(dir, f)).size / 1e6).toFixed(1)} MB`).join(", ")}`);
      log(`CPU by thread during back to back (${((performance.now() - backToBackAt[0]!) / 1000).toFixed(2)} s): ${used(s.threads).join(", ")}; the client's: ${used(client).join(", ")}`);
    }
    const b1 = await info();
    Bun.gc(true);
    const spaced = await searchLatencies(s, spacedN, SPACED_GAP_MS);
    if (SLOWEST) {
      // The server's log lines on the same clock as the queries (s since the back-to-back run's first).
      const rel = (ms: number) => ((ms + s.t0 - backToBackAt[0]!) / 1000).toFixed(2);
      log(`slowest back to back: ${slowest(backToBack, backToBackAt)}\nslowest spaced: ${slowest(spaced, startedAt)}`);
      log(`spaced run from @${rel(startedAt[0]! - s.t0)} s; server log: ${s.lines.map((l) => `@${rel(l.at)} ${l.text.slice(0, 90)}`).join(" | ")}`);
    }
    s.sampling(true);
    const b2 = await info();
    return { backToBack, spaced, b0, b1, b2 };
  };
  const idleRoot = copy(src, "idle");
  const idle = await serve(idleRoot, { LETTUCE_EMBED_BACKGROUND: "0" });
  let quiet: Awaited<ReturnType<typeof measure>>;
  try {
    await idle.waitFor(/Index current/, 600_000);
    quiet = await measure(idle, idleRoot);
  } finally {
    await idle.stop();
    rmSync(idleRoot, { recursive: true, force: true });
  }
  const busyRoot = copy(src, "busy");
  const busy = await serve(busyRoot, {});
  try {
    await busy.waitFor(/Index current/, 600_000);
    await busy.waitFor(/in the background/, 60_000);
    // Let the build get going (workers loaded, first batches embedded) before measuring.
    await Bun.sleep(5_000);
    // --after-count: measure once the pass has counted its work (its first progress line), past the count's jobs.
    if (AFTER_COUNT) await busy.waitFor(/passages to go|Semantic index current/, 120_000);
    const m = await measure(busy, busyRoot);
    const p = (xs: number[], q: number) => percentile(xs, q);
    const progress = (a?: { notesEmbedded: number; passagesLeft: number | null }, b?: { notesEmbedded: number; passagesLeft: number | null }) =>
      `${a?.notesEmbedded} → ${b?.notesEmbedded} notes embedded, passages left ${a?.passagesLeft ?? "?"} → ${b?.passagesLeft ?? "?"}`;
    return [
      `| back to back, idle (background embedding off) | ${fmtMs(p(quiet.backToBack, 50))} | ${fmtMs(p(quiet.backToBack, 99))} | ${QUERIES} queries |`,
      `| back to back, during the background build | ${fmtMs(p(m.backToBack, 50))} | ${fmtMs(p(m.backToBack, 99))} | ${progress(m.b0, m.b1)} (the build pauses) |`,
      `| ratio | ${(p(m.backToBack, 50) / p(quiet.backToBack, 50)).toFixed(2)}× | ${(p(m.backToBack, 99) / p(quiet.backToBack, 99)).toFixed(2)}× | goal ≤ 1.25× |`,
      `| ${SPACED_GAP_MS} ms apart, idle | ${fmtMs(p(quiet.spaced, 50))} | ${fmtMs(p(quiet.spaced, 99))} | ${spacedN} queries |`,
      `| ${SPACED_GAP_MS} ms apart, during the background build | ${fmtMs(p(m.spaced, 50))} | ${fmtMs(p(m.spaced, 99))} | ${progress(m.b1, m.b2)} (the build runs between queries) |`,
      `| ratio | ${(p(m.spaced, 50) / p(quiet.spaced, 50)).toFixed(2)}× | ${(p(m.spaced, 99) / p(quiet.spaced, 99)).toFixed(2)}× | goal ≤ 1.25× |`,
    ];
  } finally {
    await busy.stop();
    rmSync(busyRoot, { recursive: true, force: true });
  }
}

async function modelCost(): Promise<string[]> {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const f of readdirSync(d).sort()) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (f.endsWith(".md")) files.push(p);
    }
  };
  walk(HUB);
  const all = files.flatMap((f) => splitPassages(splitFrontmatter(readFileSync(f, "utf8")).body, 500, f.slice(HUB.length + 1, -3)).map((p) => p.input));
  const n = Number(arg("--sample") ?? 160);
  const step = Math.max(1, Math.floor(all.length / n));
  const passages = all.filter((_, i) => i % step === 0).slice(0, n);
  const titles = files.filter((_, i) => i % Math.max(1, Math.floor(files.length / n)) === 0).slice(0, n).map((f) => f.slice(f.lastIndexOf("/") + 1, -3));
  const avg = (xs: string[]) => Math.round(xs.reduce((a, x) => a + x.length, 0) / xs.length);
  const rows: string[] = [
    `### The built-in model's cost, worker CPU per text (${passages.length} obsidian-hub passages of ${avg(passages)} characters on average; ${titles.length} note titles of ${avg(titles)})`,
    "",
    "| tokenizer, kernels, chunks | passages per CPU-second | titles per CPU-second |",
    "|---|---:|---:|",
  ];
  // Each setting has its own embedder (a worker reads its settings when it starts); the rounds take
  // turns on the same passages, so machine load hits them alike. CPU of the whole process: the
  // runtime's JIT, GC and allocator threads work for the model worker too (~10% of its own time).
  const settings = [
    { label: "the library's (before)", env: { LETTUCE_EMBED_PLAIN: "1", LETTUCE_EMBED_CHUNK: "8", LETTUCE_EMBED_FUSE: "0" }, batch: 64 },
    { label: "ours, wave 3 (chunks of 8 from batches of 64, graph as shipped)", env: { LETTUCE_EMBED_PLAIN: "0", LETTUCE_EMBED_CHUNK: "8", LETTUCE_EMBED_FUSE: "0" }, batch: 64 },
    { label: "ours now (chunks of 16 from batches of 128, bias adds folded)", env: { LETTUCE_EMBED_PLAIN: "0", LETTUCE_EMBED_CHUNK: "16", LETTUCE_EMBED_FUSE: "1" }, batch: 128 },
  ];
  const embedders = settings.map((x) => {
    Object.assign(process.env, x.env);
    return new BuiltinEmbedder(1);
  });
  const rates = settings.map(() => ({ p: [] as number[], t: [] as number[] }));
  for (const [k, e] of embedders.entries()) {
    Object.assign(process.env, settings[k]!.env);
    await e.embed(["warm up"], { purpose: "query" });
    await e.embed(passages.slice(0, 16));
  }
  const rounds = Number(arg("--rounds") ?? 2);
  for (let r = 0; r < rounds; r++) {
    for (const [k, e] of embedders.entries()) {
      Object.assign(process.env, settings[k]!.env); // the chunk size is read per call
      const rate = async (xs: string[], batch: number) => {
        const c0 = process.cpuUsage();
        for (let i = 0; i < xs.length; i += batch) await e.embed(xs.slice(i, i + batch));
        const c = process.cpuUsage(c0);
        return xs.length / ((c.user + c.system) / 1e6);
      };
      rates[k]!.p.push(await rate(passages, settings[k]!.batch));
      rates[k]!.t.push(await rate(titles, settings[k]!.batch));
    }
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  for (const [k, e] of embedders.entries()) {
    e.close();
    rows.push(`| ${settings[k]!.label} | ${mean(rates[k]!.p).toFixed(1)} | ${mean(rates[k]!.t).toFixed(1)} |`);
  }
  rows.push("", `Passages are taken in batches of 64 or 128 as a reconcile pass sends them; ${rounds} rounds, the settings taking turns; process CPU.`);
  delete process.env.LETTUCE_EMBED_CHUNK;
  delete process.env.LETTUCE_EMBED_FUSE;
  delete process.env.LETTUCE_EMBED_PLAIN;
  return [...rows, ""];
}

const report: string[] = [`## Background embedding (bun bench/embedding.ts; load average at start ${loadavg()}, ${availableParallelism()} cores)`, ""];
if (PARTS.has("model") && existsSync(HUB)) report.push(...(await modelCost()));
const synth = arg("--vault") ?? (PARTS.has("latency") || PARTS.has("build") || PARTS.has("floor") ? synthVault(SYNTH_NOTES, "lettuce-embed-synth-") : "");
const synthLabel = arg("--vault") ? "vault" : `synthetic ${SYNTH_NOTES}`;
try {
  if (PARTS.has("latency")) log(`search latency on ${synthLabel}…`);
  if (PARTS.has("latency")) report.push(`### search over HTTP, ${QUERIES} queries, ${synthLabel}`, "", "| state | p50 | p99 | notes |", "|---|---:|---:|---|", ...(await latency(synth)), "");
  log("full builds…");
  if (PARTS.has("build") || PARTS.has("hub")) report.push(
    "### Time until fully embedded under `serve`, no queries",
    "",
    "| vault | model workers | notes | passages by the model | time | passages/s | main-thread CPU | worker CPU | busy cores | first counted passages-to-go |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  );
  if (PARTS.has("build")) report.push(...(await fullBuild(synth, synthLabel)));
  if (PARTS.has("hub") && existsSync(HUB)) report.push(...(await fullBuild(HUB, "obsidian-hub")));
  if (PARTS.has("floor")) report.push("", "### The floor: `lettuce embed` on the same vault, not serving", "", "| run | notes | passages | time | rate |", "|---|---:|---:|---:|---:|", await cliEmbed(synth));
  if (measured.build && measured.floor && !arg("--vault")) {
    const { build, floor } = measured;
    const scale = 10_000 / SYNTH_NOTES;
    report.push(
      "",
      `Serve (no queries) / \`lettuce embed\`: ${Math.round(build.secs)} s / ${Math.round(floor.secs)} s = **${(build.secs / floor.secs).toFixed(2)}×** (goal < 2×). ` +
        `Extrapolated to the 10k vault (×${scale.toFixed(1)}: ~${Math.round(build.passages * scale).toLocaleString("en-US")} passages): ` +
        `serve ~${Math.round((build.secs * scale) / 60)} min, \`lettuce embed\` ~${Math.round((floor.secs * scale) / 60)} min on this machine at this load.`,
    );
  }
  report.push("", `Load average at the end: ${loadavg()}.`);
} finally {
  if (!arg("--vault") && synth) rmSync(synth, { recursive: true, force: true });
}
console.log(report.join("\n"));
process.exit(0);
