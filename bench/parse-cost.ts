// The parse worker's per-note CPU, corpus by corpus, with the files already in memory: what
// lib/index/parse-job.ts's readAndParse does after its read (hash, decode, parseNote, the row caps),
// and optionally the rest of the worker's per-note work (the full-text row's n-grams, the batch's
// packing). Round 1 runs on a cold JIT, as a cold index's one pass does; later rounds are warm.
//
//   bun bench/parse-cost.ts [--rounds 5] [--only obsidian-hub,...] [--worker | --full] [--root DIR]
//   bun bench/parse-cost.ts --dump DIR    (every note's parse output as JSON lines, one file per corpus)
//
// --root runs another checkout's parser (a git worktree of the base, for A/B runs in one harness).
// CPU is the whole process's user+sys (JIT and GC threads too) and the main thread's own
// (/proc/thread-self/schedstat): on a shared machine, CPU time, not wall time, is the measure.
import { readdirSync, readFileSync, writeFileSync, mkdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(name);
const opt = (name: string) => {
  const i = argv.indexOf(name);
  return i === -1 ? undefined : argv[i + 1];
};

const REPO = resolve(import.meta.dir, "..");
const ROOT = resolve(opt("--root") ?? REPO);
const CORPORA = resolve(REPO, "../shared/corpora");
const ALL: [string, string][] = [
  ["obsidian-hub", join(CORPORA, "obsidian-hub")],
  ["obsidian-help", join(CORPORA, "obsidian-help")],
  ["dnd-srd-wiki", join(CORPORA, "dnd-srd-wiki")],
  ["example-vault", join(REPO, "examples/vault")],
];
const extra = opt("--vault"); // another vault, e.g. a generated one: name=dir
if (extra) ALL.push(extra.split("=") as [string, string]);
const only = opt("--only")?.split(",");
const corpora = ALL.filter(([n]) => !only || only.includes(n));

const parse = (await import(join(ROOT, "lib/vault/parse.ts"))) as typeof import("../lib/vault/parse");
const job = (await import(join(ROOT, "lib/index/parse-job.ts"))) as typeof import("../lib/index/parse-job");
const { MAX_INDEXED_ROWS } = (await import(join(ROOT, "lib/store/index-db.ts"))) as typeof import("../lib/store/index-db");
const { LinkResolver } = (await import(join(ROOT, "lib/index/resolver.ts"))) as typeof import("../lib/index/resolver");
type Resolver = InstanceType<typeof LinkResolver>;

interface Note {
  path: string;
  buf: Buffer;
}

function walk(root: string, dir = root, out: Note[] = []): Note[] {
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (e.name.startsWith(".")) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(root, p, out);
    else if (e.isFile() && e.name.toLowerCase().endsWith(".md")) out.push({ path: relative(root, p), buf: readFileSync(p) });
  }
  return out;
}

const loaded: { name: string; dir: string; notes: Note[]; resolver?: Resolver; idOf?: Map<string, number> }[] = corpora.map(([name, dir]) => ({
  name,
  dir,
  notes: walk(dir),
}));

// readAndParse's row caps (parse-job.ts's capIndexedRows is private: the same loop).
function cap(p: import("../lib/vault/parse").ParsedNote) {
  for (const list of [p.links, p.tags, p.headings, p.mentions, p.directives] as unknown[][]) if (list.length > MAX_INDEXED_ROWS) list.length = MAX_INDEXED_ROWS;
  return p;
}

// --full: the worker's whole per-note work, from the read (the page cache's: the files were read once
// above) to the packed batch, with a resolver of the vault's names as a cold index's workers get it.
const full = flag("--full");
function resolverOf(dir: string, notes: Note[]) {
  const r = new LinkResolver();
  for (const n of notes) r.addNote(n.path, []);
  (function files(d: string) {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.name.startsWith(".")) continue;
      if (e.isDirectory()) files(join(d, e.name));
      else if (!e.name.toLowerCase().endsWith(".md")) r.addFile(relative(dir, join(d, e.name)));
    }
  })(dir);
  return r;
}
function fullRound(dir: string, notes: Note[], resolver: Resolver, idOf: Map<string, number>): number {
  let bytes = 0;
  for (let i = 0; i < notes.length; i += 48) {
    const results = notes.slice(i, i + 48).map((n, k) => {
      const req = { entry: { path: n.path, size: n.buf.length, mtimeMs: 0, ctimeMs: 0, changeMs: 0 }, knownHash: null, ftsId: i + k + 1 };
      const r = job.readAndParse(dir, req, resolver, true);
      job.ftsRowOf(req.ftsId, r);
      r.ftsSent = true;
      return r;
    });
    bytes += job.packBatch(results, idOf).packed.length;
  }
  return bytes;
}

/** One note as the worker handles it after reading it. */
function perNote(n: Note, worker: boolean, id: number) {
  const hash = job.contentHash(n.buf);
  const text = n.buf.toString("utf8");
  const parsed = cap(parse.parseNote(n.path, text));
  if (!worker) return parsed;
  const r = { entry: { path: n.path, size: n.buf.length, mtimeMs: 0, ctimeMs: 0, changeMs: 0 }, hash, parsed, bytes: n.buf, text };
  job.ftsRowOf(id, r);
  return r;
}

if (opt("--dump")) {
  const out = resolve(opt("--dump")!);
  mkdirSync(out, { recursive: true });
  // Values JSON cannot tell apart (a Date, undefined, NaN) are tagged; object keys keep their order
  // (stricter than sorting them: the index stores the frontmatter as it comes).
  const replacer = function (this: Record<string, unknown>, k: string, v: unknown) {
    const raw = this[k];
    if (raw instanceof Date) return { $date: Number.isNaN(raw.getTime()) ? "invalid" : raw.toISOString() };
    if (v === undefined) return { $undefined: true };
    if (typeof v === "number" && !Number.isFinite(v)) return { $number: String(v) };
    if (typeof v === "bigint") return { $bigint: String(v) };
    return v;
  };
  for (const c of loaded) {
    const lines: string[] = [];
    for (const n of c.notes) {
      const text = n.buf.toString("utf8");
      const note = cap(parse.parseNote(n.path, text));
      const extras = {
        headings: parse.parseHeadings(text),
        linkLines: parse.linkLinesOf(n.path, text),
        prose: parse.proseOf(text),
        bodyLinks: parse.bodyLinks(note.body),
        noteBody: parse.noteBody(text) === note.body,
      };
      lines.push(JSON.stringify({ path: n.path, note, extras }, replacer));
    }
    writeFileSync(join(out, `${c.name}.jsonl`), lines.join("\n") + "\n");
    console.log(`${c.name}: ${c.notes.length} notes -> ${join(out, `${c.name}.jsonl`)} (${statSync(join(out, `${c.name}.jsonl`)).size} bytes)`);
  }
  process.exit(0);
}

function threadCpuMs(): number {
  try {
    return Number(readFileSync("/proc/thread-self/schedstat", "utf8").split(" ")[0]) / 1e6;
  } catch {
    return NaN;
  }
}

if (full) for (const c of loaded) {
  c.resolver = resolverOf(c.dir, c.notes);
  c.idOf = new Map(c.notes.map((n, i) => [n.path, i + 1]));
}
const rounds = Number(opt("--rounds") ?? 5);
const worker = flag("--worker");
const rows: Record<string, { cpu: number[]; main: number[]; wall: number[] }> = {};
for (const c of loaded) rows[c.name] = { cpu: [], main: [], wall: [] };
let sink = 0;
for (let r = 0; r < rounds; r++) {
  for (const c of loaded) {
    const u0 = process.cpuUsage();
    const m0 = threadCpuMs();
    const t0 = performance.now();
    let id = 1;
    if (full) sink += fullRound(c.dir, c.notes, c.resolver!, c.idOf!);
    else for (const n of c.notes) sink += perNote(n, worker, id++) ? 1 : 0;
    const wall = performance.now() - t0;
    const main = threadCpuMs() - m0;
    const u = process.cpuUsage(u0);
    rows[c.name]!.cpu.push((u.user + u.system) / 1000);
    rows[c.name]!.main.push(main);
    rows[c.name]!.wall.push(wall);
  }
}

const med = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const f0 = (x: number) => x.toFixed(0);
console.log(`root ${ROOT}${full ? " (full: read, hash, parse, resolve, fts row, pack)" : worker ? " (worker: + fts row)" : ""}, ${rounds} rounds; sink ${sink}`);
console.log("| corpus | notes | MB | round 1: CPU ms (main) · µs/note | warm median: CPU ms (main) · µs/note | every round's CPU ms |");
console.log("|---|---:|---:|---|---|---|");
for (const c of loaded) {
  const x = rows[c.name]!;
  const n = c.notes.length;
  const mb = c.notes.reduce((s, k) => s + k.buf.length, 0) / 1e6;
  const warm = x.cpu.slice(1);
  const warmMain = x.main.slice(1);
  console.log(
    `| ${c.name} | ${n} | ${mb.toFixed(1)} | ${f0(x.cpu[0]!)} (${f0(x.main[0]!)}) · ${f0((x.main[0]! * 1000) / n)} | ${warm.length ? `${f0(med(warm))} (${f0(med(warmMain))}) · ${f0((med(warmMain) * 1000) / n)}` : "-"} | ${x.cpu.map(f0).join(" ")} |`,
  );
}
if (flag("--json")) console.log(JSON.stringify({ root: ROOT, rows }));
