// BM25's k1 and b, which FTS5 fixes at 1.2 and 0.75 (docs/retrieval-experiments.md, sixteenth pass): the keyword side's
// scores recomputed from fts_stem's own postings (fts5vocab instance) with other values, the same column
// weights and query terms, no anchor text. Tuning halves, SciFact train, the docs set. An analysis aid.
//   bun bench/lib/retrieval-bm25-params.ts scifact|oh|srd|docs [--bm25f]
// --bm25f adds BM25F: each column normalised by its own length before one saturation.
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { keywordQuery, KEYWORD_WEIGHTS, keywordRank } from "../../lib/semantic/keyword";
import { scifact, obsidianHelp, srdWiki, anthropicDocs, ndcg, rr } from "./retrieval-data";

const which = process.argv[2] ?? "scifact";
const set = which === "scifact" ? scifact("train") : which === "oh" ? obsidianHelp() : which === "srd" ? srdWiki() : anthropicDocs();
const db = new Database(join(set.vault, ".lettuce/index.db"), { readonly: true });
db.exec("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, 'fts_stem', 'instance')");
const W = [KEYWORD_WEIGHTS.title, KEYWORD_WEIGHTS.aliases, KEYWORD_WEIGHTS.headings, KEYWORD_WEIGHTS.path, KEYWORD_WEIGHTS.body, KEYWORD_WEIGHTS.titleNg, KEYWORD_WEIGHTS.headingsNg, KEYWORD_WEIGHTS.bodyNg];
const colIdx: Record<string, number> = { title: 0, aliases: 1, headings: 2, path: 3, body: 4, title_ng: 5, headings_ng: 6, body_ng: 7 };
const len = new Map<number, number>();
const clen = new Map<number, Float64Array>();
const post = new Map<string, Map<number, Float64Array>>();
for (const r of db.query("SELECT term, doc, col FROM temp.v").iterate() as Iterable<{ term: string; doc: number; col: string }>) {
  len.set(r.doc, (len.get(r.doc) ?? 0) + 1);
  let cl = clen.get(r.doc);
  if (!cl) clen.set(r.doc, (cl = new Float64Array(8)));
  cl[colIdx[r.col]!]! += 1;
  let m = post.get(r.term);
  if (!m) post.set(r.term, (m = new Map()));
  let a = m.get(r.doc);
  if (!a) m.set(r.doc, (a = new Float64Array(8)));
  a[colIdx[r.col]!]! += 1;
}
const N = len.size;
let tot = 0;
for (const v of len.values()) tot += v;
const avg = tot / N;
const cavg = new Float64Array(8);
for (const cl of clen.values()) for (let c = 0; c < 8; c++) cavg[c]! += cl[c]! / N;
const pathOf = new Map((db.query("SELECT id, path FROM notes").all() as { id: number; path: string }[]).map((r) => [r.id, r.path]));
const mem = new Database(":memory:");
mem.exec("CREATE VIRTUAL TABLE qt USING fts5(x, tokenize = 'porter unicode61 remove_diacritics 2'); CREATE VIRTUAL TABLE qv USING fts5vocab(qt, instance);");
const termsOf = (q: string): string[] => {
  const expr = keywordQuery(q).words ?? "";
  const words = [...expr.matchAll(/"((?:[^"]|"")*)"/g)].map((m) => m[1]!.replace(/""/g, '"'));
  mem.exec("DELETE FROM qt");
  mem.query("INSERT INTO qt(x) VALUES (?)").run(words.join(" "));
  return [...new Set((mem.query("SELECT term FROM qv").all() as { term: string }[]).map((r) => r.term))];
};
const qs = set.queries.filter((q) => q.half !== "report").map((q) => ({ q, terms: termsOf(q.text) }));
// FTS5's IDF (floored at 1e-6) times each document's share from `part`, summed over the terms: the best 100.
function ranked(terms: string[], part: (doc: number, a: Float64Array) => number): number[] {
  const score = new Map<number, number>();
  for (const t of terms) {
    const m = post.get(t);
    if (!m) continue;
    let idf = Math.log((N - m.size + 0.5) / (m.size + 0.5));
    if (idf <= 0) idf = 1e-6;
    for (const [doc, a] of m) score.set(doc, (score.get(doc) ?? 0) + idf * part(doc, a));
  }
  return [...score].sort((x, y) => y[1] - x[1]).slice(0, 100).map(([d]) => d);
}
// FTS5's bm25(): the column weights summed into one frequency, the row's length over all its columns.
const rank = (terms: string[], k1: number, b: number) =>
  ranked(terms, (doc, a) => {
    let tf = 0;
    for (let c = 0; c < 8; c++) tf += W[c]! * a[c]!;
    return (tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * len.get(doc)!) / avg));
  });
const evalRun = (lists: number[][]) => {
  let nd = 0, mrr = 0, hit = 0;
  lists.forEach((l, i) => {
    const docs = l.map((d) => set.docOf(pathOf.get(d)!));
    const rel = qs[i]!.q.relevant;
    nd += ndcg(docs, rel, 10);
    mrr += rr(docs, rel, 10);
    if (docs.slice(0, 5).some((d) => rel.has(d))) hit++;
  });
  return `nDCG@10 ${(nd / lists.length).toFixed(4)} MRR@10 ${(mrr / lists.length).toFixed(3)} hit@5 ${hit}/${lists.length}`;
};
// Check: FTS5's own ranking (no anchors) against this one at 1.2 / 0.75.
const fts = qs.map(({ q }) => keywordRank(db, q.text, 100, true, KEYWORD_WEIGHTS, 0).map((h) => h.noteId));
console.log(`${set.name}: ${N} docs, avgdl ${avg.toFixed(1)}, ${qs.length} queries`);
console.log(`FTS5 bm25 (no anchors): ${evalRun(fts)}`);
const same = qs.filter(({ terms }, i) => rank(terms, 1.2, 0.75).slice(0, 10).join() === fts[i]!.slice(0, 10).join()).length;
console.log(`top 10 identical to FTS5's at 1.2/0.75: ${same}/${qs.length}`);
for (const k1 of [0.6, 0.9, 1.2, 1.5, 2.0]) {
  const row: string[] = [];
  for (const b of [0.3, 0.5, 0.75, 0.9]) row.push(`b ${b}: ${evalRun(qs.map(({ terms }) => rank(terms, k1, b)))}`);
  console.log(`k1 ${k1} | ${row.join(" | ")}`);
}

// BM25F: each column's frequency normalised by its own length (FTS5 normalises by the row's), then saturated once.
function rankF(terms: string[], k1: number, bTitle: number, bBody: number): number[] {
  const bs = [bTitle, bTitle, bTitle, bTitle, bBody, bTitle, bTitle, bBody];
  return ranked(terms, (doc, a) => {
    const cl = clen.get(doc)!;
    let tf = 0;
    for (let c = 0; c < 8; c++) if (a[c]) tf += (W[c]! * a[c]!) / (1 - bs[c]! + (bs[c]! * cl[c]!) / (cavg[c]! || 1));
    return (tf * (k1 + 1)) / (tf + k1);
  });
}
if (process.argv.includes("--bm25f")) {
  for (const k1 of [1.2, 2.0]) for (const bt of [0.5, 0.75]) for (const bb of [0.3, 0.5, 0.75]) console.log(`BM25F k1 ${k1}, b title ${bt}, b body ${bb}: ${evalRun(qs.map(({ terms }) => rankF(terms, k1, bt, bb)))}`);
}
