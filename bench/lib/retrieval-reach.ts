// How far fusion could go on one of our question sets: per kind, what the hybrid finds in the top 5,
// what is within reach (the vector list or the keyword list has the page in its top 5), and where the
// vector list ranks the page of each question the hybrid misses. A question out of reach needs a
// better component, not a better fusion (docs/retrieval-experiments.md, "seventh pass").
//   bun bench/lib/retrieval-reach.ts oh|oh-all|oh-hub|srd [tune|report] [--list]
import { keywordRank } from "../../lib/semantic/keyword";
import { retrieve } from "../../lib/semantic/retrieve";
import { SemanticService } from "../../lib/semantic/service";
import { rr, type Query } from "./retrieval-data";
import { openSetVault, setFromArgs } from "./retrieval-dump-setup";

const DEPTH = 100;
const { set } = setFromArgs();
const half = process.argv[3] === "report" ? "report" : "tune";
const list = process.argv.includes("--list");
const vault = await openSetVault(set, true);
const svc = SemanticService.for(vault);
const db = vault.indexDb;
const pathOf = new Map((db.query("SELECT id, path FROM notes").all() as { id: number; path: string }[]).map((n) => [n.id, n.path]));

/** The place (from 1) of the first relevant page in `docs`, or null: 1 / its reciprocal rank. */
const placeIn = (q: Query, docs: string[]) => {
  const r = rr(docs, q.relevant, DEPTH);
  return r ? Math.round(1 / r) : null;
};
const BUCKETS = [
  { name: "1st–2nd", max: 2 },
  { name: "3rd–10th", max: 10 },
  { name: "11th–30th", max: 30 },
  { name: `beyond 30th or not in the top ${DEPTH}`, max: Infinity },
];

const rows: string[] = [];
for (const kind of ["keyword", "paraphrase", "detail"]) {
  const qs = set.queries.filter((q) => q.half === half && q.kind === kind);
  let found = 0;
  let reach = 0;
  const missed = BUCKETS.map(() => 0);
  for (const q of qs) {
    const hybrid = placeIn(q, (await retrieve(svc, { query: q.text, mode: "hybrid", limit: DEPTH })).notes.map((n) => set.docOf(n.path)));
    const vector = placeIn(q, (await retrieve(svc, { query: q.text, mode: "vector", limit: DEPTH })).notes.map((n) => set.docOf(n.path)));
    const keyword = placeIn(q, keywordRank(db, q.text, DEPTH).map((h) => set.docOf(pathOf.get(h.noteId)!)));
    const hit = hybrid !== null && hybrid <= 5;
    if (hit) found++;
    if (hit || (vector !== null && vector <= 5) || (keyword !== null && keyword <= 5)) reach++;
    if (!hit) missed[BUCKETS.findIndex((b) => (vector ?? Infinity) <= b.max)]!++;
    if (list && !hit) console.log(`missed ${q.id}: hybrid ${hybrid ?? "-"}, vector ${vector ?? "-"}, keyword ${keyword ?? "-"}: ${q.text}`);
  }
  rows.push(`| ${kind} | ${qs.length} | ${found} | ${reach} | ${missed.join(" | ")} |`);
}
console.log(`\n${set.name}, ${half} half: hit@5 of the hybrid, what is within reach, and where the vector list ranks each missed page\n`);
console.log(`| kind | questions | hybrid top 5 | within reach | ${BUCKETS.map((b) => `missed, vector ${b.name}`).join(" | ")} |`);
console.log(`|---|${"---:|".repeat(3 + BUCKETS.length)}`);
for (const r of rows) console.log(r);
process.exit(0);
