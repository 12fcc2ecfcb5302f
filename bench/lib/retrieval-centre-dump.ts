// The vectors a centring experiment needs (docs/retrieval-experiments.md, fourteenth pass), dumped for
// bench/lib/retrieval_centre.py: every passage vector (unit length) with its note, every
// note vector, every query vector (the built-in model, as retrieve() embeds it) and the
// questions' relevant documents and keyword lists.
//   bun bench/lib/retrieval-centre-dump.ts oh|srd|docs|scifact [train]
//     → $LETTUCE_BENCH_CACHE/dumps/<name>[-train].centre.{json,f32}
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { builtinEmbedder } from "../../lib/providers/select";
import { keywordRank } from "../../lib/semantic/keyword";
import { allNoteVectors } from "../../lib/semantic/store";
import { BENCH_CACHE } from "./retrieval-data";
import { openSetVault, passageMatrix, setFromArgs, unit } from "./retrieval-dump-setup";

const { which, split, set } = setFromArgs();
const vault = await openSetVault(set);
const db = vault.indexDb;
const notes = db.query("SELECT id, path FROM notes ORDER BY id").all() as { id: number; path: string }[];
const idx = new Map(notes.map((n, i) => [n.id, i]));
const { flat, owner, dim } = passageMatrix(db, idx);
const noteFlat = new Float32Array(notes.length * dim);
for (const r of allNoteVectors(db)) if (idx.has(r.noteId)) noteFlat.set(unit(r.vector), idx.get(r.noteId)! * dim);
const emb = builtinEmbedder();
const queryFlat = new Float32Array(set.queries.length * dim);
for (let i = 0; i < set.queries.length; i += 64) {
  const vs = await emb.embed(
    set.queries.slice(i, i + 64).map((q) => q.text),
    { purpose: "query" },
  );
  vs.forEach((v, j) => queryFlat.set(unit(v), (i + j) * dim));
}
const dir = join(BENCH_CACHE, "dumps");
mkdirSync(dir, { recursive: true });
const name = `${which}${split === "train" ? "-train" : ""}.centre`;
// One file of float32s: passages, then notes, then queries; the JSON says how many of each.
const all = new Float32Array(flat.length + noteFlat.length + queryFlat.length);
all.set(flat, 0);
all.set(noteFlat, flat.length);
all.set(queryFlat, flat.length + noteFlat.length);
writeFileSync(join(dir, `${name}.f32`), all);
writeFileSync(
  join(dir, `${name}.json`),
  JSON.stringify({
    dim,
    passages: owner.length,
    owner: [...owner],
    docs: notes.map((n) => set.docOf(n.path)),
    // The keyword side's top 100 (note row, BM25), for a rough hybrid offline (the flat list's convex tie-break).
    queries: set.queries.map((q) => ({ id: q.id, kind: q.kind ?? null, half: q.half ?? null, relevant: [...q.relevant], keyword: keywordRank(db, q.text, 100).map((h) => [idx.get(h.noteId)!, h.score]) })),
  }),
);
console.error(`${name}: ${owner.length} passages, ${notes.length} notes, ${set.queries.length} queries`);
vault.close();
process.exit(0);
