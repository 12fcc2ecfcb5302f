// Per-question rankings and features of a retrieval set, dumped once so that
// fusion settings can be tried offline by the thousand (bench/lib/retrieval-grid.ts):
// for every question, the keyword lists (fields, bare, title feedback), every
// note's best and second-best passage cosine, its note-vector cosine, an
// "outline" vector's cosine (title and headings embedded as one text; --no-outline
// skips it) and the second stage's features for the likely candidates.
//   bun bench/lib/retrieval-dump.ts oh|srd|docs|scifact [train]   → $LETTUCE_BENCH_CACHE/dumps/<name>.json
import { builtinEmbedder } from "../../lib/providers/select";
import { normalize } from "../../lib/providers/types";
import { KEYWORD_WEIGHTS, keywordRank, STOPWORDS } from "../../lib/semantic/keyword";
import { features, QueryTerms } from "../../lib/semantic/rerank";
import { rerankDocs } from "../../lib/semantic/candidates";
import { SemanticService } from "../../lib/semantic/service";
import { allNoteVectors, allPassageVectors } from "../../lib/semantic/store";
import { VaultContext } from "../../lib/vault-context";
import { anthropicDocs, BENCH_CACHE, obsidianHelp, scifact, srdWiki, type RetrievalSet } from "./retrieval-data";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
process.env.LETTUCE_EMBED_PROVIDER ??= "builtin";
const which = process.argv[2]!;
const set: RetrievalSet = which === "oh" ? obsidianHelp() : which === "srd" ? srdWiki() : which === "docs" ? anthropicDocs() : scifact(process.argv[3] === "train" ? "train" : "test");
const vault = VaultContext.open(set.vault);
await vault.indexer.fullScan();
const svc = SemanticService.for(vault);
await svc.reconcileNow();
await svc.syncKeywords();
const db = vault.indexDb;
const notes = db.query("SELECT id, path, title FROM notes ORDER BY id").all() as { id: number; path: string; title: string }[];
const idx = new Map(notes.map((n, i) => [n.id, i]));
const heads = new Map<number, string[]>();
for (const h of db.query("SELECT note_id AS id, title FROM headings ORDER BY note_id, ord").all() as { id: number; title: string }[]) (heads.get(h.id) ?? heads.set(h.id, []).get(h.id)!).push(h.title);
const emb = builtinEmbedder();
const N = (v: Float32Array) => normalize(Float32Array.from(v));
const embedAll = async (texts: string[], purpose: "query" | "document" = "document") => { const out: Float32Array[] = []; for (let i = 0; i < texts.length; i += 64) out.push(...(await emb.embed(texts.slice(i, i + 64), { purpose }))); return out.map(N); };
const pv: { note: number; v: Float32Array }[] = [];
for (const p of allPassageVectors(db)) if (idx.has(p.noteId)) pv.push({ note: idx.get(p.noteId)!, v: N(p.vector) });
const nv: (Float32Array | null)[] = notes.map(() => null);
for (const r of allNoteVectors(db)) if (idx.has(r.noteId)) nv[idx.get(r.noteId)!] = N(r.vector);
const noOutline = process.argv.includes("--no-outline");
const outlineText = (n: { id: number; title: string }) => [n.title, ...(heads.get(n.id) ?? []).filter((h) => h !== n.title)].join("\n").slice(0, 500);
const t0 = performance.now();
const outV = noOutline ? [] : await embedAll(notes.map(outlineText));
console.error(`outlines ${((performance.now() - t0) / 1000).toFixed(1)} s; ${pv.length} passages`);
const dot = (a: Float32Array, b: Float32Array) => { let s = 0; for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!; return s; };
const BARE = { title: 3, aliases: 0, headings: 0, path: 0, body: 1 };
const out: unknown[] = [];
const r4 = (x: number) => Math.round(x * 1e4) / 1e4;
const content = (q: string) => (q.match(/[\p{L}\p{N}_]+/gu) ?? []).filter((w) => !STOPWORDS.has(w.toLowerCase())).join(" ");
for (const q of set.queries) {
  const [qv, qc] = await embedAll([q.text, content(q.text) || q.text], "query");
  const kw = keywordRank(db, q.text, 300, true, KEYWORD_WEIGHTS);
  const bare = keywordRank(db, q.text, 300, true, BARE);
  const best = new Float64Array(notes.length).fill(-1), second = new Float64Array(notes.length).fill(-1), bestC = new Float64Array(notes.length).fill(-1);
  for (const p of pv) {
    const s = dot(p.v, qv!);
    if (s > best[p.note]!) { second[p.note] = best[p.note]!; best[p.note] = s; } else if (s > second[p.note]!) second[p.note] = s;
    const c = dot(p.v, qc!); if (c > bestC[p.note]!) bestC[p.note] = c;
  }
  // rerank features for kw top 30 + vector top 30 + relevant
  const vecTop = [...best.keys()].sort((a, b) => best[b]! - best[a]!).slice(0, 30).map((i) => notes[i]!.id);
  const ids = [...new Set([...kw.slice(0, 30).map((h) => h.noteId), ...vecTop, ...notes.filter((n) => q.relevant.has(set.docOf(n.path))).map((n) => n.id)])];
  const docs = rerankDocs(db, ids);
  const qt = new QueryTerms(q.text);
  const feats: Record<number, number[]> = {};
  for (const id of ids) { const d = docs.get(id); if (d) { const f = features(qt, d); feats[idx.get(id)!] = [r4(f.title), r4(f.heading), r4(f.proximity), r4(qt.share(d.body.slice(0, 10000)))]; } }
  // PRF: query + titles of top3 vector hits (best + 0.25 note)
  const vs = notes.map((_, i) => best[i]! + 0.25 * (nv[i] ? dot(nv[i]!, qv!) : 0));
  const top3 = [...vs.keys()].sort((a, b) => vs[b]! - vs[a]!).slice(0, 3);
  const prf = keywordRank(db, `${q.text} ${top3.map((i) => notes[i]!.title).join(" ")}`, 300);
  out.push({
    id: q.id, kind: q.kind, half: q.half, text: q.text, nstems: qt.stems.length,
    rel: notes.map((n, i) => (q.relevant.has(set.docOf(n.path)) ? i : -1)).filter((i) => i >= 0),
    kw: kw.map((h) => [idx.get(h.noteId), r4(h.score)]), bare: bare.map((h) => [idx.get(h.noteId), r4(h.score)]), prf: prf.map((h) => [idx.get(h.noteId), r4(h.score)]),
    best: [...best].map(r4), second: [...second].map(r4), bestC: [...bestC].map(r4),
    note: nv.map((v) => (v ? r4(dot(v, qv!)) : -1)), outline: outV.map((v) => r4(dot(v, qv!))), feats,
  });
}
mkdirSync(join(BENCH_CACHE, "dumps"), { recursive: true });
writeFileSync(join(BENCH_CACHE, "dumps", `${which}${process.argv[3] === "train" ? "-train" : ""}.json`), JSON.stringify({ notes: notes.map((n) => n.path), titles: notes.map((n) => n.title), queries: out }));
console.error("done");
emb.close(); vault.close(); process.exit(0);
