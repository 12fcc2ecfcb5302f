// The offline grid behind the built-in model's fusion (docs/semantic.md, "What
// we tried, second pass"): thousands of fusion settings scored in seconds on
// the per-question dumps of bench/lib/retrieval-dump.ts, against the bare BM25
// ranking, per set and kind. A setting is "safe" when no set or kind falls
// below BM25 in hit@5 and no set's MRR falls more than 0.002 below it.
//   bun bench/lib/retrieval-grid.ts [tune|report]   (needs dumps/oh.json, srd.json, docs.json)
// It mirrors lib/semantic/fusion.ts and the second stage of lib/semantic/rerank.ts
// on the dumped features; bench/retrieval.ts measures the chosen setting for real.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BENCH_CACHE } from "./retrieval-data";

interface Q { id: string; kind: string; half: string; nstems: number; rel: number[]; kw: [number, number][]; bare: [number, number][]; prf: [number, number][]; best: number[]; note: number[]; feats: Record<number, number[]> }
interface F { q: Q; set: string; kw: number[]; bare: number[]; prf: number[]; vec: number[]; conf: number }
const half = process.argv[2] ?? "tune";

const ids = (l: [number, number][]) => l.map(([i]) => i);
/** keywordConfidence on the dumped features: the best title share or proximity (share, for one word) among the keyword top 3. */
function confidence(q: Q): number {
  let best = 0;
  for (const [i] of q.kw.slice(0, 3)) {
    const f = q.feats[i] ?? [0, 0, 0, 0];
    best = Math.max(best, f[0]!, q.nstems > 1 ? f[2]! : f[3]!);
  }
  return best;
}
function load(name: string): F[] {
  const d = JSON.parse(readFileSync(join(BENCH_CACHE, "dumps", `${name}.json`), "utf8")) as { queries: Q[] };
  return d.queries
    .filter((q) => name === "docs" || q.half === half)
    .map((q) => {
      // The vector list: best passage + 0.25 × note vector, the keyword candidates it missed appended (as retrieve() scores them).
      const score = (i: number) => q.best[i]! + 0.25 * q.note[i]!;
      const top = q.best.map((_, i) => i).sort((a, b) => score(b) - score(a)).slice(0, 100);
      const seen = new Set(top);
      const extra = [...new Set([...ids(q.kw), ...ids(q.prf)])].filter((i) => !seen.has(i)).sort((a, b) => score(b) - score(a));
      return { q, set: name, kw: ids(q.kw).slice(0, 100), bare: ids(q.bare).slice(0, 100), prf: ids(q.prf).slice(0, 100), vec: [...top, ...extra].slice(0, 100), conf: confidence(q) };
    });
}

interface P { k: number; wv: number; wvWeak: number; wp: number; aN: number; aM: number; noA: number; outM: number; wOut: number; slot: number; slotBelow: number }
function rank(f: F, p: P): number[] {
  let w = p.wvWeak + (p.wv - p.wvWeak) * f.conf;
  if (p.aN && f.kw.length) {
    const top = new Set(f.kw.slice(0, p.aM));
    if (!f.vec.slice(0, p.aN).some((i) => top.has(i))) w *= p.noA;
  }
  const m = new Map<number, number>();
  const add = (l: number[], weight: (id: number) => number) => l.forEach((id, r) => m.set(id, (m.get(id) ?? 0) + weight(id) / (p.k + r + 1)));
  add(f.kw, () => 1);
  if (p.wp) add(f.prf, () => p.wp);
  const inside = new Set(f.kw.slice(0, p.outM || Infinity));
  if (w) add(f.vec, (id) => (p.outM && !inside.has(id) ? p.wOut : 1) * w);
  // The second stage over the fused top 10 (title 0.3, heading 0.1, proximity 0.1).
  const order = [...m].sort((a, b) => b[1] - a[1]).map(([i]) => i);
  const head = order.slice(0, 10);
  const top = m.get(head[0]!) ?? 1;
  const rescored = head.map((i) => {
    const x = f.q.feats[i] ?? [0, 0, 0, 0];
    return [i, m.get(i)! / top + 0.3 * x[0]! + 0.1 * x[1]! + 0.1 * x[2]!] as const;
  });
  let out = [...rescored.sort((a, b) => b[1] - a[1]).map(([i]) => i), ...order.slice(10)];
  if (p.slot && f.kw.length && f.conf < p.slotBelow && !out.slice(0, p.slot).includes(f.vec[0]!)) out = [...out.slice(0, p.slot), f.vec[0]!, ...out.slice(p.slot).filter((i) => i !== f.vec[0])];
  return out;
}

function evaluate(fs: F[], p: P) {
  const per = new Map<string, [number, number]>(); // set:kind → [hybrid hits, BM25 hits]
  const mrr = new Map<string, [number, number, number]>(); // set → [hybrid, BM25, n]
  let losses = 0;
  for (const f of fs) {
    const at = (l: number[]) => l.findIndex((i) => f.q.rel.includes(i));
    const r = at(rank(f, p));
    const b = at(f.bare);
    const key = `${f.set}:${f.q.kind}`;
    const c = per.get(key) ?? [0, 0];
    if (r >= 0 && r < 5) c[0]++;
    if (b >= 0 && b < 5) c[1]++;
    if (b >= 0 && b < 5 && !(r >= 0 && r < 5)) losses++;
    per.set(key, c);
    const m = mrr.get(f.set) ?? [0, 0, 0];
    m[0] += r >= 0 && r < 10 ? 1 / (r + 1) : 0;
    m[1] += b >= 0 && b < 10 ? 1 / (b + 1) : 0;
    m[2]++;
    mrr.set(f.set, m);
  }
  let deficit = 0;
  let gain = 0;
  for (const [h, b] of per.values()) {
    deficit += Math.max(0, b - h);
    gain += h - b;
  }
  const mrrDeficit = [...mrr.values()].reduce((a, [h, b, n]) => a + Math.max(0, (b - h) / n), 0);
  const mrrSum = [...mrr.values()].reduce((a, [h, , n]) => a + h / n, 0);
  const cells = [...mrr.keys()].map((set) => `${set} ${[...per].filter(([k]) => k.startsWith(`${set}:`)).map(([k, [h, b]]) => `${k.split(":")[1]!.slice(0, 4)} ${h}/${b}`).join(" ")} mrr ${(mrr.get(set)![0] / mrr.get(set)![2]).toFixed(3)}`);
  return { safe: deficit === 0 && mrrDeficit < 0.002, gain, losses, mrrSum, line: `${cells.join(" | ")} | gain ${gain} losses ${losses}` };
}

const fs = ["oh", "srd", "docs"].flatMap(load);
const rows: { p: P; e: ReturnType<typeof evaluate> }[] = [];
const families = new Map<string, { n: number; safe: number }>();
for (const k of [2, 5, 10, 20, 30, 60])
  for (const wv of [0.25, 0.5, 1])
    for (const wvWeak of [0.5, 1, 2, 3])
      for (const wp of [0, 0.5, 1])
        for (const [aN, aM, noA] of [[0, 0, 1], [5, 10, 0], [5, 20, 0], [3, 10, 0], [5, 10, 0.25], [5, 20, 0.25], [10, 30, 0]] as const)
          for (const [outM, wOut] of [[0, 1], [20, 0.5], [50, 0.5]] as const) {
            const p: P = { k, wv, wvWeak, wp, aN, aM, noA, outM, wOut, slot: 0, slotBelow: 0 };
            const e = evaluate(fs, p);
            rows.push({ p, e });
            const fam = JSON.stringify({ aN, aM, noA, outM, wOut });
            const s = families.get(fam) ?? { n: 0, safe: 0 };
            s.n++;
            if (e.safe) s.safe++;
            families.set(fam, s);
          }
console.log(`${rows.length} settings on the ${half} halves (+ docs)`);
console.log("\nGate families, by the share of their settings that are safe:");
for (const [fam, s] of [...families].sort((a, b) => b[1].safe / b[1].n - a[1].safe / a[1].n)) console.log(`  ${fam} ${(s.safe / s.n).toFixed(2)}`);
const best = [...families].sort((a, b) => b[1].safe / b[1].n - a[1].safe / a[1].n)[0]![0];
const inFamily = rows.filter((r) => r.e.safe && JSON.stringify({ aN: r.p.aN, aM: r.p.aM, noA: r.p.noA, outM: r.p.outM, wOut: r.p.wOut }) === best);
inFamily.sort((a, b) => b.e.gain - a.e.gain || a.e.losses - b.e.losses || b.e.mrrSum - a.e.mrrSum);
console.log("\nSafe settings of the safest family, most gained first:");
for (const r of inFamily.slice(0, 8)) console.log(`  ${JSON.stringify(r.p)}\n    ${r.e.line}`);
const chosen = inFamily[0]!.p;
console.log("\nA place for the vector side's best note, on the chosen setting:");
for (const slot of [0, 2, 3, 4]) for (const slotBelow of slot ? [0.3, 0.5, 2] : [0]) console.log(`  ${slot ? `place ${slot + 1} below confidence ${slotBelow}` : "none"}: ${evaluate(fs, { ...chosen, slot, slotBelow }).line}`);
