// prepare_context benchmark:  bun bench/context.ts [--quick] [--vectors] [--hub] [--no-latency]
//
// 1. Quality on the task set (bench/lib/context-tasks.ts, a third paraphrased):
//    how often an answer page is among the pack's concepts (default maxTokens
//    2000, maxConcepts 6), against a plain BM25 top-6 (any of the task's words,
//    bm25(10, 1) over the same FTS table) and the `search` tool's top-6 (every
//    word as a prefix). --vectors adds a run with the built-in embedding model.
// 2. Budget: the pack's size (estimateTokens of the returned JSON text) against
//    maxTokens 1000–16000 on every task; over-budget packs must be 0.
// 3. Latency over HTTP on a 10k-note vault (../shared/tools/gen-vault.mjs DIR
//    10000 7): prepare_context p50/p95 (goal ≤ 50 ms p50), search_workspace
//    (index and substring fallback). --hub adds obsidian-hub's substring
//    fallback (bounded by SUBSTRING_SCAN_BYTES). --quick: 2,000 notes, fewer runs.
// Figures from a shared 2-core machine are rough; compare runs on one machine.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { searchNotes } from "../lib/retrieval/search";
import { SemanticService } from "../lib/semantic/service";
import { estimateTokens, ftsQuote, STOPWORDS } from "../lib/workspace/text";
import { SUBSTRING_SCAN_BYTES } from "../lib/workspace/search";
import { CONTEXT_TASKS, type ContextTask } from "./lib/context-tasks";
import { BENCH_CACHE } from "./lib/retrieval-data";
import { serveVaultCopy, type ServedVault } from "./lib/served-vault";
import { fmtMs, loadavg, machineNotes, median, percentile, rng } from "./lib/stats";

const quick = process.argv.includes("--quick");
const withVectors = process.argv.includes("--vectors");
const withHub = process.argv.includes("--hub");
const CORPORA = resolve(import.meta.dir, "../../shared/corpora");
const log = (s: string) => console.error(`[context-bench] ${s}`);
process.env.LETTUCE_LLM_PROVIDER = "none";
process.env.LETTUCE_EMBED_PROVIDER = "none";

async function call(v: ServedVault, name: string, args: Record<string, unknown>): Promise<{ value: any; text: string; ms: number; cpuMs: number }> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const res = await fetch(v.server.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${v.token}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
  });
  const body: any = await res.json();
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  const cpuMs = (c.user + c.system) / 1000;
  if (body.error || body.result?.isError) throw new Error(`${name}: ${JSON.stringify(body.error ?? body.result)}`);
  const text = body.result.content[0].text as string;
  return { value: JSON.parse(text), text, ms, cpuMs };
}

/** Plain BM25: notes holding any of the task's words (stopwords dropped), titles weighted 10×, top k. */
function bm25Any(v: ServedVault, task: string, k: number): string[] {
  const words = [...new Set((task.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOPWORDS.has(w) && w.length > 1))];
  if (!words.length) return [];
  return (
    v.vault.indexDb
      .query("SELECT n.path AS path FROM fts JOIN notes n ON n.id = fts.rowid WHERE fts MATCH ? ORDER BY bm25(fts, 10.0, 1.0) LIMIT ?")
      .all(words.map(ftsQuote).join(" OR "), k) as { path: string }[]
  ).map((r) => r.path);
}

interface Hits {
  pack: number;
  packOrRelated: number;
  bm25: number;
  searchTool: number;
  n: number;
}
const newHits = (): Hits => ({ pack: 0, packOrRelated: 0, bm25: 0, searchTool: 0, n: 0 });

async function quality(v: ServedVault, tasks: ContextTask[], byKind: Map<string, Hits>, misses: string[]): Promise<number[]> {
  const ratios: number[] = [];
  for (const t of tasks) {
    const { value: pack } = await call(v, "prepare_context", { task: t.task });
    const concepts: string[] = pack.concepts.map((c: any) => c.id);
    const related: string[] = pack.related.map((r: any) => r.id);
    const hit = (ids: string[]) => t.answers.some((a) => ids.includes(a));
    for (const key of [t.paraphrased ? "paraphrased" : "literal", "all"]) {
      const h = byKind.get(key) ?? newHits();
      h.n++;
      if (hit(concepts)) h.pack++;
      if (hit([...concepts, ...related])) h.packOrRelated++;
      if (hit(bm25Any(v, t.task, 6))) h.bm25++;
      if (hit(searchNotes(v.vault.indexDb, t.task, 6).items.map((i) => i.path))) h.searchTool++;
      byKind.set(key, h);
    }
    if (!hit(concepts)) misses.push(`${t.paraphrased ? "(p) " : ""}${t.task} → wanted ${t.answers[0]}, got ${concepts.slice(0, 3).join(", ")}`);
    ratios.push(pack.tokenEstimate / pack.maxTokens);
  }
  return ratios;
}

async function budget(v: ServedVault, tasks: ContextTask[]): Promise<{ max: number; over: number; ratio: number[]; truncated: number }[]> {
  const out = [];
  for (const maxTokens of [1000, 2000, 4000, 16000]) {
    const ratio: number[] = [];
    let over = 0;
    let max = 0;
    let truncated = 0;
    for (const t of tasks) {
      const { value, text } = await call(v, "prepare_context", { task: t.task, maxTokens, maxConcepts: 16 });
      const tokens = estimateTokens(text);
      if (tokens > maxTokens || text.length > 4 * maxTokens) over++;
      if (value.truncated) truncated++;
      ratio.push(tokens / maxTokens);
      max = Math.max(max, tokens);
    }
    out.push({ max, over, ratio, truncated });
  }
  return out;
}

const lines: string[] = [];
const say = (s = "") => lines.push(s);
say(`# prepare_context benchmark (${new Date().toISOString().slice(0, 10)})`);
say();
say(`Machine: ${machineNotes()}; load ${loadavg()}. Shared 2-core machine: timings are rough.`);
say();

// ---- 1 and 2: quality and budget on the corpora ----
const byKind = new Map<string, Hits>();
const misses: string[] = [];
const budgets: Awaited<ReturnType<typeof budget>>[] = [];
const corpora = [...new Set(CONTEXT_TASKS.map((t) => t.corpus))];
const vectorRuns: { corpus: string; hits: Map<string, Hits> }[] = [];
for (const corpus of corpora) {
  const src = join(CORPORA, corpus);
  if (!existsSync(src)) {
    log(`skipping ${corpus}: ${src} is not here`);
    continue;
  }
  log(`indexing ${corpus}`);
  const v = await serveVaultCopy(src, "ctx");
  try {
    const tasks = CONTEXT_TASKS.filter((t) => t.corpus === corpus);
    await quality(v, tasks, byKind, misses);
    budgets.push(await budget(v, quick ? tasks.slice(0, 10) : tasks));
    if (withVectors) {
      process.env.LETTUCE_EMBED_PROVIDER = "builtin";
      // The retrieval benchmark's copy of this corpus (bench/lib/retrieval-data.ts) may hold its vectors already:
      // start from its embeddings cache, so that only what is not there goes to the model.
      const cached = join(BENCH_CACHE, corpus === "dnd-srd-wiki" ? "srd-wiki" : corpus.split("/")[0]!, ".lettuce");
      for (const f of ["embeddings.db", "embeddings.db-wal"]) if (existsSync(join(cached, f))) cpSync(join(cached, f), join(v.root, ".lettuce", f));
      log(`embedding ${corpus} with the built-in model (slow on 2 cores)`);
      const t0 = performance.now();
      await SemanticService.for(v.vault).reconcileNow();
      log(`embedded in ${fmtMs(performance.now() - t0)}`);
      const hits = new Map<string, Hits>();
      await quality(v, tasks, hits, []);
      vectorRuns.push({ corpus, hits });
      process.env.LETTUCE_EMBED_PROVIDER = "none";
    }
  } finally {
    await v.close();
  }
}
const pct = (a: number, n: number) => `${a}/${n} (${Math.round((100 * a) / Math.max(1, n))}%)`;
say(`## Right page in the answer (${CONTEXT_TASKS.length} tasks, ${CONTEXT_TASKS.filter((t) => t.paraphrased).length} paraphrased)`);
say();
say("| tasks | prepare_context concepts (6) | concepts + related | plain BM25 top-6 (any word) | search tool top-6 (all words) |");
say("| --- | --- | --- | --- | --- |");
for (const key of ["literal", "paraphrased", "all"]) {
  const h = byKind.get(key);
  if (h) say(`| ${key} | ${pct(h.pack, h.n)} | ${pct(h.packOrRelated, h.n)} | ${pct(h.bm25, h.n)} | ${pct(h.searchTool, h.n)} |`);
}
for (const run of vectorRuns) {
  const h = run.hits.get("all")!;
  const p = run.hits.get("paraphrased");
  say(`| ${run.corpus}, with built-in vectors | ${pct(h.pack, h.n)}${p ? ` (paraphrased ${pct(p.pack, p.n)})` : ""} | ${pct(h.packOrRelated, h.n)} | | |`);
}
say();
if (misses.length) {
  say("Misses (keyword ranking):");
  say();
  for (const m of misses) say(`- ${m}`);
  say();
}
say("## Pack size against maxTokens (maxConcepts 16, every task)");
say();
say("| maxTokens | largest pack (tokens) | median fill | over budget | truncated |");
say("| --- | --- | --- | --- | --- |");
[1000, 2000, 4000, 16000].forEach((mt, i) => {
  const all = budgets.map((b) => b[i]!);
  const ratio = all.flatMap((b) => b.ratio);
  say(`| ${mt} | ${Math.max(...all.map((b) => b.max))} | ${Math.round(100 * median(ratio))}% | ${all.reduce((t, b) => t + b.over, 0)} | ${all.reduce((t, b) => t + b.truncated, 0)} |`);
});
say();

// ---- 3: latency on a generated vault (--no-latency: quality and budget only) ----
if (process.argv.includes("--no-latency")) {
  console.log(lines.join("\n"));
  process.exit(0);
}
const N = quick ? 2000 : 10000;
const genDir = join(tmpdir(), "lettuce-bench-cache", `gen-${N}-seed7`);
if (!existsSync(join(genDir, "inbox"))) {
  mkdirSync(genDir, { recursive: true });
  log(`generating ${N} notes in ${genDir}`);
  execFileSync("node", [resolve(import.meta.dir, "../../shared/tools/gen-vault.mjs"), genDir, String(N), "7"], { stdio: ["ignore", "ignore", "inherit"] });
}
log(`indexing ${N} generated notes`);
const gen = await serveVaultCopy(genDir, "ctx-gen");
try {
  const DOMAIN = "garden compost tomato harvest recipe sourdough project roadmap milestone database index query schema cache latency benchmark kernel thread compiler parser search ranking embedding travel museum mountain river physics quantum telescope history empire treaty music melody guitar health sleep running finance mortgage portfolio family wedding reading novel poetry philosophy ethics logic".split(" ");
  const rand = rng(7);
  const pick = () => DOMAIN[Math.floor(rand() * DOMAIN.length)]!;
  const tasks = Array.from({ length: quick ? 20 : 60 }, () => `how does the ${pick()} ${pick()} relate to ${pick()} and ${pick()} in my notes`);
  for (const t of tasks.slice(0, 5)) await call(gen, "prepare_context", { task: t }); // warm-up
  const packMs: number[] = [];
  const packCpu: number[] = [];
  const fills: number[] = [];
  for (const t of tasks) {
    const r = await call(gen, "prepare_context", { task: t });
    packMs.push(r.ms);
    packCpu.push(r.cpuMs);
    fills.push(r.value.tokenEstimate / r.value.maxTokens);
  }
  const searchMs: number[] = [];
  const searchCpu: number[] = [];
  for (let i = 0; i < tasks.length; i++) {
    const r = await call(gen, "search_workspace", { query: `${pick()} ${pick()}` });
    searchMs.push(r.ms);
    searchCpu.push(r.cpuMs);
  }
  const fallbackMs: number[] = [];
  const fallbackCpu: number[] = [];
  for (let i = 0; i < (quick ? 10 : 30); i++) {
    const r = await call(gen, "search_workspace", { query: `zq${i}` });
    fallbackMs.push(r.ms);
    fallbackCpu.push(r.cpuMs);
  }
  say(`## Latency over HTTP, ${N.toLocaleString("en-US")} generated notes (seed 7; indexed in ${fmtMs(gen.indexMs)})`);
  say();
  say("| call | p50 | p95 | CPU time p50 | runs |");
  say("| --- | --- | --- | --- | --- |");
  say(`| prepare_context (6 concepts, 2000 tokens) | ${fmtMs(median(packMs))} | ${fmtMs(percentile(packMs, 95))} | ${fmtMs(median(packCpu))} | ${packMs.length} |`);
  say(`| search_workspace (index, two words) | ${fmtMs(median(searchMs))} | ${fmtMs(percentile(searchMs, 95))} | ${fmtMs(median(searchCpu))} | ${searchMs.length} |`);
  say(`| search_workspace (substring fallback, no match: reads up to ${SUBSTRING_SCAN_BYTES / 2 ** 20} MB) | ${fmtMs(median(fallbackMs))} | ${fmtMs(percentile(fallbackMs, 95))} | ${fmtMs(median(fallbackCpu))} | ${fallbackMs.length} |`);
  say();
  say("Wall-clock figures include waiting for the CPU on a machine shared with other work (see the load above); CPU time is this process's (server and client) per call, what the wall clock approaches on an idle machine.");
  say();
  say(`Median pack fill at 2000 tokens: ${Math.round(100 * median(fills))}%.`);
  say();
} finally {
  await gen.close();
}

if (withHub && existsSync(join(CORPORA, "obsidian-hub"))) {
  log("indexing obsidian-hub");
  const hub = await serveVaultCopy(join(CORPORA, "obsidian-hub"), "ctx-hub");
  try {
    const miss: number[] = [];
    const missCpu: number[] = [];
    let partial = 0;
    for (let i = 0; i < 20; i++) {
      const r = await call(hub, "search_workspace", { query: `qx${i}` });
      miss.push(r.ms);
      missCpu.push(r.cpuMs);
      if (r.value.partial) partial++;
    }
    const cjk: number[] = [];
    const cjkCpu: number[] = [];
    let cjkScanned = 0;
    for (const q of ["插件", "主题", "笔记", "模板", "同步"]) {
      const r = await call(hub, "search_workspace", { query: q });
      cjk.push(r.ms);
      cjkCpu.push(r.cpuMs);
      if (r.value.fallback) cjkScanned++;
    }
    const packs: number[] = [];
    const packsCpu: number[] = [];
    const hubTasks = ["dataview query to list tasks", "best plugins for a zettelkasten", "how to publish a digital garden", "templater daily note template", "kanban board plugin"];
    for (const t of [...hubTasks, ...hubTasks]) {
      const r = await call(hub, "prepare_context", { task: t });
      packs.push(r.ms);
      packsCpu.push(r.cpuMs);
    }
    say(`## obsidian-hub (6,571 notes, 14.7 MB of notes; indexed in ${fmtMs(hub.indexMs)})`);
    say();
    say("| call | p50 | max | CPU time p50 | note |");
    say("| --- | --- | --- | --- | --- |");
    say(`| search_workspace, fragment found nowhere | ${fmtMs(median(miss))} | ${fmtMs(Math.max(...miss))} | ${fmtMs(median(missCpu))} | ${partial}/${miss.length} answers partial (the scan stopped at its budget) |`);
    say(`| search_workspace, Chinese words | ${fmtMs(median(cjk))} | ${fmtMs(Math.max(...cjk))} | ${fmtMs(median(cjkCpu))} | ${cjkScanned}/${cjk.length} through the substring fallback (the rest the index's n-grams) |`);
    say(`| prepare_context | ${fmtMs(median(packs))} | ${fmtMs(Math.max(...packs))} | ${fmtMs(median(packsCpu))} | 5 tasks, twice |`);
    say();
  } finally {
    await hub.close();
  }
}
console.log(lines.join("\n"));
