// The grid (./retrieval-grid.ts) with Rocchio feedback on the query vector: each question's vector list
// replaced by the one dumped by ./retrieval-dump-prf.ts for a given source, k and β.
//   bun bench/lib/retrieval-grid-prf.ts [tune|report] [k|v]   (k: from the keyword list's best; v: from the vector list's own)
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BENCH_CACHE } from "./retrieval-data";
import { DEFAULT, evaluate, loadAll, type F, type P } from "./retrieval-grid";

const half = process.argv[2] ?? "tune";
const files: Record<string, string> = { oh: "oh", srd: "srd", docs: "docs", sci: half === "report" ? "scifact" : "scifact-train" };
const prf = new Map<string, Record<string, [number, number][]>>();
for (const [set, file] of Object.entries(files)) {
  const path = join(BENCH_CACHE, "dumps", `${file}.prf.json`);
  if (!existsSync(path)) continue;
  for (const q of (JSON.parse(readFileSync(path, "utf8")) as { queries: { id: string; v: Record<string, [number, number][]> }[] }).queries) prf.set(`${set}:${q.id}`, q.v);
}

/** The same questions with the vector list of Rocchio variant `key` (k3b0.5 …); a question without keyword hits keeps its own. */
export function withPrf(fs: F[], key: string): F[] {
  return fs.map((f) => {
    const l = prf.get(`${f.set}:${f.q.id}`)?.[key];
    if (!l) return f;
    return { ...f, vec: l.map(([i]) => i), vscore: new Map(l) };
  });
}

if (import.meta.main) {
  const fs = loadAll(half);
  const show = (name: string, xs: F[], p: P) => {
    const e = evaluate(xs, p);
    console.log(`${name.padEnd(40)} ${e.line}${e.safe ? " SAFE" : ""}`);
  };
  show("default", fs, DEFAULT);
  show("no vectors", fs, { ...DEFAULT, wv: 0, wvWeak: 0, slot: 0 });
  const src = process.argv[3] ?? "k";
  for (const k of [1, 3, 5, 10])
    for (const b of [0.25, 0.5, 1, 2]) {
      const xs = withPrf(fs, `${src}${k}b${b}`);
      show(`rocchio ${src}${k} b${b}`, xs, DEFAULT);
    }
}
