// topic_map's threshold, measured: on a bench vault (under $LETTUCE_BENCH_CACHE), the
// nearest-neighbour similarity quantiles and, per threshold on the calibrated scale,
// the clusters found, the notes in them, the largest, and the share of clustered pairs
// within one folder. DIRS=0 only centres (as topic_map does); the default 3 is find_duplicates' scale.
//   DIRS=0 bun bench/lib/retrieval-topics.ts obsidian-help "0.6,0.7,0.8" [clusters to print]
import { normalize } from "../../lib/providers/types";
import { calibrated } from "../../lib/semantic/calibrate";
import { dot, similarGroups } from "../../lib/semantic/neighbors";
import { allNoteVectors } from "../../lib/semantic/store";
import { VaultContext } from "../../lib/vault-context";
import { BENCH_CACHE } from "./retrieval-data";
import { join } from "node:path";
const vault = VaultContext.open(join(BENCH_CACHE, process.argv[2] ?? "obsidian-help"));
const db = vault.indexDb;
const paths = new Map((db.query("SELECT id, path FROM notes").all() as { id: number; path: string }[]).map((r) => [r.id, r.path]));
const ids: number[] = []; const raw: Float32Array[] = [];
for (const r of allNoteVectors(db)) if (paths.has(r.noteId)) { ids.push(r.noteId); raw.push(normalize(r.vector)); }
const P = ids.map((id) => paths.get(id)!);
const cal = calibrated(raw, Number(process.env.DIRS ?? 3));
const n = cal.length;
const nn = cal.map((v, i) => { let b = -1; for (let j = 0; j < n; j++) if (j !== i) b = Math.max(b, dot(v, cal[j]!)); return b; }).sort((a, b) => a - b);
const q = (p: number) => nn[Math.floor(p * (n - 1))]!.toFixed(3);
console.log(`n ${n}; nearest-neighbour calibrated sim quantiles: 10% ${q(0.1)} 25% ${q(0.25)} 50% ${q(0.5)} 75% ${q(0.75)} 90% ${q(0.9)}`);
const folder = (p: string) => p.split("/").slice(0, -1).join("/") || ".";
for (const t of (process.argv[3] ?? "0.4,0.5,0.55,0.6,0.65,0.7,0.8,0.85,0.9").split(",").map(Number)) {
  const gs = similarGroups(cal, t).filter((g) => g.length >= 2).sort((a, b) => b.length - a.length);
  const inC = gs.reduce((s, g) => s + g.length, 0);
  // pair purity: share of within-cluster pairs sharing a folder
  let pairs = 0, same = 0;
  for (const g of gs) for (let a = 0; a < g.length; a++) for (let b = a + 1; b < g.length; b++) { pairs++; if (folder(P[g[a]!]!) === folder(P[g[b]!]!)) same++; }
  console.log(`t ${t}: ${gs.length} clusters, ${inC} notes clustered, largest ${gs[0]?.length ?? 0}, purity ${(same / Math.max(1, pairs)).toFixed(2)}`);
  if (process.argv[4]) for (const g of gs.slice(0, Number(process.argv[4]))) console.log("   ", g.map((i) => P[i]).join(" ; ").slice(0, 300));
}
vault.close();
