// Per-question rankings and features of a retrieval set, dumped once so that
// fusion settings can be tried offline by the thousand (bench/lib/retrieval-grid.ts).
// Sparse (SciFact's 5,183 notes × 1,109 queries would not fit dense): for every
// question, the keyword lists (fields and bare, top 300, with BM25 scores), the
// vector side's top 300 notes by best passage + 0.25 × note vector, and for
// every candidate (either list's top 300 and the relevant notes) its best and
// second-best passage cosine, its note-vector cosine and the second stage's
// features (title, heading, proximity, share, IDF-weighted share, window and
// title, and the two-sided title `named`); per query term its IDF in the
// stemmed keyword table.
//   bun bench/lib/retrieval-dump.ts oh|srd|docs|scifact [train]   → $LETTUCE_BENCH_CACHE/dumps/<name>[-train].json
import { builtinEmbedder } from "../../lib/providers/select";
import { KEYWORD_WEIGHTS, keywordRank } from "../../lib/semantic/keyword";
import { features, QueryTerms } from "../../lib/semantic/rerank";
import { rerankDocs } from "../../lib/semantic/candidates";
import { allNoteVectors } from "../../lib/semantic/store";
import { BENCH_CACHE } from "./retrieval-data";
import { openSetVault, passageMatrix, setFromArgs, unit } from "./retrieval-dump-setup";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
const { which, split, set } = setFromArgs();
const vault = await openSetVault(set);
const db = vault.indexDb;
const notes = db.query("SELECT id, path, title FROM notes ORDER BY id").all() as { id: number; path: string; title: string }[];
const idx = new Map(notes.map((n, i) => [n.id, i]));
const emb = builtinEmbedder();
const N = unit;
const { flat, owner, dim } = passageMatrix(db, idx);
const nv: (Float32Array | null)[] = notes.map(() => null);
for (const r of allNoteVectors(db)) if (idx.has(r.noteId)) nv[idx.get(r.noteId)!] = N(r.vector);
const dot = (a: Float32Array, b: Float32Array) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
};
// Document frequencies of the stemmed table's terms (fts5vocab reads a contentless table's index).
db.exec("CREATE VIRTUAL TABLE IF NOT EXISTS temp.stem_vocab USING fts5vocab(main, fts_stem, 'row')");
const dfOf = db.query("SELECT doc FROM temp.stem_vocab WHERE term = ?");
const nDocs = notes.length;
const idf = (term: string) => {
  const df = (dfOf.get(term) as { doc: number } | null)?.doc ?? 0;
  return Math.log((nDocs - df + 0.5) / (df + 0.5) + 1);
};
const BARE = { title: 3, aliases: 0, headings: 0, path: 0, body: 1, titleNg: 3, headingsNg: 0, bodyNg: 1 };
const r4 = (x: number) => Math.round(x * 1e4) / 1e4;
const t0 = performance.now();
const qvs: Float32Array[] = [];
for (let i = 0; i < set.queries.length; i += 64) qvs.push(...(await emb.embed(set.queries.slice(i, i + 64).map((q) => q.text), { purpose: "query" })).map(N));
console.error(`${set.queries.length} queries embedded in ${((performance.now() - t0) / 1000).toFixed(1)} s; ${owner.length} passages`);
const out: unknown[] = [];
const best = new Float64Array(nDocs);
const second = new Float64Array(nDocs);
set.queries.forEach((q, qi) => {
  const qv = qvs[qi]!;
  const kw = keywordRank(db, q.text, 300, true, KEYWORD_WEIGHTS);
  const bare = keywordRank(db, q.text, 300, true, BARE);
  best.fill(-1);
  second.fill(-1);
  for (let p = 0; p < owner.length; p++) {
    let s = 0;
    const o = p * dim;
    for (let i = 0; i < dim; i++) s += flat[o + i]! * qv[i]!;
    const n = owner[p]!;
    if (s > best[n]!) {
      second[n] = best[n]!;
      best[n] = s;
    } else if (s > second[n]!) second[n] = s;
  }
  const note = nv.map((v) => (v ? dot(v, qv) : 0));
  const vscore = (i: number) => best[i]! + 0.25 * note[i]!;
  const vec = [...best.keys()].filter((i) => best[i]! > -1).sort((a, b) => vscore(b) - vscore(a)).slice(0, 300);
  const rel = notes.map((n, i) => (q.relevant.has(set.docOf(n.path)) ? i : -1)).filter((i) => i >= 0);
  const cand = [...new Set([...kw.map((h) => idx.get(h.noteId)!), ...bare.map((h) => idx.get(h.noteId)!), ...vec, ...rel])];
  // Second-stage features for the likely top: either list's top 30 and the relevant notes.
  const featIds = [...new Set([...kw.slice(0, 30).map((h) => h.noteId), ...vec.slice(0, 30).map((i) => notes[i]!.id), ...rel.map((i) => notes[i]!.id)])];
  const docs = rerankDocs(db, featIds);
  const qt = new QueryTerms(q.text);
  const feats: Record<number, number[]> = {};
  const w = qt.stems.map((s) => idf(s));
  const wSum = w.reduce((a, b) => a + b, 0) || 1;
  for (const id of featIds) {
    const d = docs.get(id);
    if (!d) continue;
    const f = features(qt, d);
    // IDF-weighted: the share of the query's IDF mass in the text, in the best 24-word window, in the title.
    const hits: { pos: number; term: number }[] = [];
    (qt as unknown as { scan(t: string, h: (p: number, t: number) => void): void }).scan(d.body.slice(0, 10000), (pos, term) => hits.push({ pos, term }));
    const seen = new Set(hits.map((h) => h.term));
    let bestW = 0;
    const counts = new Int32Array(qt.stems.length);
    let mass = 0;
    let lo = 0;
    for (const h of hits) {
      if (counts[h.term]!++ === 0) mass += w[h.term]!;
      while (hits[lo]!.pos <= h.pos - 24) {
        if (--counts[hits[lo]!.term]! === 0) mass -= w[hits[lo]!.term]!;
        lo++;
      }
      bestW = Math.max(bestW, mass);
    }
    const titleSeen = new Set<number>();
    (qt as unknown as { scan(t: string, h: (p: number, t: number) => void): void }).scan(d.title, (_p, t) => titleSeen.add(t));
    const mass0 = (ts: Set<number>) => [...ts].reduce((a, t) => a + w[t]!, 0) / wSum;
    feats[idx.get(id)!] = [r4(f.title), r4(f.heading), r4(f.proximity), r4(qt.share(d.body.slice(0, 10000))), r4(mass0(seen)), r4(bestW / wSum), r4(mass0(titleSeen)), r4(f.named)];
  }
  const c: Record<number, number[]> = {};
  for (const i of cand) c[i] = [r4(best[i]!), r4(second[i]!), r4(note[i]!)];
  out.push({
    id: q.id,
    kind: q.kind,
    half: q.half,
    text: q.text,
    stems: qt.stems,
    idf: qt.stems.map((s) => r4(idf(s))),
    rel,
    kw: kw.map((h) => [idx.get(h.noteId), r4(h.score)]),
    bare: bare.map((h) => [idx.get(h.noteId), r4(h.score)]),
    vec,
    c,
    feats,
  });
  if (qi % 100 === 99) console.error(`  ${qi + 1}/${set.queries.length}`);
});
mkdirSync(join(BENCH_CACHE, "dumps"), { recursive: true });
const file = join(BENCH_CACHE, "dumps", `${which}${split === "train" ? "-train" : ""}.v2.json`);
writeFileSync(file, JSON.stringify({ notes: notes.map((n) => n.path), titles: notes.map((n) => n.title), queries: out }));
console.error(`wrote ${file} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
emb.close();
vault.close();
process.exit(0);
