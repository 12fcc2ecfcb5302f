// Pseudo-relevance feedback on the query vector (Rocchio), dumped for the grid
// (bench/lib/retrieval-grid.ts): for each question, the vector list of q' = normalize(q + β · mean of
// the note vectors of the keyword list's best k, keys "k<k>b<β>", or of the vector list's own best k,
// keys "v<k>b<β>"), for several k and β, scored as retrieve() scores (best passage + 0.25 × note
// vector), over that list's best 100 and the keyword list's best 100.
//   bun bench/lib/retrieval-dump-prf.ts oh|srd|docs|scifact [train]   → $LETTUCE_BENCH_CACHE/dumps/<name>[-train].prf.json
import { builtinEmbedder } from "../../lib/providers/select";
import { KEYWORD_WEIGHTS, keywordRank } from "../../lib/semantic/keyword";
import { allNoteVectors } from "../../lib/semantic/store";
import { BENCH_CACHE } from "./retrieval-data";
import { openSetVault, passageMatrix, setFromArgs, unit } from "./retrieval-dump-setup";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
const { which, split, set } = setFromArgs();
const KS = [1, 3, 5, 10];
const BETAS = [0.25, 0.5, 1, 2];
const vault = await openSetVault(set);
const db = vault.indexDb;
const notes = db.query("SELECT id, path FROM notes ORDER BY id").all() as { id: number; path: string }[];
const idx = new Map(notes.map((n, i) => [n.id, i]));
const N = unit;
const { flat, owner, dim } = passageMatrix(db, idx);
const nvFlat = new Float32Array(notes.length * dim);
for (const r of allNoteVectors(db)) if (idx.has(r.noteId)) nvFlat.set(N(r.vector), idx.get(r.noteId)! * dim);
const dots = (m: Float32Array, rows: number, q: Float32Array) => {
  const out = new Float32Array(rows);
  for (let r = 0; r < rows; r++) {
    let s = 0;
    const o = r * dim;
    for (let i = 0; i < dim; i++) s += m[o + i]! * q[i]!;
    out[r] = s;
  }
  return out;
};
const emb = builtinEmbedder();
const qvs: Float32Array[] = [];
for (let i = 0; i < set.queries.length; i += 64) qvs.push(...(await emb.embed(set.queries.slice(i, i + 64).map((q) => q.text), { purpose: "query" })).map(N));
const r4 = (x: number) => Math.round(x * 1e4) / 1e4;
const out: unknown[] = [];
const t0 = performance.now();
set.queries.forEach((q, qi) => {
  const qv = qvs[qi]!;
  const kw = keywordRank(db, q.text, 100, true, KEYWORD_WEIGHTS).map((h) => idx.get(h.noteId)!);
  const sq = dots(flat, owner.length, qv);
  const nq = dots(nvFlat, notes.length, qv);
  const rel = notes.map((n, i) => (q.relevant.has(set.docOf(n.path)) ? i : -1)).filter((i) => i >= 0);
  const v: Record<string, [number, number][]> = {};
  // The vector list's own best notes (best passage + 0.25 × note vector), for vector-side feedback ("v" keys).
  const best0 = new Float32Array(notes.length).fill(-2);
  for (let p = 0; p < owner.length; p++) if (sq[p]! > best0[owner[p]!]!) best0[owner[p]!] = sq[p]!;
  const vtop = [...best0.keys()].filter((i) => best0[i]! > -2).sort((a, c) => best0[c]! + 0.25 * nq[c]! - (best0[a]! + 0.25 * nq[a]!));
  for (const [src, k] of [...KS.map((k) => ["k", k] as const), ...KS.map((k) => ["v", k] as const)]) {
    const top = src === "k" ? kw.slice(0, k) : vtop.slice(0, k);
    if (!top.length) continue;
    const m = new Float32Array(dim);
    for (const t of top) for (let i = 0; i < dim; i++) m[i]! += nvFlat[t * dim + i]! / top.length;
    const sm = dots(flat, owner.length, m);
    const nm = dots(nvFlat, notes.length, m);
    let qm = 0;
    let mm = 0;
    for (let i = 0; i < dim; i++) {
      qm += qv[i]! * m[i]!;
      mm += m[i]! * m[i]!;
    }
    for (const b of BETAS) {
      const norm = Math.sqrt(1 + 2 * b * qm + b * b * mm);
      const best = new Float32Array(notes.length).fill(-2);
      for (let p = 0; p < owner.length; p++) {
        const s = (sq[p]! + b * sm[p]!) / norm;
        if (s > best[owner[p]!]!) best[owner[p]!] = s;
      }
      const vs = (i: number) => best[i]! + 0.25 * ((nq[i]! + b * nm[i]!) / norm);
      const all = [...best.keys()].filter((i) => best[i]! > -2).sort((a, c) => vs(c) - vs(a));
      const cand = [...new Set([...all.slice(0, 100), ...kw, ...rel])].filter((i) => best[i]! > -2).sort((a, c) => vs(c) - vs(a));
      v[`${src}${k}b${b}`] = cand.map((i) => [i, r4(vs(i))]);
    }
  }
  out.push({ id: q.id, v });
  if (qi % 100 === 99) console.error(`  ${qi + 1}/${set.queries.length} ${((performance.now() - t0) / 1000).toFixed(0)} s`);
});
const file = join(BENCH_CACHE, "dumps", `${which}${split === "train" ? "-train" : ""}.prf.json`);
writeFileSync(file, JSON.stringify({ ks: KS, betas: BETAS, queries: out }));
console.error(`wrote ${file}`);
emb.close();
vault.close();
process.exit(0);
