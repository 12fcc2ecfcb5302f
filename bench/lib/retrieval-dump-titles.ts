// Title vectors, dumped for the grid: each note's title (and aliases) embedded on its own by the
// built-in model, and per question the notes ranked by the cosine of the query with that vector
// (best 100, with scores). A note's title names what it is about; a paraphrased question names the
// same thing in other words, which a title-to-question comparison might catch where passages do not.
//   bun bench/lib/retrieval-dump-titles.ts oh|srd|docs|scifact [train]   → $LETTUCE_BENCH_CACHE/dumps/<name>[-train].titles.json
import { builtinEmbedder } from "../../lib/providers/select";
import { normalize } from "../../lib/providers/types";
import { BENCH_CACHE } from "./retrieval-data";
import { openSetVault, setFromArgs } from "./retrieval-dump-setup";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
const { which, split, set } = setFromArgs();
const vault = await openSetVault(set, false);
const notes = vault.indexDb.query("SELECT id, title, aliases FROM notes ORDER BY id").all() as { id: number; title: string; aliases: string }[];
const text = (n: { title: string; aliases: string }) => {
  let a: string[] = [];
  try {
    a = (JSON.parse(n.aliases) as unknown[]).filter((x): x is string => typeof x === "string");
  } catch {}
  return [n.title, ...a].join(", ");
};
const emb = builtinEmbedder();
const t0 = performance.now();
const tv: Float32Array[] = [];
for (let i = 0; i < notes.length; i += 64) tv.push(...(await emb.embed(notes.slice(i, i + 64).map(text), { purpose: "document" })).map((v) => normalize(Float32Array.from(v))));
const qv: Float32Array[] = [];
for (let i = 0; i < set.queries.length; i += 64) qv.push(...(await emb.embed(set.queries.slice(i, i + 64).map((q) => q.text), { purpose: "query" })).map((v) => normalize(Float32Array.from(v))));
console.error(`${notes.length} titles and ${set.queries.length} queries embedded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const r4 = (x: number) => Math.round(x * 1e4) / 1e4;
const out = set.queries.map((q, qi) => {
  const s = tv.map((v) => {
    let d = 0;
    for (let i = 0; i < v.length; i++) d += v[i]! * qv[qi]![i]!;
    return d;
  });
  const order = [...s.keys()].sort((a, b) => s[b]! - s[a]!).slice(0, 100);
  return { id: q.id, t: order.map((i) => [i, r4(s[i]!)]) };
});
const file = join(BENCH_CACHE, "dumps", `${which}${split === "train" ? "-train" : ""}.titles.json`);
writeFileSync(file, JSON.stringify({ queries: out }));
console.error(`wrote ${file}`);
emb.close();
vault.close();
process.exit(0);
