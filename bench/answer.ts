// answer's own time: what `answer` spends outside the model (retrieval, the
// graph prior, building the context, validating citations and quotes) at
// 10,000 notes, with BM25 and with hybrid retrieval.
//
//   bun bench/answer.ts [--notes N] [--queries Q]
//
// The model is an instant fake in this process (OpenAI wire format: it cites
// the first page it is shown and quotes five of its words), so that only our
// time is measured; the time inside chat calls (HTTP round trip included) is
// subtracted. Hybrid retrieval needs vectors for every passage: they come
// from a feature-hashing embedder behind the OpenAI wire format (as in
// bench/semantic-speed.ts), 512-d, with the 1,500-character passages of a
// remote model; the first run embeds them (a few minutes), later runs reuse
// the cache under $TMPDIR/lettuce-bench.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { answerQuestion, type AnswerTrace } from "../lib/answer/answer";
import { retrieve } from "../lib/semantic/retrieve";
import { SemanticService } from "../lib/semantic/service";
import { VaultContext } from "../lib/vault-context";
import { parseReference } from "../tests/helpers/chat-server";
import { hashEmbed } from "../tests/helpers/model-server";
import { BENCH_CACHE } from "./lib/retrieval-data";
import { fmtMs, loadavg, percentile, rng } from "./lib/stats";

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
};
const N = Number(arg("--notes") ?? 10_000);
const Q = Number(arg("--queries") ?? 200);
const log = (s: string) => process.stderr.write(`${s}\n`);

const genScript = resolve(import.meta.dir, "../../shared/tools/gen-vault.mjs");
const vaultDir = join(BENCH_CACHE, `gen-${N}-seed7`);
if (!existsSync(join(vaultDir, "inbox"))) {
  log(`generating ${N} notes in ${vaultDir}`);
  execFileSync("node", [genScript, vaultDir, String(N), "7"], { stdio: "inherit" });
}
// The generator's ~200 common words would make every hashed vector alike; skip them as IDF would.
const common = new Set((/const COMMON = `([^`]*)`/.exec(readFileSync(genScript, "utf8"))?.[1] ?? "").split(/\s+/).filter(Boolean));

// The instant model: chat answers at once; embeddings by feature hashing.
const fake = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const path = new URL(req.url).pathname;
    const body: any = await req.json();
    if (path === "/v1/embeddings") {
      const input: string[] = Array.isArray(body.input) ? body.input : [body.input];
      return Response.json({ object: "list", data: input.map((t, index) => ({ object: "embedding", index, embedding: hashEmbed(t, 512, common) })) });
    }
    const user = body.messages.at(-1).content as string;
    const first = parseReference(user)?.items[0];
    const words = first?.text.split(/\s+/).slice(2, 7).join(" ") ?? "";
    const content = JSON.stringify({ answer: "From the notes.", citations: first ? [first.attrs.path, "Not/Shown.md"] : [], quotes: first ? [{ path: first.attrs.path, quote: words }, { path: first.attrs.path, quote: "invented" }] : [] });
    return Response.json({ id: "x", object: "chat.completion", model: body.model, choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }] });
  },
});
const url = `http://127.0.0.1:${fake.port}`;
Object.assign(process.env, { LETTUCE_LLM_PROVIDER: "openai", LETTUCE_LLM_BASE_URL: url, LETTUCE_LLM_MODEL: "instant", LETTUCE_MODEL_RATE_LIMIT: "0" });

const out: string[] = [`## answer: time outside the model (load average ${loadavg()})`, ""];
const vault = VaultContext.open(vaultDir);
try {
  await vault.indexer.fullScan();
  const notes = vault.indexDb.query("SELECT id, title FROM notes ORDER BY id").all() as { id: number; title: string }[];
  const rand = rng(11);
  // Questions: a note's title in a sentence, or a run of its words.
  const queries = Array.from({ length: Q }, (_, i) => {
    const n = notes[Math.floor(rand() * notes.length)]!;
    if (i % 2 === 0) return `what do my notes say about ${n.title.replace(/\s*\d+$/, "").toLowerCase()}?`;
    const body = (vault.indexDb.query("SELECT body FROM fts WHERE rowid = ?").get(n.id) as { body: string }).body;
    const words = body.match(/[a-z]+/g) ?? ["garden"];
    const at = Math.floor(rand() * Math.max(1, words.length - 6));
    return words.slice(at, at + 3 + Math.floor(rand() * 4)).join(" ");
  });
  const svc = SemanticService.for(vault);

  async function run(label: string, opts: { useGraph?: boolean } = {}) {
    const outside: number[] = [];
    const retrieval: number[] = [];
    const validation: number[] = [];
    let quotes = 0;
    for (const [i, query] of [...queries.slice(0, 10), ...queries].entries()) {
      const trace: AnswerTrace = { retrievalMs: 0, modelMs: 0, validationMs: 0 };
      const t0 = performance.now();
      const r = await answerQuestion(svc, { query, useGraph: opts.useGraph, trace });
      const total = performance.now() - t0;
      if (i < 10) continue; // warm-up
      outside.push(total - trace.modelMs);
      retrieval.push(trace.retrievalMs);
      validation.push(trace.validationMs);
      quotes += r.quotedSpans.length;
    }
    // The floor: retrieve() alone with the options answer passes it (its ranking is lib/semantic's, not ours).
    const bare: number[] = [];
    for (const query of queries) {
      const t0 = performance.now();
      await retrieve(svc, { query, limit: opts.useGraph ? 18 : 6, mode: "auto", passagesPerNote: 3 });
      bare.push(performance.now() - t0);
    }
    const row = (what: string, xs: number[]) => `| ${label} | ${what} | ${fmtMs(percentile(xs, 50))} | ${fmtMs(percentile(xs, 99))} |`;
    out.push(row("**outside the model**", outside), row("retrieval + context", retrieval), row("validation", validation), row("retrieve() alone", bare));
    log(`${label}: ${quotes} of ${Q} quotes validated`);
    return percentile(outside, 50);
  }

  out.push(`${notes.length.toLocaleString("en-US")} notes (tools/gen-vault.mjs, seed 7), ${Q} questions, limit 6, an instant in-process model; times per call.`, "");
  out.push("| retrieval | part | p50 | p99 |", "|---|---|---:|---:|");
  process.env.LETTUCE_EMBED_PROVIDER = "none";
  await svc.syncKeywords();
  const bm25 = await run("BM25");
  await run("BM25 + use_graph", { useGraph: true });

  Object.assign(process.env, { LETTUCE_EMBED_PROVIDER: "openai", LETTUCE_EMBED_BASE_URL: url, LETTUCE_EMBED_MODEL: "feature-hashing-512-idf" });
  const t0 = performance.now();
  let last = 0;
  const r = await svc.reconcileNow((done, total) => {
    if (performance.now() - last > 10_000) {
      last = performance.now();
      log(`  embedding ${done}/${total} notes`);
    }
  });
  log(`embedding pass: ${fmtMs(performance.now() - t0)} (${r.embedded} passages embedded, the rest cached)`);
  await svc.indexes();
  const hybrid = await run("hybrid");
  out.push("", `Goal: ≤ 30 ms p50 with BM25 (${bm25 <= 30 ? "met" : "NOT met"}: ${fmtMs(bm25)}), ≤ 60 ms p50 hybrid (${hybrid <= 60 ? "met" : "NOT met"}: ${fmtMs(hybrid)}).`);
} finally {
  vault.close();
  fake.stop(true);
}
console.log(out.join("\n"));
