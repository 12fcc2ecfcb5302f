// Retrieval quality of the one retrieval module (lib/semantic/retrieve.ts) on
// four sets: our own question sets over Obsidian Help and the SRD wiki
// (bench/data/, reported per kind on their fixed "report" half), BEIR SciFact
// (test queries) and the Anthropic docs QA set, beside published baselines.
//
//   bun bench/retrieval.ts [--tune [--variants <regex>]] [--sets oh,oh-all,oh-hub,srd,docs,scifact] [--keyword-only]
//
// oh-all asks Obsidian Help's questions of the whole obsidian-help folder (en/ with its release
// notes and the Sandbox vault, 568 notes): other pages that name the same features, and a larger
// vault. oh-hub asks them of en/ inside the Obsidian Hub vault (6,744 notes): a vault of a user's size.
//
// It prints, per set: our two question sets' report and tuning halves (hit@5 per
// kind, MRR@10, nDCG@10), the docs QA set (precision/recall/MRR at 3, MRR@10),
// SciFact's test queries and, beside them, its train queries (what the fusion
// was tuned on). With caches it takes ~8 minutes at load 4–7 (2 minutes of
// CPU; ~17 minutes at load 15), most of it SciFact's 1,109 queries.
//
// Systems: BM25 as it was (Porter, any word, title 3×), Lettuce's keyword side
// (with the title, alias, heading and folder fields), vector only (the
// built-in model), and hybrid (the default ranking for the built-in model).
// --tune adds every variant tried, measured on the tuning halves, SciFact's
// train queries and the docs set.
//
// The first run embeds the sets with the built-in model (SciFact: ~23k
// passages, an hour or more on a loaded two-core machine; oh-hub's 13k, ~4
// minutes on a quiet one); the vectors are
// cached in $LETTUCE_BENCH_CACHE (default $TMPDIR/lettuce-bench)/<set>/.lettuce,
// so later runs take a minute.
import { ANCHOR_WEIGHT } from "../lib/semantic/anchors";
import { KEYWORD_WEIGHTS, keywordRank } from "../lib/semantic/keyword";
import { rankingFor, MODEL_RANKING, type RankingParams } from "../lib/semantic/ranking";
import { retrieve } from "../lib/semantic/retrieve";
import { withTermFeedback, type TermFeedback } from "../lib/semantic/feedback";
import { SemanticService } from "../lib/semantic/service";
import { VaultContext } from "../lib/vault-context";
import { anthropicDocs, BENCH_CACHE, ndcg, obsidianHelp, obsidianHelpAll, obsidianHelpInHub, precision, recall, rr, scifact, srdWiki, type Query, type RetrievalSet } from "./lib/retrieval-data";
import { byKind, hitCells, type Scores } from "./lib/retrieval-score";
import { loadavg } from "./lib/stats";
import { existsSync, readFileSync } from "node:fs";
import { unit } from "./lib/retrieval-dump-setup";

process.env.LETTUCE_EMBED_PROVIDER ??= "builtin";
process.env.LETTUCE_LLM_PROVIDER ??= "none";
const tune = process.argv.includes("--tune");
// Keyword systems only, without embedding anything (a set whose embeddings are not cached yet).
const keywordOnly = process.argv.includes("--keyword-only");
const setsArg = (() => {
  const i = process.argv.indexOf("--sets");
  return new Set((i === -1 ? "oh,oh-all,oh-hub,srd,docs,scifact" : process.argv[i + 1]!).split(","));
})();
// --variants <regex>: with --tune, only the variants whose name matches (the full list takes ~40 minutes).
const variantFilter = (() => {
  const i = process.argv.indexOf("--variants");
  return i === -1 ? null : new RegExp(process.argv[i + 1]!, "i");
})();
const DEPTH = 100;
const log = (s: string) => process.stderr.write(`${s}\n`);
const f3 = (x: number) => x.toFixed(3);
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

type Weights = typeof KEYWORD_WEIGHTS;
const FIELDS: Weights = { ...KEYWORD_WEIGHTS };
const BARE: Weights = { title: 3, aliases: 0, headings: 0, path: 0, body: 1, titleNg: 3, headingsNg: 0, bodyNg: 1 };
const DEFAULT_RANKING = rankingFor("builtin");

/** A system: how it ranks one query (document ids, best first). */
type System = (ctx: Ctx, q: Query) => Promise<string[]>;
interface Ctx {
  set: RetrievalSet;
  svc: SemanticService;
  pathOf: Map<number, string>;
}

// The bare BM25 baseline goes without anchor text (lib/semantic/anchors.ts); Lettuce's keyword ranking has it.
const keyword = (w: Weights): System => {
  const sys: System = async (c, q) => keywordRank(c.svc.vault.indexDb, q.text, DEPTH, true, w, w === BARE ? 0 : undefined).map((h) => c.set.docOf(c.pathOf.get(h.noteId)!));
  KEYWORD_SYSTEMS.add(sys);
  return sys;
};
// Keyword → keyword pseudo-relevance feedback on Lettuce's keyword ranking (lib/semantic/feedback.ts).
const keywordFeedback = (fb: TermFeedback): System => {
  const sys: System = async (c, q) => {
    const db = c.svc.vault.indexDb;
    return withTermFeedback(db, q.text, keywordRank(db, q.text, DEPTH), fb, DEPTH).map((h) => c.set.docOf(c.pathOf.get(h.noteId)!));
  };
  KEYWORD_SYSTEMS.add(sys);
  return sys;
};
const ranked =
  (mode: "vector" | "hybrid", ranking?: Partial<RankingParams>, weights: Weights = FIELDS): System =>
  async (c, q) => {
    Object.assign(KEYWORD_WEIGHTS, weights);
    try {
      return (await retrieve(c.svc, { query: q.text, mode, limit: DEPTH, ranking })).notes.map((n) => c.set.docOf(n.path));
    } finally {
      Object.assign(KEYWORD_WEIGHTS, FIELDS);
    }
  };

const KEYWORD_SYSTEMS = new Set<System>();
const SYSTEMS: [string, System][] = [
  ["BM25 (Porter, any word, title 3×)", keyword(BARE)],
  ["Lettuce keyword (+ alias, heading, folder fields)", keyword(FIELDS)],
  ["Lettuce vector (built-in model)", ranked("vector")],
  ["Lettuce hybrid (default)", ranked("hybrid")],
];

// Each variant changes one thing in the default (or names what it is).
const OLD_DEFAULT: Partial<RankingParams> = { k: 2, vectorWeight: 0.25, vectorWeightWeak: 0.25, noteVector: 0, prfKeyword: 0, rerankDepth: 0, agreement: null, outside: null, vectorSlot: null };
const FIRST_PASS: Partial<RankingParams> = { k: 2, vectorWeight: 0.5, vectorWeightWeak: 2, prfKeyword: 0.5, agreement: null, outside: null, vectorSlot: null };
const v = (name: string, ranking: Partial<RankingParams>, weights: Weights = FIELDS): [string, System] => [name, ranked("hybrid", ranking, weights)];
// Keyword → keyword feedback (thirteenth pass; docs/retrieval-experiments.md has the whole grid: k 3/5/10 × m 5/10/20 × α, none kept):
// the best k keyword hits' m words as a second BM25 list at α, or RM3's interpolation of each word's own BM25.
const TERM_FEEDBACK: [string, TermFeedback][] = [
  ["term feedback k 3, m 5, α 0.25", { docs: 3, terms: 5, weight: 0.25, withQuery: true }],
  ["term feedback k 5, m 10, α 0.25", { docs: 5, terms: 10, weight: 0.25, withQuery: true }],
  ["term feedback k 5, m 10, α 0.5", { docs: 5, terms: 10, weight: 0.5, withQuery: true }],
  ["term feedback k 10, m 10, α 0.25, terms alone", { docs: 10, terms: 10, weight: 0.25, withQuery: false }],
  ["RM3 feedback k 3, m 20, α 0.1", { docs: 3, terms: 20, weight: 0.1, withQuery: true, weighted: true }],
  ["RM3 feedback k 10, m 20, α 0.1", { docs: 10, terms: 20, weight: 0.1, withQuery: true, weighted: true }],
  ["RM3 feedback k 10, m 10, α 0.25", { docs: 10, terms: 10, weight: 0.25, withQuery: true, weighted: true }],
];
const ALL_VARIANTS: [string, System][] = [
  v("fourth pass: a flat vector list closed (BM25's order, the third pass)", { flatConvex: 0 }),
  v("flat vector list: convex share 0.25", { flatConvex: 0.25 }),
  v("flat vector list: convex share 1", { flatConvex: 1 }),
  v("+ keyword → vector Rocchio 0.25 (top 3 keyword hits' note vectors)", { prfVector: 0.25 }),
  v("third pass: no vector margin (the second pass's fusion, two-sided title)", { vectorMargin: null }),
  v("vector margin 0.1 at the 30th", { vectorMargin: { at: 30, below: 0.1 } }),
  v("vector margin 0.14 at the 50th", { vectorMargin: { at: 50, below: 0.14 } }),
  v("vector margin's place grows with the square root of the vault's notes past 250", { vectorMargin: { at: 30, below: 0.12, perNotes: 250 } }),
  v("vector margin's place grows with the square root of the vault's notes past 400", { vectorMargin: { at: 30, below: 0.12, perNotes: 400 } }),
  v("vector margin's place grows with the square root of the vault's notes past 1000", { vectorMargin: { at: 30, below: 0.12, perNotes: 1000 } }),
  v("cone: margin's place grows past 400 notes, flat too when that note scores 0.75", { vectorMargin: { at: 30, below: 0.12, perNotes: 400, cone: 0.75 } }),
  v("cone: margin's place grows past 400 notes, flat too when that note scores 0.8", { vectorMargin: { at: 30, below: 0.12, perNotes: 400, cone: 0.8 } }),
  v("cone: margin's place grows past 400 notes, flat too when that note scores 0.85", { vectorMargin: { at: 30, below: 0.12, perNotes: 400, cone: 0.85 } }),
  v("cone: margin's place grows past 250 notes, flat too when that note scores 0.8", { vectorMargin: { at: 30, below: 0.12, perNotes: 250, cone: 0.8 } }),
  v("unsure: margin's place grows past 400 notes while the keyword confidence is below 0.5", { vectorMargin: { at: 30, below: 0.12, perNotes: 400, growBelowConfidence: 0.5 } }),
  v("unsure: margin's place grows past 250 notes while the keyword confidence is below 0.5", { vectorMargin: { at: 30, below: 0.12, perNotes: 250, growBelowConfidence: 0.5 } }),
  v("unsure: margin's place grows past 250 notes while the keyword confidence is below 0.7", { vectorMargin: { at: 30, below: 0.12, perNotes: 250, growBelowConfidence: 0.7 } }),
  v("unsure: margin's place grows past 400 notes while the keyword confidence is below 0.3", { vectorMargin: { at: 30, below: 0.12, perNotes: 400, growBelowConfidence: 0.3 } }),
  v("unsure: margin's place grows past 1000 notes while the keyword confidence is below 0.5", { vectorMargin: { at: 30, below: 0.12, perNotes: 1000, growBelowConfidence: 0.5 } }),
  v("unsure: margin's place grows past 400 notes while the keyword confidence is below 0.5, flat too at 0.85", { vectorMargin: { at: 30, below: 0.12, perNotes: 400, growBelowConfidence: 0.5, cone: 0.85 } }),
  v("seventeenth pass: no keyword lead (before)", { keywordLead: null }),
  v("seventeenth pass: keyword lead at 1.11x the second (0.1)", { keywordLead: 0.1 }),
  v("seventeenth pass: keyword lead at 1.43x the second (0.3)", { keywordLead: 0.3 }),
  v("vector margin, no place for the vectors' best", { vectorSlot: null }),
  v("old default: RRF k = 2, vector weight 0.25, bare BM25, no second stage", OLD_DEFAULT, BARE),
  v("first pass: RRF k = 2, vector weight 0.5 / 2, title feedback 0.5, no agreement gate", FIRST_PASS),
  v("first pass + agreement gate", { ...FIRST_PASS, agreement: { vectorTop: 5, keywordTop: 10, without: 0 } }),
  v("agreement gate and half weight outside, no vector place (this pass's first step)", { vectorSlot: null }),
  v("vector side's best notes kept from 3rd place (not 4th)", { vectorSlot: { position: 2, belowConfidence: 0.5, notes: 2 } }),
  v("vector side's best notes kept from 4th place whatever the keyword confidence", { vectorSlot: { position: 3, belowConfidence: 2, notes: 2 } }),
  v("a place for the vector side's best note only (4th), not its second (5th)", { vectorSlot: { position: 3, belowConfidence: 0.5, notes: 1 } }),
  v("places for the vector side's best three notes (4th to 6th)", { vectorSlot: { position: 3, belowConfidence: 0.5, notes: 3 } }),
  v("no agreement gate", { agreement: null }),
  v("agreement gate: vector top 5 against keyword top 20", { agreement: { vectorTop: 5, keywordTop: 20, without: 0 } }),
  v("agreement gate: vector top 3 against keyword top 10", { agreement: { vectorTop: 3, keywordTop: 10, without: 0 } }),
  v("agreement gate quarters the weight instead of closing", { agreement: { vectorTop: 5, keywordTop: 10, without: 0.25 } }),
  v("no half weight for notes outside the keyword top 50", { outside: null }),
  v("half weight outside the keyword top 20", { outside: { depth: 20, weight: 0.5 } }),
  v("half weight outside the keyword top 50, a top that grows with the square root of the vault's notes past 400", { outside: { depth: 50, weight: 0.5, perNotes: 400 } }),
  v("half weight outside the keyword top 50, a top that grows with the square root of the vault's notes past 1000", { outside: { depth: 50, weight: 0.5, perNotes: 1000 } }),
  v("+ title feedback 0.5 (vector → keyword PRF)", { prfKeyword: 0.5 }),
  v("RRF k = 5, vector weight 0.25 / 3", { k: 5, vectorWeightWeak: 3 }),
  v("RRF k = 20, vector weight 0.25 / 1", { k: 20, vectorWeightWeak: 1 }),
  v("RRF k = 60, equal weights (the peers' setting)", { k: 60, vectorWeight: 1, vectorWeightWeak: 1, agreement: null, outside: null }),
  v("fixed vector weight 0.25 (not adapted to the keyword side)", { vectorWeightWeak: 0.25 }),
  v("vector weight 0.5 / 2", { vectorWeight: 0.5 }),
  v("convex fusion, vector share 0.35 (fixed)", { fusion: "convex", vectorWeight: 0.35, vectorWeightWeak: 0.35 }),
  v("no note-vector cosine", { noteVector: 0 }),
  v("+ 0.25 × second-best passage", { secondPassage: 0.25 }),
  v("+ keyword → vector PRF (Rocchio, 0.3)", { prfVector: 0.3 }),
  v("no second stage", { rerankDepth: 0 }),
  v("bare BM25 fields (title and body only)", {}, BARE),
  ["keyword only: title 5×, alias 5×", keyword({ ...FIELDS, title: 5, aliases: 5 })],
  ["keyword only: headings 3×", keyword({ ...FIELDS, headings: 3 })],
  ["keyword only: title 2×", keyword({ ...FIELDS, title: 2 })],
  v("title 2× on the keyword side", {}, { ...FIELDS, title: 2 }),
  v("title 4× on the keyword side", {}, { ...FIELDS, title: 4 }),
  ...TERM_FEEDBACK.map(([name, fb]): [string, System] => [`keyword only: ${name}`, keywordFeedback(fb)]),
  ...TERM_FEEDBACK.map(([name, fb]) => v(`+ ${name}`, { termFeedback: fb })),
];
// Fifteenth pass (docs/retrieval-experiments.md): the query vector mapped by a per-vault adapter fitted offline on the
// vault's own sentence → passage pairs (bench/lib/retrieval-ict-dump.ts, then the fit in numpy), read from
// $LETTUCE_BENCH_CACHE/dumps/<set>.adapter.f32 (bench/lib/retrieval_ict.py --export): q' = (1 − a) q̂ + a · unit(q̂ W), at q's own length.
const ADAPTER_FILE: [RegExp, string][] = [[/^Obsidian Help$/, "oh"], [/^SRD wiki/, "srd"], [/^Anthropic docs/, "docs"], [/SciFact/, "scifact-train"]];
// Each set's matrix, read once (1 MB; the variant runs once per question).
const adapters = new Map<string, Float32Array>();
function adapterOf(setName: string): Float32Array {
  const file = ADAPTER_FILE.find(([re]) => re.test(setName))?.[1];
  const path = `${BENCH_CACHE}/dumps/${file}.adapter.f32`;
  if (!file || !existsSync(path)) throw new Error(`no adapter for ${setName}`);
  if (!adapters.has(path)) adapters.set(path, new Float32Array(readFileSync(path).buffer.slice(0)));
  return adapters.get(path)!;
}
const adapted = (share: number): System => async (c, q) => {
  const W = adapterOf(c.set.name);
  const svc = c.svc;
  const original = svc.queryVector.bind(svc);
  svc.queryVector = async (provider, text, signal) => {
    const v = await original(provider, text, signal);
    const d = v.length;
    const length = Math.hypot(...v);
    const q = unit(v);
    const m = new Float64Array(d);
    for (let i = 0; i < d; i++) if (q[i]) for (let j = 0; j < d; j++) m[j] = m[j]! + q[i]! * W[i * d + j]!;
    const mapped = unit(Float32Array.from(m));
    return unit(q.map((x, j) => (1 - share) * x + share * mapped[j]!)).map((x) => x * length);
  };
  try {
    return (await retrieve(svc, { query: q.text, mode: "hybrid", limit: DEPTH })).notes.map((n) => c.set.docOf(n.path));
  } finally {
    svc.queryVector = original;
  }
};
// Only on request: the adapter files come from an offline fit (LETTUCE_BENCH_ADAPTER=1 bun bench/retrieval.ts --tune --variants fifteenth).
if (process.env.LETTUCE_BENCH_ADAPTER === "1") ALL_VARIANTS.push(["fifteenth pass: query adapter from the vault's own sentences, share 0.5", adapted(0.5)], ["fifteenth pass: query adapter from the vault's own sentences, share 0.3", adapted(0.3)]);
const VARIANTS = ALL_VARIANTS.filter(([name]) => !variantFilter || variantFilter.test(name));

async function open(set: RetrievalSet): Promise<{ ctx: Ctx; close: () => void; passages: number; embedMs: number }> {
  log(`${set.name}: indexing ${set.vault}`);
  const vault = VaultContext.open(set.vault);
  await vault.indexer.fullScan();
  const svc = SemanticService.for(vault);
  const t0 = performance.now();
  let last = 0;
  if (!keywordOnly) {
    await svc.reconcileNow((done, total) => {
      if (performance.now() - last > 10_000) {
        last = performance.now();
        log(`  embedding ${done}/${total} notes`);
      }
    });
  }
  const embedMs = performance.now() - t0;
  await svc.syncKeywords();
  const pathOf = new Map((vault.indexDb.query("SELECT id, path FROM notes").all() as { id: number; path: string }[]).map((r) => [r.id, r.path]));
  return { ctx: { set, svc, pathOf }, close: () => vault.close(), passages: (await svc.indexes())?.passages.size ?? 0, embedMs };
}

async function runAll(c: Ctx, systems: [string, System][], queries = c.set.queries): Promise<Map<string, Map<string, string[]>>> {
  const out = new Map<string, Map<string, string[]>>();
  for (const [name, sys] of systems) {
    if (keywordOnly && !KEYWORD_SYSTEMS.has(sys)) continue;
    const lists = new Map<string, string[]>();
    for (const q of queries) lists.set(q.id, await sys(c, q));
    out.set(name, lists);
  }
  return out;
}

const out: string[] = [`## Retrieval quality (load average ${loadavg()})`, ""];
const r = DEFAULT_RANKING;
out.push(
  `Hybrid (default for the built-in model): ${r.fusion.toUpperCase()} k = ${r.k}, vector weight ${r.vectorWeight} / ${r.vectorWeightWeak}, agreement gate ${r.agreement ? `top ${r.agreement.vectorTop} / ${r.agreement.keywordTop} × ${r.agreement.without}` : "off"}, vector margin ${r.vectorMargin ? `${r.vectorMargin.below} at ${r.vectorMargin.at}` : "off"} (a flat list ${r.flatConvex ? `breaks near-ties: min-max BM25 + ${r.flatConvex} × min-max vector` : "is closed"}), vector places ${r.vectorSlot ? `${r.vectorSlot.position + 1} to ${r.vectorSlot.position + r.vectorSlot.notes} for its best ${r.vectorSlot.notes} below confidence ${r.vectorSlot.belowConfidence}` : "off"}, keyword lead ${r.keywordLead ? `first place for a keyword hit ${(1 / (1 - r.keywordLead)).toFixed(2)}× its second` : "off"}, then the second stage over the fused top ${r.rerankDepth} (title ${r.rerank.title}, heading ${r.rerank.heading}, proximity ${r.rerank.proximity}); keyword fields title ${FIELDS.title}, aliases ${FIELDS.aliases}, headings ${FIELDS.headings}, folder ${FIELDS.path}, body ${FIELDS.body}, plus ${ANCHOR_WEIGHT} × the BM25 of the anchor text (lib/semantic/anchors.ts).`,
  "",
);
const tuneRows = new Map<string, string[]>();
const tuneHeader: string[] = [];

function qaRow(name: string, set: RetrievalSet, lists: Map<string, string[]>, half?: "tune" | "report"): { line: string; s: Record<string, Scores> } {
  const s = byKind(set.queries, lists, half);
  return { line: `| ${name} | ${hitCells(s).join(" | ")} | ${f3(s.all!.mrr)} | ${f3(s.all!.ndcg10)} |`, s };
}

for (const [key, make] of [
  ["oh", obsidianHelp],
  ["oh-all", obsidianHelpAll],
  ["oh-hub", obsidianHelpInHub],
  ["srd", srdWiki],
] as const) {
  if (!setsArg.has(key)) continue;
  const set = make();
  const o = await open(set);
  const base = await runAll(o.ctx, SYSTEMS);
  out.push(`### ${set.name}: our questions, report half`, "", `${o.passages} passages; embedding pass ${(o.embedMs / 1000).toFixed(1)} s (0 when cached). hit@5 per kind, MRR@10 and nDCG@10 over all.`, "");
  out.push("| system | hit@5 all | keyword | paraphrase | detail | MRR | nDCG@10 |", "|---|---:|---:|---:|---:|---:|---:|");
  for (const [name, lists] of base) out.push(qaRow(name, set, lists, "report").line);
  out.push("", `Tuning half, for comparison:`, "", "| system | hit@5 all | keyword | paraphrase | detail | MRR | nDCG@10 |", "|---|---:|---:|---:|---:|---:|---:|");
  for (const [name, lists] of base) out.push(qaRow(name, set, lists, "tune").line);
  out.push("");
  if (tune) {
    tuneHeader.push(`${set.name} tune hit@5 (kw/para/detail)`, `${set.name} tune MRR`);
    const v = await runAll(o.ctx, [...SYSTEMS, ...VARIANTS], set.queries.filter((q) => q.half === "tune"));
    for (const [name, lists] of v) {
      const s = byKind(set.queries, lists, "tune");
      tuneRows.set(name, [...(tuneRows.get(name) ?? []), `${s.all!.hit5}/${s.all!.n} (${s.keyword!.hit5}/${s.paraphrase!.hit5}/${s.detail!.hit5})`, f3(s.all!.mrr)]);
    }
  }
  o.close();
}

if (setsArg.has("docs")) {
  const set = anthropicDocs();
  const o = await open(set);
  const base = await runAll(o.ctx, SYSTEMS);
  out.push(`### ${set.name}`, "", `${o.passages} passages; embedding pass ${(o.embedMs / 1000).toFixed(1)} s (0 when cached). Chunks at k = 3, as the guide measures them; MRR@10 too.`, "");
  out.push("| system | precision@3 | recall@3 | MRR@3 | MRR@10 |", "|---|---:|---:|---:|---:|");
  out.push("| Level 1: voyage-2 embeddings (published) | 0.428 | 0.659 | 0.737 | |", "| Level 2: + summary indexing (published) | 0.453 | 0.714 | 0.773 | |", "| Level 3: + Claude re-ranking (published) | 0.437 | 0.693 | 0.865 | |");
  const docsCells = (lists: Map<string, string[]>) => {
    const qs = set.queries;
    const l = (q: Query) => lists.get(q.id) ?? [];
    return [mean(qs.map((q) => precision(l(q), q.relevant, 3))), mean(qs.map((q) => recall(l(q), q.relevant, 3))), mean(qs.map((q) => rr(l(q), q.relevant, 3))), mean(qs.map((q) => rr(l(q), q.relevant, 10)))];
  };
  for (const [name, lists] of base) out.push(`| ${name} | ${docsCells(lists).map(f3).join(" | ")} |`);
  out.push("");
  if (tune) {
    tuneHeader.push("docs recall@3", "docs MRR@3");
    for (const [name, lists] of await runAll(o.ctx, [...SYSTEMS, ...VARIANTS])) {
      const c = docsCells(lists);
      tuneRows.set(name, [...(tuneRows.get(name) ?? []), f3(c[1]!), f3(c[2]!)]);
    }
  }
  o.close();
}

if (setsArg.has("scifact")) {
  const set = scifact("test");
  const o = await open(set);
  const base = await runAll(o.ctx, SYSTEMS);
  out.push(`### ${set.name}`, "", `${o.passages} passages; embedding pass ${(o.embedMs / 1000).toFixed(1)} s (0 when cached).`, "");
  out.push("| system | nDCG@10 | recall@100 | MRR@10 |", "|---|---:|---:|---:|", "| BM25, BEIR paper (published) | 0.665 | | |", "| BM25 flat, Anserini (published) | 0.679 | 0.925 | |");
  const sciCells = (s: RetrievalSet, lists: Map<string, string[]>) => {
    const l = (q: Query) => lists.get(q.id) ?? [];
    return [mean(s.queries.map((q) => ndcg(l(q), q.relevant, 10))), mean(s.queries.map((q) => recall(l(q), q.relevant, 100))), mean(s.queries.map((q) => rr(l(q), q.relevant, 10)))];
  };
  // nDCG@10 to four places: hybrid and BM25 can tie at three.
  const f4 = (x: number) => x.toFixed(4);
  for (const [name, lists] of base) out.push(`| ${name} | ${sciCells(set, lists).map((x, i) => (i ? f3(x) : f4(x))).join(" | ")} |`);
  // The train queries are what the fusion was tuned on: shown beside the test figures, not instead of them.
  const train = scifact("train");
  out.push("", `${train.name}, what the fusion was tuned on:`, "", "| system | nDCG@10 | recall@100 | MRR@10 |", "|---|---:|---:|---:|");
  for (const [name, lists] of await runAll({ ...o.ctx, set: train }, SYSTEMS)) out.push(`| ${name} | ${sciCells(train, lists).map((x, i) => (i ? f3(x) : f4(x))).join(" | ")} |`);
  out.push("");
  if (tune) {
    tuneHeader.push("SciFact train nDCG@10");
    for (const [name, lists] of await runAll({ ...o.ctx, set: train }, [...SYSTEMS, ...VARIANTS])) tuneRows.set(name, [...(tuneRows.get(name) ?? []), f3(sciCells(train, lists)[0]!)]);
  }
  o.close();
}

if (tune) {
  out.push("### Variants tried (tuning halves, SciFact train, docs QA)", "", `| variant | ${tuneHeader.join(" | ")} |`, `|---|${tuneHeader.map(() => "---:").join("|")}|`);
  for (const [name, cells] of tuneRows) out.push(`| ${name} | ${cells.join(" | ")} |`);
  out.push("", "Rankings per model (MODEL_RANKING in lib/semantic/ranking.ts):", "");
  for (const m of MODEL_RANKING) out.push(`- ${m.name}: ${m.params.fusion} k = ${m.params.k}, vector weight ${m.params.vectorWeight}. ${m.reason}`);
}
console.log(out.join("\n"));
process.exit(0);
