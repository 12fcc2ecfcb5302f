// Where a cold index spends its time, one phase at a time on one thread:
//   bun bench/lib/phases.ts <vault>   → one JSON line
// Each phase runs over every note before the next starts, twice, keeping the
// faster pass (the first pass includes JIT warm-up, as a fresh worker would).
// "clone" is structuredClone of the parse results: what handing them from a
// parse worker to the main thread costs (serialise + deserialise).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { contentHash } from "../../lib/index/parse-job";
import { parseNote, type ParsedNote } from "../../lib/vault/parse";
import { scanVault } from "../../lib/vault/scan";

const root = process.argv[2];
if (!root) {
  console.error("usage: phases.ts <vault>");
  process.exit(2);
}

function timed<T>(fn: () => T): [T, number] {
  const t0 = performance.now();
  const v = fn();
  return [v, performance.now() - t0];
}

const best: Record<string, number> = {};
const note = (k: string, ms: number) => (best[k] = Math.min(best[k] ?? Infinity, ms));
let counts = { notes: 0, bytes: 0, links: 0, tags: 0, headings: 0 };
for (let pass = 0; pass < 2; pass++) {
  const [listing, scanMs] = timed(() => scanVault(root));
  note("scan", scanMs);
  const paths = listing.notes.map((n) => n.path);
  const [bufs, readMs] = timed(() => paths.map((p) => readFileSync(join(root, p))));
  note("read", readMs);
  note("hash", timed(() => bufs.forEach((b) => contentHash(b)))[1]);
  const [texts, decodeMs] = timed(() => bufs.map((b) => b.toString("utf8")));
  note("decode", decodeMs);
  const [parsed, parseMs] = timed(() => texts.map((t, i) => parseNote(paths[i]!, t)));
  note("parse", parseMs);
  note("clone", timed(() => structuredClone(parsed as ParsedNote[]))[1]);
  counts = {
    notes: paths.length,
    bytes: bufs.reduce((s, b) => s + b.length, 0),
    links: parsed.reduce((s, p) => s + p.links.length, 0),
    tags: parsed.reduce((s, p) => s + p.tags.length, 0),
    headings: parsed.reduce((s, p) => s + p.headings.length, 0),
  };
}
console.log(JSON.stringify({ ...counts, ms: best }));
