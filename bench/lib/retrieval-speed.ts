// What the built-in model's ranking rules cost at 10,000 notes, beside the plain row that
// bench/semantic-speed.ts times: that bench stores feature-hashing vectors (the built-in model would
// take hours to embed 100k passages here) under an OpenAI-wire model, so its hybrid figure uses
// MODEL_RANKING's "other" row. This times retrieve() hybrid, top 10, query vectors cached, on the
// same vault and vectors with each row's rules (and the built-in row without this pass's flat-list
// re-scoring), interleaved, in main-thread CPU per query (process.cpuUsage: steadier than wall time
// on a loaded machine) and wall time.
//   bun bench/lib/retrieval-speed.ts [--notes N]   (the vault and vectors of bench/semantic-speed.ts; run that first)
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { rankingFor, type RankingParams } from "../../lib/semantic/ranking";
import { retrieve } from "../../lib/semantic/retrieve";
import { SemanticService } from "../../lib/semantic/service";
import { VaultContext } from "../../lib/vault-context";
import { startModelServer } from "../../tests/helpers/model-server";
import { BENCH_CACHE } from "./retrieval-data";
import { loadavg, percentile } from "./stats";
import { titleAndPhraseQueries } from "./queries";

const i = process.argv.indexOf("--notes");
const N = i === -1 ? 10_000 : Number(process.argv[i + 1]);
const vaultDir = join(BENCH_CACHE, `gen-${N}`);
if (!existsSync(join(vaultDir, ".lettuce/index.db"))) throw new Error(`${vaultDir}: run bun bench/semantic-speed.ts --notes ${N} first`);
// The same embedder as bench/semantic-speed.ts (same model id: its stored vectors are used as they are).
const genSource = readFileSync(resolve(import.meta.dir, "../../../shared/tools/gen-vault.mjs"), "utf8");
const common = new Set((/const COMMON = `([^`]*)`/.exec(genSource)?.[1] ?? "").split(/\s+/).filter(Boolean));
const fake = startModelServer({ dim: 512, ignoreWords: common });
Object.assign(process.env, { LETTUCE_LLM_PROVIDER: "none", LETTUCE_EMBED_PROVIDER: "openai", LETTUCE_EMBED_BASE_URL: fake.url, LETTUCE_EMBED_MODEL: "feature-hashing-512-idf", LETTUCE_PASSAGE_CHARS: "500" });
const vault = VaultContext.open(vaultDir);
try {
  await vault.indexer.fullScan();
  const svc = SemanticService.for(vault);
  const r = await svc.reconcileNow();
  if (r.embedded > 1000) console.error(`(embedded ${r.embedded} passages: the vault had changed)`);
  await svc.syncKeywords();
  const notes = vault.indexDb.query("SELECT id, title FROM notes ORDER BY id").all() as { id: number; title: string }[];
  const queries = titleAndPhraseQueries(vault.indexDb, notes);
  const provider = await svc.embedder();
  for (const q of queries) await svc.queryVector(provider, q);
  const rows: [string, Partial<RankingParams>][] = [
    ["other row (what bench/semantic-speed.ts times)", rankingFor("openai", "feature-hashing-512-idf")],
    ["built-in row", rankingFor("builtin")],
    ["built-in row, a flat list closed (third pass)", { ...rankingFor("builtin"), flatConvex: 0 }],
  ];
  const wall = rows.map(() => [] as number[]);
  const cpu = rows.map(() => 0);
  for (let rep = 0; rep < 3; rep++)
    for (const [k, [, ranking]] of rows.entries())
      for (const q of queries) {
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        await retrieve(svc, { query: q, mode: "hybrid", limit: 10, ranking });
        wall[k]!.push(performance.now() - t0);
        const c = process.cpuUsage(c0);
        if (rep) cpu[k]! += (c.user + c.system) / 1000; // the first round warms up
      }
  console.log(`## Hybrid ranking rules at ${notes.length} notes (load average ${loadavg()}; query vectors cached)\n`);
  console.log("| ranking | CPU per query | wall p50 | wall p99 |\n|---|---:|---:|---:|");
  rows.forEach(([name], k) => console.log(`| ${name} | ${(cpu[k]! / (2 * queries.length)).toFixed(2)} ms | ${percentile(wall[k]!.slice(queries.length), 50).toFixed(2)} ms | ${percentile(wall[k]!.slice(queries.length), 99).toFixed(2)} ms |`));
} finally {
  vault.close();
  await fake.stop();
}
process.exit(0);
