// Experiment (issue 11, paraphrased questions): does a vector per heading path ("Title > Section >
// Subsection", short texts, where the built-in model is at its best) find pages the passage vectors
// miss? For our two question sets it embeds every note's title and heading paths, ranks notes by their
// best heading-path cosine, and fuses that list with the default hybrid ranking by reciprocal rank at a
// few weights; hit@5 per kind on the tuning and report halves.
//   bun bench/lib/retrieval-headings.ts oh|srd
import { builtinEmbedder } from "../../lib/providers/select";
import { retrieve } from "../../lib/semantic/retrieve";
import { SemanticService } from "../../lib/semantic/service";
import { openSetVault, setFromArgs, unit } from "./retrieval-dump-setup";

const { set } = setFromArgs();
const vault = await openSetVault(set);
const db = vault.indexDb;
const svc = SemanticService.for(vault);
const emb = builtinEmbedder();
const notes = db.query("SELECT id, path, title FROM notes").all() as { id: number; path: string; title: string }[];
const heads = db.query("SELECT note_id AS id, level, title FROM headings ORDER BY note_id, ord").all() as { id: number; level: number; title: string }[];
const byNote = new Map<number, { level: number; title: string }[]>();
for (const h of heads) (byNote.get(h.id) ?? byNote.set(h.id, []).get(h.id)!).push(h);
const texts: string[] = [];
const owner: number[] = [];
for (const n of notes) {
  texts.push(n.title);
  owner.push(n.id);
  const stack: { level: number; title: string }[] = [];
  for (const h of byNote.get(n.id) ?? []) {
    while (stack.length && stack.at(-1)!.level >= h.level) stack.pop();
    stack.push(h);
    if (h.title.trim().toLowerCase() === n.title.trim().toLowerCase()) continue;
    texts.push([n.title, ...stack.map((s) => s.title)].join(" > "));
    owner.push(n.id);
  }
}
process.stderr.write(`${set.name}: ${notes.length} notes, ${texts.length} heading paths to embed\n`);
const vecs: Float32Array[] = [];
for (let i = 0; i < texts.length; i += 128) vecs.push(...(await emb.embed(texts.slice(i, i + 128), { purpose: "document" })).map(unit));
const pathOf = new Map(notes.map((n) => [n.id, n.path]));

const WEIGHTS = [0, 0.25, 0.5, 1];
const K = 10;
type Tally = Record<string, { hit: number; n: number }>;
const tallies = new Map<string, Tally>();
const count = (name: string, key: string, hit: boolean) => {
  const t = tallies.get(name) ?? tallies.set(name, {}).get(name)!;
  const c = (t[key] ??= { hit: 0, n: 0 });
  c.n++;
  if (hit) c.hit++;
};
for (const q of set.queries) {
  const hybrid = (await retrieve(svc, { query: q.text, mode: "hybrid", limit: 50 })).notes.map((n) => n.noteId);
  const qv = unit((await emb.embed([q.text], { purpose: "query" }))[0]!);
  const best = new Map<number, number>();
  for (let i = 0; i < vecs.length; i++) {
    let dot = 0;
    const v = vecs[i]!;
    for (let d = 0; d < v.length; d++) dot += v[d]! * qv[d]!;
    if (dot > (best.get(owner[i]!) ?? -2)) best.set(owner[i]!, dot);
  }
  const headRank = [...best.entries()].sort((a, b) => b[1] - a[1]).slice(0, 50).map(([id]) => id);
  const key = `${q.half}/${q.kind}`;
  const rel = (id: number) => q.relevant.has(set.docOf(pathOf.get(id)!));
  count("heading paths alone", key, headRank.slice(0, 5).some(rel));
  for (const w of WEIGHTS) {
    const score = new Map<number, number>();
    hybrid.forEach((id, r) => score.set(id, (score.get(id) ?? 0) + 1 / (K + r + 1)));
    if (w) headRank.forEach((id, r) => score.set(id, (score.get(id) ?? 0) + w / (K + r + 1)));
    const fused = [...score.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => id);
    count(w ? `hybrid + ${w} × heading paths (RRF k=${K})` : "hybrid (default)", key, fused.slice(0, 5).some(rel));
  }
}
const keys = [...new Set(set.queries.map((q) => `${q.half}/${q.kind}`))].sort();
console.log(`\n${set.name}: hit@5\n\n| system | ${keys.join(" | ")} |\n|---|${keys.map(() => "---:").join("|")}|`);
for (const [name, t] of tallies) console.log(`| ${name} | ${keys.map((k) => `${t[k]?.hit ?? 0}/${t[k]?.n ?? 0}`).join(" | ")} |`);
emb.close();
process.exit(0);
