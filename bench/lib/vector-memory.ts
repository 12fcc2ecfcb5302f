// How much memory the built-in model's vectors would take for a vault, without
// embedding it (hours at 100k notes on 2 cores):
//
//   bun bench/lib/vector-memory.ts <vault>
//
// Counts passages with the built-in model's own splitter on a sample of notes,
// then fills a real VectorIndex (what the server holds in memory) with that
// many random 512-d unit vectors and reports the RSS it added. The index is
// sized first, as the server's loader does (LoadedIndexes.get: reserve).
// Prints {"passages", "perNote", "mb", "bytesPerVector", "peakMb"}: peakMb is
// the process's VmHWM rise, the loading peak.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { splitPassages } from "../../lib/semantic/passages";
import { VectorIndex } from "../../lib/semantic/vector-index";
import { parseNote } from "../../lib/vault/parse";

const DIM = 512; // the built-in model's vectors
const PASSAGE_CHARS = 500; // the built-in provider's passage size (lib/providers/builtin.ts)
const SAMPLE = 2000;

const vault = process.argv[2]!;
const notes: string[] = [];
const walk = (dir: string) => {
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    if (d.name.startsWith(".")) continue;
    if (d.isDirectory()) walk(join(dir, d.name));
    else if (d.name.endsWith(".md")) notes.push(join(dir, d.name));
  }
};
walk(vault);
// Every k-th note: a sample spread over all folders.
const step = Math.max(1, Math.floor(notes.length / SAMPLE));
let sampled = 0;
let passages = 0;
for (let i = 0; i < notes.length; i += step) {
  const text = readFileSync(notes[i]!, "utf8");
  const p = parseNote(notes[i]!.slice(vault.length + 1), text);
  passages += splitPassages(p.body, PASSAGE_CHARS, p.title).length;
  sampled++;
}
const perNote = passages / sampled;
const total = Math.round(perNote * notes.length);

const hwm = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? NaN) * 1024;
Bun.gc(true);
const before = process.memoryUsage().rss;
const hwmBefore = hwm();
const index = new VectorIndex(DIM);
index.reserve(total + (total >> 4) + 1024); // as the server's loader sizes it
const v = new Float32Array(DIM);
for (let i = 0; i < total; i++) {
  let n = 0;
  for (let j = 0; j < DIM; j++) n += (v[j] = Math.random() - 0.5) ** 2;
  for (let j = 0; j < DIM; j++) v[j]! /= Math.sqrt(n);
  index.add(i + 1, Math.floor(i / perNote) + 1, v);
}
Bun.gc(true);
const added = process.memoryUsage().rss - before;
const mb = added / 2 ** 20;
console.log(JSON.stringify({ passages: total, perNote, mb, bytesPerVector: Math.round(added / total), peakMb: (hwm() - hwmBefore) / 2 ** 20, size: index.size }));
