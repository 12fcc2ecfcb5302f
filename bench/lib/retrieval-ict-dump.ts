// Self-made question/passage pairs from a vault's own text, for a query-side adapter fitted per vault
// (docs/retrieval-experiments.md, fifteenth pass): a sentence taken out of a passage stands in for a question
// (the inverse cloze task of Lee et al., 2019), the passage without it for its answer. Written beside
// retrieval-centre-dump.ts's dump of the same set (run that first), for bench/lib/retrieval_ict.py.
//   bun bench/lib/retrieval-ict-dump.ts oh|srd|docs|scifact [train] [pairs]
//     → $LETTUCE_BENCH_CACHE/dumps/<name>[-train].ict.{json,f32}
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { builtinEmbedder } from "../../lib/providers/select";
import { allPassageVectors } from "../../lib/semantic/store";
import { BENCH_CACHE } from "./retrieval-data";
import { openSetVault, setFromArgs, unit } from "./retrieval-dump-setup";

const { which, split, set } = setFromArgs();
const want = Number(process.argv[4] ?? 1500);
const vault = await openSetVault(set);
const db = vault.indexDb;
const notes = db.query("SELECT id, path FROM notes ORDER BY id").all() as { id: number; path: string }[];
const idx = new Map(notes.map((n, i) => [n.id, i]));
// The dump's passage rows are allPassageVectors' order, restricted to known notes: the same walk gives each row its id.
const rowOf = new Map<number, number>();
for (const p of allPassageVectors(db)) if (idx.has(p.noteId)) rowOf.set(p.id, rowOf.size);
const texts = db.query("SELECT p.id AS id, p.heading AS heading, p.text AS text, n.title AS title FROM passages p JOIN notes n ON n.id = p.note_id").all() as { id: number; heading: string; text: string; title: string }[];

// A fixed-seed shuffle: the same pairs on every run.
let seed = 7;
const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const pool = texts.filter((t) => rowOf.has(t.id));
for (let i = pool.length - 1; i > 0; i--) {
  const j = Math.floor(rand() * (i + 1));
  [pool[i], pool[j]] = [pool[j]!, pool[i]!];
}
const pairs: { row: number; query: string; rest: string }[] = [];
for (const p of pool) {
  if (pairs.length >= want) break;
  const sentences = p.text.split(/(?<=[.!?])\s+|\n+/).map((s) => s.trim());
  const ok = sentences.map((s, i) => [s, i] as const).filter(([s]) => {
    const words = s.split(/\s+/).length;
    return words >= 5 && words <= 30 && /[a-z]/i.test(s);
  });
  if (ok.length === 0 || sentences.length < 2) continue;
  const [q, at] = ok[Math.floor(rand() * ok.length)]!;
  const rest = sentences.filter((_, i) => i !== at).join(" ");
  if (rest.split(/\s+/).length < 8) continue;
  pairs.push({ row: rowOf.get(p.id)!, query: q, rest: [p.title, p.heading, rest].filter(Boolean).join("\n") });
}
const emb = builtinEmbedder();
const dim = 512;
const out = new Float32Array(pairs.length * 2 * dim);
for (let i = 0; i < pairs.length; i += 64) {
  const batch = pairs.slice(i, i + 64);
  const qs = await emb.embed(batch.map((p) => p.query), { purpose: "query" });
  const ds = await emb.embed(batch.map((p) => p.rest), { purpose: "document" });
  qs.forEach((v, j) => out.set(unit(v), (i + j) * dim));
  ds.forEach((v, j) => out.set(unit(v), (pairs.length + i + j) * dim));
}
const dir = join(BENCH_CACHE, "dumps");
mkdirSync(dir, { recursive: true });
const name = `${which}${split === "train" ? "-train" : ""}.ict`;
writeFileSync(join(dir, `${name}.f32`), out);
writeFileSync(join(dir, `${name}.json`), JSON.stringify({ dim, pairs: pairs.map((p) => ({ row: p.row, query: p.query })) }));
console.error(`${name}: ${pairs.length} pairs`);
vault.close();
process.exit(0);
