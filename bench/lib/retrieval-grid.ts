// The offline grid behind the built-in model's fusion (docs/retrieval-experiments.md, "What
// we tried"): fusion settings scored in seconds on the per-question dumps of
// bench/lib/retrieval-dump.ts (v2, sparse), against the bare BM25 ranking, per
// set and kind, on the tuning halves, the docs set and SciFact's train queries.
// A setting is "safe" when no set or kind falls below BM25 in hit@5, no set's
// MRR falls more than 0.002 below it, and SciFact's nDCG@10 is not below it.
//   bun bench/lib/retrieval-grid.ts [tune|report]
//     (needs dumps/oh.v2.json, srd.v2.json, docs.v2.json, scifact-train.v2.json; `report` reads scifact.v2.json)
// It mirrors lib/semantic/ranking.ts, fusion.ts, retrieve.ts and the second stage of
// lib/semantic/rerank.ts on the dumped features; bench/retrieval.ts measures
// the chosen setting for real.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { QueryTerms } from "../../lib/semantic/rerank";
import { BENCH_CACHE } from "./retrieval-data";

interface Q {
  id: string;
  kind?: string;
  half?: string;
  stems: string[];
  idf: number[];
  rel: number[];
  kw: [number, number][];
  bare: [number, number][];
  vec: number[];
  c: Record<number, number[]>;
  feats: Record<number, number[]>;
}
export interface F {
  q: Q;
  set: string;
  kw: number[];
  bare: number[];
  vec: number[];
  vscore: Map<number, number>;
  conf: number;
  confIdf: number;
}
const half = process.argv[2] ?? "tune";

const ids = (l: [number, number][]) => l.map(([i]) => i);
const feat = (q: Q, i: number) => q.feats[i] ?? [0, 0, 0, 0, 0, 0, 0];
/** keywordConfidence on the dumped features: the best title share or proximity (share, for one word) among the keyword top 3. */
function confidence(q: Q, idf: boolean): number {
  let best = 0;
  for (const [i] of q.kw.slice(0, 3)) {
    const f = feat(q, i);
    best = idf ? Math.max(best, f[6]!, q.stems.length > 1 ? f[5]! : f[4]!) : Math.max(best, f[0]!, q.stems.length > 1 ? f[2]! : f[3]!);
  }
  return best;
}
function load(name: string, file: string, filter: (q: Q) => boolean): F[] {
  const d = JSON.parse(readFileSync(join(BENCH_CACHE, "dumps", `${file}.v2.json`), "utf8")) as { queries: Q[]; titles: string[] };
  const titleStems = new Map<number, string[]>();
  return d.queries.filter(filter).map((q) => {
    // Title coverage: the share of the title's own words that the query holds (feature 8; feature 7 is
    // the dumped two-sided `named` of lib/semantic/rerank.ts).
    const qs = new Set(q.stems);
    for (const [i, x] of Object.entries(q.feats)) {
      let t = titleStems.get(+i);
      if (!t) titleStems.set(+i, (t = new QueryTerms(d.titles[+i] ?? "").stems));
      x[8] = t.length ? t.filter((s) => qs.has(s)).length / t.length : 0;
    }
    // The vector list as retrieve() builds it: the best 100 notes by best passage, then the keyword hits it
    // missed, all scored by best passage + 0.25 × note vector.
    const vs = (i: number) => (q.c[i] ? q.c[i]![0]! + 0.25 * q.c[i]![2]! : -2);
    const byBest = [...q.vec].sort((a, b) => (q.c[b]?.[0] ?? -2) - (q.c[a]?.[0] ?? -2)).slice(0, 100);
    const kw = ids(q.kw).slice(0, 100);
    const vec = [...new Set([...byBest, ...kw])].sort((a, b) => vs(b) - vs(a));
    return { q, set: name, kw, bare: ids(q.bare).slice(0, 100), vec, vscore: new Map(vec.map((i) => [i, vs(i)])), conf: confidence(q, false), confIdf: confidence(q, true) };
  });
}

export interface P {
  k: number;
  wv: number;
  wvWeak: number;
  aN: number;
  aM: number;
  noA: number;
  outM: number;
  wOut: number;
  slot: number;
  slotBelow: number;
  /** Confidence from IDF-weighted features (title and window share of the query's IDF mass). */
  idfConf: boolean;
  /** Agreement degree: the vector weight × min(1, overlap of vector top 10 and keyword top 10 / agreeFull) (0: off). */
  agreeFull: number;
  /** Vector margin: when vscore(vec top 1) − vscore(vec top `marginAt`) is below `margin`, the vector weight × `marginW` (0: off). */
  margin: number;
  /** Above `margin`, the weight rises linearly to full at `marginHi` (≤ margin: a step). */
  marginHi: number;
  marginAt: number;
  marginW: number;
  /**
   * Keyword score gap: g = (BM25 of keyword top 1 − of top `gapAt`) / top 1. A clear keyword winner
   * (g ≥ gapHi) scales the vector weight by gapMin, a flat keyword list (g ≤ gapLo) leaves it; linear between (gapHi 0: off).
   */
  gapAt: number;
  gapLo: number;
  gapHi: number;
  gapMin: number;
  /** The title feature: "named" the dumped two-sided share (what ships since the third pass), "q" the share of the query's words in the title (the second pass), "min" the smaller of that and the title's coverage, "gm" their geometric mean, "cov" coverage alone. */
  tmode: "named" | "q" | "min" | "gm" | "cov";
  /** Second stage weights (title, heading, proximity, IDF-weighted proximity) over the fused top `depth`. */
  rt: number;
  rh: number;
  rp: number;
  rip: number;
  /** The vectors' best keeps its place only while the margin gate is open. */
  slotGated: boolean;
  /** Second stage: the vector score, scaled 0–1 over the re-scored head, at this weight. */
  rv: number;
  depth: number;
  /**
   * Where the vector margin finds the vector list flat: instead of closing it, re-score the keyword list
   * by min-max BM25 + `flatCvx` × min-max vector score over its best 100 (0: off), and the second stage
   * over it unless `flatNoRerank`.
   */
  flatCvx?: number;
  flatNoRerank?: boolean;
  /** Also re-score by the convex form (not RRF) when the keyword confidence is at least this (0: off). */
  cvxAbove?: number;
  /** The vectors' second note kept at place slot2 + 1 under the same conditions as the first, below this confidence (0: off). */
  slot2?: number;
  slot2Below?: number;
  /** The convex form also where the agreement gate closed the vector list. */
  cvxGate?: boolean;
  /** The convex form's vector score per candidate, when not f.vscore (e.g. Rocchio feedback's). */
  cvxScore?: (f: F, i: number) => number | undefined;
  /** Second-stage weights where the vector list is flat (default: the same). */
  flatRerank?: { rt: number; rh: number; rp: number };
  /** A third ranked list (e.g. title vectors), fused by RRF at weight wExtra where keyword confidence is below extraBelow. */
  extra?: (f: F) => number[] | undefined;
  wExtra?: number;
  extraBelow?: number;
  /** The extra list's first note kept at this place (index) under the same condition (0: off). */
  extraSlot?: number;
}
// What ships (lib/semantic/ranking.ts, the built-in model's row).
export const DEFAULT: P = { k: 10, wv: 0.25, wvWeak: 2, aN: 5, aM: 10, noA: 0, outM: 50, wOut: 0.5, slot: 3, slotBelow: 0.5, idfConf: false, agreeFull: 0, margin: 0.12, marginHi: 0, marginAt: 30, marginW: 0, rt: 0.3, rh: 0.1, rp: 0.1, rip: 0, rv: 0, slotGated: true, depth: 10, gapAt: 10, gapLo: 0.3, gapHi: 0, gapMin: 0, tmode: "named", flatCvx: 0.5 };

export function rank(f: F, p: P): number[] {
  const conf = p.idfConf ? f.confIdf : f.conf;
  let w = p.wvWeak + (p.wv - p.wvWeak) * conf;
  let marginOpen = true;
  let gateClosed = false;
  if (f.kw.length) {
    if (p.aN) {
      const top = new Set(f.kw.slice(0, p.aM));
      if (!f.vec.slice(0, p.aN).some((i) => top.has(i))) {
        w *= p.noA;
        gateClosed = true;
      }
    }
    if (p.agreeFull) {
      const top = new Set(f.kw.slice(0, 10));
      const overlap = f.vec.slice(0, 10).filter((i) => top.has(i)).length;
      w *= Math.min(1, overlap / p.agreeFull);
    }
    if (p.gapHi) {
      const s = f.q.kw;
      const g = s.length >= p.gapAt ? (s[0]![1] - s[p.gapAt - 1]![1]) / s[0]![1] : 1;
      const t = Math.min(1, Math.max(0, (g - p.gapLo) / (p.gapHi - p.gapLo)));
      w *= 1 - t * (1 - p.gapMin);
    }
    if (p.margin && f.vec.length > p.marginAt) {
      const gap = f.vscore.get(f.vec[0]!)! - f.vscore.get(f.vec[p.marginAt - 1]!)!;
      if (p.marginHi > p.margin) w *= p.marginW + (1 - p.marginW) * Math.min(1, Math.max(0, (gap - p.margin) / (p.marginHi - p.margin)));
      else if (gap < p.margin) w *= p.marginW;
      if (gap < p.margin) marginOpen = false;
    }
  }
  const m = new Map<number, number>();
  const cvx = (!marginOpen || (p.cvxAbove && conf >= p.cvxAbove) || (p.cvxGate && gateClosed)) && p.flatCvx ? p.flatCvx : 0;
  if (cvx) {
    const kw = f.q.kw.slice(0, 100);
    const mm = (xs: number[]) => {
      const hi = Math.max(...xs);
      const lo = Math.min(...xs);
      return xs.map((x) => (hi > lo ? (x - lo) / (hi - lo) : 1));
    };
    const ks = mm(kw.map(([, s]) => s));
    const vs = mm(kw.map(([i]) => (p.cvxScore ? p.cvxScore(f, i) : f.vscore.get(i)) ?? -1));
    kw.forEach(([i], j) => m.set(i, (ks[j]! + cvx * vs[j]!) / (1 + cvx) + 1e-9));
    f.vec.forEach((id, r) => { if (!m.has(id)) m.set(id, 1e-12 / (r + 1)); });
  } else {
    const add = (l: number[], weight: (id: number) => number) => l.forEach((id, r) => m.set(id, (m.get(id) ?? 0) + weight(id) / (p.k + r + 1)));
    add(f.kw, () => 1);
    const inside = new Set(f.kw.slice(0, p.outM || Infinity));
    add(f.vec, (id) => (p.outM && !inside.has(id) ? p.wOut : 1) * (w || 1e-9));
  }
  const extra = p.extra && p.wExtra && conf < (p.extraBelow ?? 2) ? p.extra(f) : undefined;
  if (extra) extra.forEach((id, r) => m.set(id, (m.get(id) ?? 0) + p.wExtra! / (p.k + r + 1)));
  const order = [...m].sort((a, b) => b[1] - a[1]).map(([i]) => i);
  const depth = cvx && p.flatNoRerank ? 0 : p.depth;
  const head = order.slice(0, depth);
  const top = m.get(head[0]!) ?? 1;
  const vs = head.map((i) => f.vscore.get(i) ?? -1);
  const vmax = Math.max(...vs);
  const vmin = Math.min(...vs);
  const vn = (i: number) => (p.rv && vmax > vmin ? ((f.vscore.get(i) ?? vmin) - vmin) / (vmax - vmin) : 0);
  const rescored = head.map((i) => {
    const x = feat(f.q, i);
    const t = p.tmode === "q" ? x[0]! : p.tmode === "named" ? (x[7] ?? 0) : p.tmode === "min" ? Math.min(x[0]!, x[8] ?? 0) : p.tmode === "gm" ? Math.sqrt(x[0]! * (x[8] ?? 0)) : (x[8] ?? 0);
    const r = cvx && p.flatRerank ? p.flatRerank : p;
    return [i, m.get(i)! / top + r.rt * t + r.rh * x[1]! + r.rp * x[2]! + p.rip * x[5]! + p.rv * vn(i)] as const;
  });
  let out = [...rescored.sort((a, b) => b[1] - a[1]).map(([i]) => i), ...order.slice(depth)];
  if (p.slot && f.kw.length && (marginOpen || !p.slotGated) && conf < p.slotBelow && !out.slice(0, p.slot).includes(f.vec[0]!)) out = [...out.slice(0, p.slot), f.vec[0]!, ...out.slice(p.slot).filter((i) => i !== f.vec[0])];
  if (extra && p.extraSlot && extra.length && !out.slice(0, p.extraSlot).includes(extra[0]!)) out = [...out.slice(0, p.extraSlot), extra[0]!, ...out.slice(p.extraSlot).filter((i) => i !== extra[0])];
  if (p.slot2 && f.kw.length && marginOpen && conf < (p.slot2Below ?? p.slotBelow) && !out.slice(0, p.slot2).includes(f.vec[1]!)) out = [...out.slice(0, p.slot2), f.vec[1]!, ...out.slice(p.slot2).filter((i) => i !== f.vec[1])];
  return out;
}

const ndcg10 = (l: number[], rel: number[]) => {
  let dcg = 0;
  l.slice(0, 10).forEach((d, i) => {
    if (rel.includes(d)) dcg += 1 / Math.log2(i + 2);
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(10, rel.length); i++) ideal += 1 / Math.log2(i + 2);
  return ideal ? dcg / ideal : 0;
};

export function evaluate(fs: F[], p: P) {
  const per = new Map<string, [number, number]>(); // set:kind → [hybrid hits, BM25 hits]
  const mrr = new Map<string, [number, number, number]>(); // set → [hybrid, BM25, n]
  const nd = new Map<string, [number, number, number]>();
  let losses = 0;
  for (const f of fs) {
    const l = rank(f, p);
    const at = (x: number[]) => x.findIndex((i) => f.q.rel.includes(i));
    const r = at(l);
    const b = at(f.bare);
    const key = `${f.set}:${f.q.kind ?? "all"}`;
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
    const n = nd.get(f.set) ?? [0, 0, 0];
    n[0] += ndcg10(l, f.q.rel);
    n[1] += ndcg10(f.bare, f.q.rel);
    n[2]++;
    nd.set(f.set, n);
  }
  let deficit = 0;
  let gain = 0;
  for (const [key, [h, b]] of per) {
    if (key.startsWith("sci")) continue; // SciFact is judged by nDCG@10
    deficit += Math.max(0, b - h);
    gain += h - b;
  }
  const mrrDeficit = [...mrr].filter(([s]) => !s.startsWith("sci")).reduce((a, [, [h, b, n]]) => a + Math.max(0, (b - h) / n), 0);
  const sci = nd.get("sci");
  const sciNd = sci ? sci[0] / sci[2] : 0;
  const sciBm = sci ? sci[1] / sci[2] : 0;
  const mrrSum = [...mrr].filter(([s]) => !s.startsWith("sci")).reduce((a, [, [h, , n]]) => a + h / n, 0);
  const cells = [...mrr.keys()].map((set) =>
    set === "sci"
      ? `sci nDCG ${sciNd.toFixed(3)} (BM25 ${sciBm.toFixed(3)})`
      : `${set} ${[...per].filter(([k]) => k.startsWith(`${set}:`)).map(([k, [h, b]]) => `${k.split(":")[1]!.slice(0, 4)} ${h}/${b}`).join(" ")} mrr ${(mrr.get(set)![0] / mrr.get(set)![2]).toFixed(3)}`,
  );
  return { safe: deficit === 0 && mrrDeficit < 0.002 && sciNd >= sciBm, gain, losses, mrrSum, sciNd, sciBm, line: `${cells.join(" | ")} | gain ${gain} losses ${losses}` };
}

export function loadAll(which = half): F[] {
  const mine = (q: Q) => q.half === which;
  return [...load("oh", "oh", mine), ...load("srd", "srd", mine), ...load("docs", "docs", () => true), ...load("sci", which === "report" ? "scifact" : "scifact-train", () => true)];
}

if (import.meta.main) {
  const fs = loadAll();
  const show = (name: string, p: P) => console.log(`${name}\n  ${evaluate(fs, p).line}${evaluate(fs, p).safe ? " SAFE" : ""}`);
  show("default", DEFAULT);
  show("no vectors", { ...DEFAULT, wv: 0, wvWeak: 0, slot: 0 });
  const rows: { p: P; e: ReturnType<typeof evaluate> }[] = [];
  for (const idfConf of [false, true])
    for (const agreeFull of [0, 2, 3, 5])
      for (const [margin, marginAt, marginW] of [[0, 10, 0], [0.02, 10, 0], [0.04, 10, 0], [0.06, 10, 0], [0.04, 10, 0.25], [0.08, 10, 0.25], [0.1, 30, 0]] as const)
        for (const [rt, rh, rp, rip] of [[0.3, 0.1, 0.1, 0], [0.3, 0.1, 0, 0.1], [0.3, 0.1, 0.1, 0.1], [0.2, 0.1, 0.1, 0], [0.3, 0.1, 0.2, 0]] as const)
          for (const [wv, wvWeak] of [[0.25, 2], [0.25, 1], [0.25, 3], [0.5, 2]] as const)
            for (const slotBelow of [0.5, 0.3]) {
              const p: P = { ...DEFAULT, idfConf, agreeFull, margin, marginAt, marginW, rt, rh, rp, rip, wv, wvWeak, slotBelow };
              rows.push({ p, e: evaluate(fs, p) });
            }
  const safe = rows.filter((r) => r.e.safe);
  console.log(`\n${rows.length} settings on the ${half} halves (+ docs, SciFact ${half === "report" ? "test" : "train"}); ${safe.length} safe`);
  safe.sort((a, b) => b.e.gain - a.e.gain || b.e.sciNd - a.e.sciNd || b.e.mrrSum - a.e.mrrSum);
  console.log("\nSafe settings, most questions gained over BM25 first:");
  for (const r of safe.slice(0, 12)) console.log(`  ${JSON.stringify(r.p)}\n    ${r.e.line}`);
  rows.sort((a, b) => b.e.sciNd - a.e.sciNd);
  console.log("\nBest SciFact nDCG@10 (safe or not):");
  for (const r of rows.slice(0, 6)) console.log(`  ${JSON.stringify(r.p)}\n    ${r.e.line}${r.e.safe ? " SAFE" : ""}`);
}
