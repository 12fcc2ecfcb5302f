// Semantic layer speed:
//  1. the built-in model's embedding throughput on real passages (one and two
//     worker threads) and its query-embedding latency;
//  2. semantic_search (vector and hybrid), related_notes, find_duplicates and
//     topic_map at 10,000 notes (tools/gen-vault.mjs), with the query embedding
//     cached and, as a user's new question is, not cached: then the built-in
//     model embeds each query in its worker thread while BM25 ranks.
//
//   bun bench/semantic-speed.ts [--notes N | --vault DIR] [--builtin]
//
// --vault DIR: part 2 on a copy of a real vault's notes instead of a generated one (the
// generator's links resolve to no note, so the keyword side's anchor text finds nothing there;
// obsidian-hub's do).
//
// Part 2 needs ~80k passage vectors. The built-in model would take over an hour
// to embed them on two cores, so by default they come from a feature-hashing
// embedder behind the OpenAI wire format (tests/helpers/model-server.ts), with
// the built-in model's geometry: 512 dimensions, 500-character passages. Query
// cost depends on the number and size of vectors, not on what they mean. With
// --builtin the real model embeds them (cached under $TMPDIR/lettuce-bench).
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { BuiltinEmbedder } from "../lib/providers/builtin";
import { splitPassages } from "../lib/semantic/passages";
import { semanticSearch } from "../lib/semantic/search";
import { SemanticService } from "../lib/semantic/service";
import { findDuplicates, topicMap } from "../lib/semantic/topics";
import { relatedNotes } from "../lib/semantic/related";
import { dot, similarPairs } from "../lib/semantic/neighbors";
import { allNoteVectors, embeddedModel } from "../lib/semantic/store";
import { normalize } from "../lib/providers/types";
import { splitFrontmatter } from "../lib/vault/parse";
import { VaultContext } from "../lib/vault-context";
import { startModelServer } from "../tests/helpers/model-server";
import { BENCH_CACHE, copyNotes } from "./lib/retrieval-data";
import { fmtMs, loadavg, percentile } from "./lib/stats";
import { titleAndPhraseQueries } from "./lib/queries";
import { sampleThreads, type ThreadCpu } from "./lib/child";
import { execWithJscOptions, lacksJscOptions } from "../lib/platform/jsc-options";

// Measured as `serve` runs: with the engine options it starts again with (lib/platform/jsc-options.ts).
if (lacksJscOptions()) execWithJscOptions(process.argv.slice(2));

// A user's questions at a person's pace: how many, how far apart, how long after the first (pacedQuestions).
const PACED = { count: 12, gapMs: 400, afterMs: 8000 };

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
};
const N = Number(arg("--notes") ?? 10_000);
const useBuiltin = process.argv.includes("--builtin");
const log = (s: string) => process.stderr.write(`${s}\n`);
const out: string[] = [`## Semantic layer speed (load average ${loadavg()}; BUN_JSC_useWarmUpMarkedBlocks=${process.env.BUN_JSC_useWarmUpMarkedBlocks ?? "unset"}, as serve runs)`, ""];

// 1. Built-in model throughput on real notes (the SRD spells: short technical prose).
{
  const dir = resolve(import.meta.dir, "../../shared/corpora/dnd-srd-wiki/Spells");
  const passages = readdirSync(dir)
    .filter((f) => f.endsWith(".md"))
    .sort()
    .flatMap((f) => splitPassages(splitFrontmatter(readFileSync(join(dir, f), "utf8")).body, 500))
    .map((p) => p.input)
    .slice(0, 320);
  const avg = Math.round(passages.reduce((n, p) => n + p.length, 0) / passages.length);
  out.push("### Built-in model (Universal Sentence Encoder Lite, 512-d)", "", `${passages.length} passages of the SRD spells, ${avg} characters on average.`, "");
  out.push("| workers | passages/s | query embedding p50 |", "|---:|---:|---:|");
  for (const threads of [1, 2]) {
    const e = new BuiltinEmbedder(threads);
    await e.embed(["warm up"], { purpose: "query" });
    await e.embed(passages.slice(0, threads * 8)); // every worker loaded
    const t0 = performance.now();
    await e.embed(passages);
    const rate = passages.length / ((performance.now() - t0) / 1000);
    const q: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t = performance.now();
      await e.embed([`query number ${i} about fire spells`], { purpose: "query" });
      q.push(performance.now() - t);
    }
    out.push(`| ${threads} | ${rate.toFixed(1)} | ${fmtMs(percentile(q, 50))} |`);
    e.close();
  }
  out.push("");
}

// 2. Query latency at N notes, or on a real vault's notes.
const realVault = arg("--vault");
const vaultDir = realVault ? join(BENCH_CACHE, `vault-${basename(resolve(realVault))}`) : join(BENCH_CACHE, `gen-${N}`);
if (realVault) copyNotes(resolve(realVault), vaultDir);
else if (!existsSync(join(vaultDir, "inbox"))) {
  log(`generating ${N} notes in ${vaultDir}`);
  execFileSync("node", [resolve(import.meta.dir, "../../shared/tools/gen-vault.mjs"), vaultDir, String(N), "42"], { stdio: "inherit" });
}
// The generator draws words from a Zipf distribution whose head is ~200 common English words; hashed
// as they are, every two notes come out 0.86 similar. Skipping those words (as IDF would) gives
// vectors whose neighbourhoods look more like a real model's.
const genSource = readFileSync(resolve(import.meta.dir, "../../shared/tools/gen-vault.mjs"), "utf8");
const common = realVault ? new Set<string>() : new Set((/const COMMON = `([^`]*)`/.exec(genSource)?.[1] ?? "").split(/\s+/).filter(Boolean));
const fake = useBuiltin ? null : startModelServer({ dim: 512, ignoreWords: common });
process.env.LETTUCE_LLM_PROVIDER = "none";
if (fake) {
  process.env.LETTUCE_EMBED_PROVIDER = "openai";
  process.env.LETTUCE_EMBED_BASE_URL = fake.url;
  process.env.LETTUCE_EMBED_MODEL = "feature-hashing-512-idf";
  process.env.LETTUCE_PASSAGE_CHARS = "500";
} else process.env.LETTUCE_EMBED_PROVIDER = "builtin";

const vault = VaultContext.open(vaultDir);
try {
  await vault.indexer.fullScan();
  const svc = SemanticService.for(vault);
  let t0 = performance.now();
  let last = 0;
  const r = await svc.reconcileNow((done, total) => {
    if (performance.now() - last > 10_000) {
      last = performance.now();
      log(`  embedding ${done}/${total} notes`);
    }
  });
  const reconcileMs = performance.now() - t0;
  t0 = performance.now();
  const idx = (await svc.indexes())!;
  const loadMs = performance.now() - t0;
  await svc.syncKeywords();
  const notes = vault.indexDb.query("SELECT id, path, title FROM notes ORDER BY id").all() as { id: number; path: string; title: string }[];
  const queries = titleAndPhraseQueries(vault.indexDb, notes);
  const provider = await svc.embedder();
  for (const q of queries) await svc.queryVector(provider, q); // "with query embedding cached"
  const time = async (fn: (q: string, i: number) => Promise<unknown>) => {
    const ts: number[] = [];
    for (let i = 0; i < queries.length; i++) {
      const t = performance.now();
      await fn(queries[i]!, i);
      ts.push(performance.now() - t);
    }
    return ts;
  };
  await time((q) => semanticSearch(svc, { query: q, limit: 10 })); // warm-up
  const vec = await time((q) => semanticSearch(svc, { query: q, limit: 10 }));
  const hyb = await time((q) => semanticSearch(svc, { query: q, hybrid: true, limit: 10 }));
  // Not cached: every query's vector is computed by the built-in model (512-d, as the stored vectors
  // are; what it means does not matter to the cost), in its query worker (normal priority), as it is
  // for a user's new question. Then the same with queries sent to a nice-10 passage worker
  // (LETTUCE_EMBED_QUERY_WORKER=0, as before the query worker), for comparison in the same run.
  const builtin = new BuiltinEmbedder();
  await builtin.embed(["warm up"], { purpose: "query" });
  const cachedVector = svc.queryVector.bind(svc);
  svc.queryVector = async (_p, text, signal) => (await builtin.embed([text], { purpose: "query", signal }))[0]!;
  const fresh = (q: string, i: number) => `${q} ${i}`;
  const vecCold = await time((q, i) => semanticSearch(svc, { query: fresh(q, i), limit: 10 }));
  const traced = await traceCalls(builtin, () => time((q, i) => semanticSearch(svc, { query: fresh(q, i), hybrid: true, limit: 10 })));
  const hybCold = traced.ms;
  const embedOnly = await time((q, i) => builtin.embed([`${fresh(q, i)} alone`], { purpose: "query" }));
  const savedQw = process.env.LETTUCE_EMBED_QUERY_WORKER;
  process.env.LETTUCE_EMBED_QUERY_WORKER = "0";
  const shared = new BuiltinEmbedder(1);
  await shared.embed(["warm up"], { purpose: "query" });
  svc.queryVector = async (_p, text, signal) => (await shared.embed([text], { purpose: "query", signal }))[0]!;
  const tracedShared = await traceCalls(shared, () => time((q, i) => semanticSearch(svc, { query: `${fresh(q, i)} shared`, hybrid: true, limit: 10 })));
  if (savedQw === undefined) delete process.env.LETTUCE_EMBED_QUERY_WORKER;
  else process.env.LETTUCE_EMBED_QUERY_WORKER = savedQw;
  shared.close();
  svc.queryVector = cachedVector;
  builtin.close();
  const paced = { warm: await pacedQuestions(undefined), cold: await pacedQuestions("0") };
  const rel = await time((_q, i) => relatedNotes(svc, notes[(i * 37) % notes.length]!, 5));
  t0 = performance.now();
  const dups = await findDuplicates(svc, 0.9, 100_000);
  const dupMs = performance.now() - t0;
  t0 = performance.now();
  const topics = await topicMap(svc, { threshold: 0.85, minSize: 2, limit: 1_000_000, offset: 0, maxNotes: 1_000_000 });
  const topicMs = performance.now() - t0;

  const what = fake ? `feature-hashing embedder${realVault ? "" : " (common words skipped)"} over the OpenAI wire format, 512-d, 500-character passages` : "built-in model";
  out.push(`### ${notes.length.toLocaleString("en-US")} notes (${idx.passages.size.toLocaleString("en-US")} passages; vectors: ${what})`, "");
  out.push(`Embedding pass: ${fmtMs(reconcileMs)} for ${r.notes} notes (${r.embedded} passages embedded, the rest cached); loading the in-memory index: ${fmtMs(loadMs)}.`, "");
  out.push("| operation | p50 | p99 |", "|---|---:|---:|");
  out.push(`| semantic_search, vector, top 10 (query embedding cached) | ${fmtMs(percentile(vec, 50))} | ${fmtMs(percentile(vec, 99))} |`);
  out.push(`| semantic_search, hybrid, top 10 (query embedding cached) | ${fmtMs(percentile(hyb, 50))} | ${fmtMs(percentile(hyb, 99))} |`);
  out.push(`| built-in model: one query embedding alone | ${fmtMs(percentile(embedOnly, 50))} | ${fmtMs(percentile(embedOnly, 99))} |`);
  out.push(`| semantic_search, vector, top 10 (query embedded by the built-in model, not cached) | ${fmtMs(percentile(vecCold, 50))} | ${fmtMs(percentile(vecCold, 99))} |`);
  out.push(`| semantic_search, hybrid, top 10 (query embedded by the built-in model, not cached) | ${fmtMs(percentile(hybCold, 50))} | ${fmtMs(percentile(hybCold, 99))} |`);
  out.push(`| the same, query embedded by a nice-10 passage worker (LETTUCE_EMBED_QUERY_WORKER=0, as before) | ${fmtMs(percentile(tracedShared.ms, 50))} | ${fmtMs(percentile(tracedShared.ms, 99))} |`);
  out.push(`| built-in model: a user's questions at a human pace (${PACED.count}, ${PACED.gapMs} ms apart, ${PACED.afterMs / 1000} s after the query worker started), the worker warmed up (LETTUCE_EMBED_WARMUP default) / not (0) | ${fmtMs(percentile(paced.warm, 50))} / ${fmtMs(percentile(paced.cold, 50))} | ${fmtMs(Math.max(...paced.warm))} / ${fmtMs(Math.max(...paced.cold))} |`);
  out.push(`| related_notes, top 5 | ${fmtMs(percentile(rel, 50))} | ${fmtMs(percentile(rel, 99))} |`);
  out.push(`| find_duplicates (threshold 0.9; ${dups.length} pairs) | ${fmtMs(dupMs)} | |`);
  out.push(`| topic_map (threshold 0.85; ${topics.clusters.length} clusters) | ${fmtMs(topicMs)} | |`);
  out.push("", "Where an uncached hybrid call's time goes (medians per call; CPU from /proc/self/task, the worker's from its own schedstat):", "");
  out.push("| query embedded by | call p50 | model in the worker: wall / CPU / waiting for a core | post → vector back | main-thread CPU | model-worker CPU | other threads' CPU (JIT, GC, allocator) |", "|---|---:|---:|---:|---:|---:|---:|");
  for (const [label, t] of [["query worker (normal priority)", traced], ["passage worker (nice 10)", tracedShared]] as const) out.push(`| ${label} | ${fmtMs(percentile(t.ms, 50))} | ${t.summary} |`);
  out.push("", `Goal: hybrid semantic_search p50 ≤ 20 ms at 10k notes with the query embedding not cached${realVault ? ` (here ${notes.length.toLocaleString("en-US")} notes of ${basename(resolve(realVault))}, ${anchorRows(vault)} anchor lines)` : ""}: ${percentile(hybCold, 50) <= 20 ? "met" : "NOT met"} (${fmtMs(percentile(hybCold, 50))}).`);
} finally {
  vault.close();
  await fake?.stop();
}

/**
 * How long a user's first questions take to embed: a fresh query worker started by one question,
 * then, after a pause, questions a few hundred ms apart (a person's pace, not a loop's), each timed.
 * `warmup`: LETTUCE_EMBED_WARMUP for the worker (undefined: the default).
 */
async function pacedQuestions(warmup: string | undefined): Promise<number[]> {
  const saved = process.env.LETTUCE_EMBED_WARMUP;
  if (warmup === undefined) delete process.env.LETTUCE_EMBED_WARMUP;
  else process.env.LETTUCE_EMBED_WARMUP = warmup;
  const e = new BuiltinEmbedder();
  try {
    await e.embed(["what is in this vault"], { purpose: "query" });
    await Bun.sleep(PACED.afterMs);
    const ms: number[] = [];
    for (let i = 0; i < PACED.count; i++) {
      const t = performance.now();
      await e.embed([`question ${i} about the garden, the budget and the trip`], { purpose: "query" });
      ms.push(performance.now() - t);
      await Bun.sleep(PACED.gapMs);
    }
    return ms;
  } finally {
    e.close();
    if (saved === undefined) delete process.env.LETTUCE_EMBED_WARMUP;
    else process.env.LETTUCE_EMBED_WARMUP = saved;
  }
}

/**
 * Run `calls` (a timed loop of tool calls that each embed one query) and say where the time went:
 * the model's wall, CPU and run-queue wait in its worker (reported per job), the hop around it,
 * and the CPU of this process's threads per call: the main thread, the model workers, the rest.
 */
async function traceCalls(e: BuiltinEmbedder, calls: () => Promise<number[]>): Promise<{ ms: number[]; summary: string }> {
  const jobs: { wall: number; cpu: number; wait: number; hop: number }[] = [];
  e.onJob = (j) => {
    if (j.urgent && j.stats) jobs.push({ wall: j.stats.wallMs, cpu: j.stats.cpuMs, wait: j.stats.waitMs, hop: j.doneAt - j.sentAt });
  };
  const before = new Map<number, ThreadCpu>();
  sampleThreads(process.pid, before);
  const ms = await calls();
  const after = new Map<number, ThreadCpu>();
  sampleThreads(process.pid, after);
  e.onJob = undefined;
  let main = 0;
  let model = 0;
  let other = 0;
  for (const [tid, t] of after) {
    const d = t.cpuMs - (before.get(tid)?.cpuMs ?? 0);
    if (tid === process.pid) main += d;
    else if (t.name === "Worker") model += d;
    else other += d;
  }
  const n = ms.length;
  const med = (xs: number[]) => fmtMs(percentile(xs, 50));
  return {
    ms,
    summary: `${med(jobs.map((j) => j.wall))} / ${med(jobs.map((j) => j.cpu))} / ${med(jobs.map((j) => j.wait))} | ${med(jobs.map((j) => j.hop))} | ${fmtMs(main / n)} | ${fmtMs(model / n)} | ${fmtMs(other / n)}`,
  };
}

// 3. The pair search on real vectors: SciFact's 5,183 abstracts embedded by the built-in
// model (cached by bench/retrieval.ts), bucketed against an exact all-pairs scan.
{
  const sci = join(BENCH_CACHE, "scifact");
  if (existsSync(join(sci, ".lettuce/index.db"))) {
    const db = VaultContext.open(sci);
    try {
      const m = embeddedModel(db.indexDb);
      if (m?.id.startsWith("builtin")) {
        const vectors = [...allNoteVectors(db.indexDb)].map((r) => normalize(r.vector));
        out.push("", `### Pair search on real vectors (${vectors.length} SciFact abstracts, built-in model)`, "");
        out.push("| threshold | bucketed: time | pairs | exact all-pairs: time | pairs | found |", "|---:|---:|---:|---:|---:|---:|");
        for (const t of [0.9, 0.85, 0.8]) {
          let t0 = performance.now();
          const approx = similarPairs(vectors, t);
          const approxMs = performance.now() - t0;
          t0 = performance.now();
          let exact = 0;
          for (let a = 0; a < vectors.length; a++) for (let b = a + 1; b < vectors.length; b++) if (dot(vectors[a]!, vectors[b]!) >= t) exact++;
          const exactMs = performance.now() - t0;
          out.push(`| ${t} | ${fmtMs(approxMs)} | ${approx.length} | ${fmtMs(exactMs)} | ${exact} | ${exact ? ((100 * approx.length) / exact).toFixed(1) : "100"}% |`);
        }
      } else out.push("", "(Pair search on real vectors skipped: run bench/retrieval.ts first to embed SciFact.)");
    } finally {
      db.close();
    }
  }
}
console.log(out.join("\n"));

/** How many anchor lines the keyword side holds (lib/semantic/anchors.ts): what a real vault's links add to each keyword ranking. */
function anchorRows(v: VaultContext): string {
  return ((v.indexDb.query("SELECT count(*) AS n FROM anchor_lines").get() as { n: number }).n).toLocaleString("en-US");
}
