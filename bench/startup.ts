// Start-up, the CLI, and a peer (issue 15, parts 5–7), all in one run:
//
//   bun bench/startup.ts [--quick]     (or through bench/run.ts)
//
// - the compiled binary (built fresh by compile.sh into a temp dir) against a
//   compiled hello-world: `--version`, whole process;
// - `lettuce serve` on an indexed, unchanged 10k vault: launch → `initialize`
//   answered, launch → first `search` answered;
// - `lettuce search <vault> <word> --json`, whole process, against qmd 2.8.3's
//   `qmd search` on the same vault (qmd is installed at bench time into
//   $LETTUCE_SCALE_CACHE/qmd-2.8.3 with npm and run with Bun, keyword only: its
//   embeddings need a model download); cold index beside qmd's `collection add`
//   and a bare FTS5 load, on 5k and 10k notes.
// Every time is a whole process measured from spawn to exit (median of 5),
// each figure beside its floor and its peer.
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { benchScratch, BUN, lastJson, runChild, track } from "./lib/child";
import { cachedVault } from "./scale";
import { fmtInt, fmtMs, loadavg, median } from "./lib/stats";

const REPO = resolve(import.meta.dir, "..");
// Our own cache: the benchmarks delete these vaults' .lettuce/ folders, so no other script may share them.
const CACHE = process.env.LETTUCE_SCALE_CACHE ?? join(tmpdir(), "lettuce-bench-scale");
const QMD_VERSION = "2.8.3";
const RUNS = 5;

function log(msg: string): void {
  console.error(`[startup ${new Date().toISOString().slice(11, 19)} load ${loadavg()}] ${msg}`);
}

async function timeRuns(cmd: string[], runs = RUNS, env: Record<string, string> = {}): Promise<number> {
  return (await timeRunsCpu(cmd, runs, env)).wallMs;
}

/** Median wall time and median CPU time (user + system, from the kernel): CPU is the steadier figure on a busy machine. */
async function timeRunsCpu(cmd: string[], runs = RUNS, env: Record<string, string> = {}): Promise<{ wallMs: number; cpuMs: number }> {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const r = await runChild(cmd, { env: { ...process.env, ...env } as Record<string, string> });
    wall.push(r.wallMs);
    cpu.push(r.cpuMs);
  }
  return { wallMs: median(wall), cpuMs: median(cpu) };
}

// The floor of an exact freshness check: a compiled program that walks the vault and lstats every file
// (what lib/index/freshness.ts must do at least), and nothing else.
const WALK_STAT_SRC = `import { lstatSync, readdirSync } from "node:fs";
let n = 0;
const walk = (d) => { for (const e of readdirSync(d, { withFileTypes: true })) { if (e.name[0] === ".") continue; const p = d + "/" + e.name; if (e.isDirectory()) walk(p); else if (lstatSync(p, { throwIfNoEntry: false })) n++; } };
walk(process.argv[2]);
console.log(n);
`;

/** qmd, installed once with npm into the bench cache (never into the repo); null when npm cannot fetch it. */
async function installQmd(): Promise<string | null> {
  const dir = join(CACHE, `qmd-${QMD_VERSION}`);
  const entry = join(dir, "node_modules/@tobilu/qmd/dist/cli/qmd.js");
  if (existsSync(entry)) return entry;
  mkdirSync(dir, { recursive: true });
  log(`installing @tobilu/qmd@${QMD_VERSION} into ${dir}`);
  const r = await runChild(["npm", "i", "--no-audit", "--no-fund", `@tobilu/qmd@${QMD_VERSION}`], { cwd: dir });
  if (!existsSync(entry)) {
    log(`qmd could not be installed: ${r.stderr.slice(-400)}`);
    return null;
  }
  return entry;
}

/** A word that about 5 % of the notes hold: a search with a full page of hits, and not the whole vault. */
function typicalWord(vault: string): string {
  const db = new Database(join(vault, ".lettuce", "index.db"), { readonly: true });
  try {
    db.query("ATTACH DATABASE ? AS ftsdb").run(join(vault, ".lettuce", "fts.db"));
    db.exec("CREATE VIRTUAL TABLE temp.v USING fts5vocab(ftsdb, fts, 'row')");
    const n = (db.query("SELECT count(*) AS n FROM notes").get() as { n: number }).n;
    const r = db.query("SELECT term FROM temp.v WHERE doc BETWEEN ? AND ? AND length(term) >= 5 AND term GLOB '[a-z]*' ORDER BY doc DESC LIMIT 1").get(Math.floor(n * 0.03), Math.ceil(n * 0.08)) as { term: string } | null;
    return r?.term ?? "note";
  } finally {
    db.close();
  }
}

/** The MCP endpoint a launched `serve` prints; its output is drained from then on so that it never blocks on a full pipe. */
async function mcpUrlOf(p: { stdout: ReadableStream<Uint8Array> }): Promise<string> {
  const reader = p.stdout.getReader();
  const dec = new TextDecoder();
  let out = "";
  let url: string | null = null;
  while (!url) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`serve exited: ${out}`);
    out += dec.decode(value);
    url = /MCP endpoint: (\S+)/.exec(out)?.[1] ?? null;
  }
  void (async () => {
    while (!(await reader.read()).done);
  })().catch(() => {});
  return url;
}

/** Launch `serve`, then time launch → initialize answered and launch → first search answered. */
async function serveStartup(exe: string[], vault: string, token: string): Promise<{ initMs: number; searchMs: number }> {
  const t0 = performance.now();
  const p = track(Bun.spawn([...exe, "serve", vault, "--port", "0"], { env: { ...process.env, LETTUCE_EMBED_BACKGROUND: "0" }, stdout: "pipe", stderr: "pipe", stdin: "ignore" }));
  try {
    const url = await mcpUrlOf(p);
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` };
    const rpc = async (method: string, params: unknown) => {
      const res = await fetch(url!, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
      const body = (await res.json()) as { error?: unknown; result?: { isError?: boolean; protocolVersion: string } };
      if (body.error || body.result?.isError) throw new Error(`${method}: ${JSON.stringify(body)}`);
      return body;
    };
    const init = await rpc("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } });
    const initMs = performance.now() - t0;
    headers["mcp-protocol-version"] = init.result!.protocolVersion;
    await rpc("tools/call", { name: "search", arguments: { query: "project", limit: 10 } });
    return { initMs, searchMs: performance.now() - t0 };
  } finally {
    p.kill("SIGTERM");
    await p.exited;
  }
}

/** `lettuce search` on a vault a `serve` owns (the CLI then trusts the index and does not scan): median of RUNS. */
async function searchWhileServed(exe: string[], vault: string, word: string): Promise<{ wallMs: number; cpuMs: number }> {
  const p = track(Bun.spawn([...exe, "serve", vault, "--port", "0"], { env: { ...process.env, LETTUCE_EMBED_BACKGROUND: "0" }, stdout: "pipe", stderr: "pipe", stdin: "ignore" }));
  try {
    const url = await mcpUrlOf(p);
    // Its start-up scan done: the index is current and the server idle.
    const health = new URL("/health", url).href;
    for (let i = 0; i < 600; i++) {
      const h = (await (await fetch(health)).json()) as { state?: string };
      if (h.state === "ready") break;
      await Bun.sleep(50);
    }
    return await timeRunsCpu([...exe, "search", vault, word, "--json"]);
  } finally {
    p.kill("SIGTERM");
    await p.exited;
  }
}

interface PeerRow {
  notes: number;
  bareMs: number;
  lettuceColdMs: number;
  qmdColdMs: number | null;
  lettuceSearchMs: number;
  lettuceSearchCpuMs: number;
  walkStatMs: number;
  walkStatCpuMs: number;
  /** GNU find printing every file's size and mtime: a walk + stat in C on one thread (null where find is not GNU's). */
  findStat: { wallMs: number; cpuMs: number } | null;
  qmdSearchMs: number | null;
  word: string;
}

async function peerRow(exe: string[], vault: string, notes: number, qmd: string | null, scratch: string, walkStat: string): Promise<PeerRow> {
  const bareDb = join(scratch, "bare.db");
  for (const s of ["", "-wal", "-shm"]) rmSync(bareDb + s, { force: true });
  log(`${fmtInt(notes)} notes: bare load, Lettuce cold index`);
  const bare = await runChild([BUN, join(REPO, "bench/lib/bare-load.ts"), "load", vault, bareDb], { settle: true });
  rmSync(join(vault, ".lettuce"), { recursive: true, force: true });
  const cold = await runChild([...exe, "index", vault, "--json"], { settle: true });
  const word = typicalWord(vault);
  log(`${fmtInt(notes)} notes: Lettuce CLI search "${word}"`);
  // One search first: the one after an index change computes the index's fingerprint (lib/index/freshness.ts).
  await runChild([...exe, "search", vault, word, "--json"]);
  const search = await timeRunsCpu([...exe, "search", vault, word, "--json"]);
  const walk = await timeRunsCpu([walkStat, vault]);
  const findStat = Bun.which("find") && process.platform === "linux" ? await timeRunsCpu(["find", vault, "-name", ".*", "-prune", "-o", "-type", "f", "-printf", "%s %T@\n"]) : null;
  let qmdColdMs: number | null = null;
  let qmdSearchMs: number | null = null;
  if (qmd) {
    // qmd keeps its index under XDG_CACHE_HOME and its collections under XDG_CONFIG_HOME: both in scratch.
    const home = join(scratch, `qmd-${notes}`);
    rmSync(home, { recursive: true, force: true });
    mkdirSync(home, { recursive: true });
    const env = { XDG_CACHE_HOME: join(home, "cache"), XDG_CONFIG_HOME: join(home, "config"), HOME: home, NO_COLOR: "1" };
    log(`${fmtInt(notes)} notes: qmd collection add (its keyword index)`);
    const add = await runChild([BUN, qmd, "collection", "add", vault, "--name", "bench", "--mask", "**/*.md"], { env: { ...process.env, ...env } as Record<string, string> });
    if (add.stderr.includes("rror")) log(`qmd collection add: ${add.stderr.slice(-300)}`);
    qmdColdMs = add.wallMs;
    log(`${fmtInt(notes)} notes: qmd search "${word}"`);
    qmdSearchMs = await timeRuns([BUN, qmd, "search", word, "--json", "-n", "10"], RUNS, env);
  }
  return { notes, bareMs: bare.wallMs, lettuceColdMs: cold.wallMs, qmdColdMs, lettuceSearchMs: search.wallMs, lettuceSearchCpuMs: search.cpuMs, walkStatMs: walk.wallMs, walkStatCpuMs: walk.cpuMs, findStat, qmdSearchMs, word };
}

export async function runStartupBench(opts: { quick: boolean }): Promise<string> {
  const tmp = benchScratch("lettuce-startup-");
  const scratch = tmp.dir;
  const loadStart = loadavg();
  try {
    log("building the binary (compile.sh)");
    const build = await runChild(["bash", join(REPO, "compile.sh")], { env: { ...process.env, LETTUCE_DIST: scratch } as Record<string, string> });
    const bin = join(scratch, "lettuce");
    if (!existsSync(bin)) throw new Error(`compile.sh failed: ${build.stderr}`);
    writeFileSync(join(scratch, "hello.ts"), 'console.log("0.0.0");\n');
    await runChild([BUN, "build", "--compile", join(scratch, "hello.ts"), "--outfile", join(scratch, "hello")]);
    writeFileSync(join(scratch, "walkstat.ts"), WALK_STAT_SRC);
    await runChild([BUN, "build", "--compile", "--bytecode", "--minify", join(scratch, "walkstat.ts"), "--outfile", join(scratch, "walkstat")]);

    log("--version");
    const hello = await timeRunsCpu([join(scratch, "hello")]);
    const helloMs = hello.wallMs;
    const versionMs = await timeRuns([bin, "--version"]);
    const helpMs = await timeRuns([bin, "--help"]);

    const sizes = opts.quick ? [2000] : [5000, 10000];
    const vaults = await Promise.all(sizes.map((n) => cachedVault(n)));
    const qmd = opts.quick ? null : await installQmd();
    const peers: PeerRow[] = [];
    for (const [i, n] of sizes.entries()) peers.push(await peerRow([bin], vaults[i]!, n, qmd, scratch, join(scratch, "walkstat")));

    // Serve start-up on the largest vault, indexed and unchanged (the peer rows left it so).
    const big = vaults[vaults.length - 1]!;
    const { token } = lastJson<{ token: string }>((await runChild([bin, "token", "create", big, "--scope", "read", "--name", `startup-${Date.now()}`, "--json"])).stdout);
    const starts: { initMs: number; searchMs: number }[] = [];
    for (let i = 0; i < (opts.quick ? 2 : RUNS); i++) {
      log(`serve start-up ${i + 1}`);
      starts.push(await serveStartup([bin], big, token));
    }
    const initMs = median(starts.map((s) => s.initMs));
    const firstSearchMs = median(starts.map((s) => s.searchMs));
    log("CLI search while a serve owns the vault");
    const served = await searchWhileServed([bin], big, peers[peers.length - 1]!.word);

    const yes = (ok: boolean) => (ok ? "yes" : "**no**");
    const ratio = (a: number, b: number | null) => (b ? `${(a / b).toFixed(2)}×` : "–");
    const bigN = fmtInt(sizes[sizes.length - 1]!);
    const lastPeer = peers[peers.length - 1]!;
    const rows: string[][] = [
      ["`lettuce --version`, compiled binary", fmtMs(versionMs), `${fmtMs(helloMs)} (compiled hello-world)`, "–", "≤ 40 ms", yes(versionMs <= 40)],
      ["`lettuce --help` (lists every command)", fmtMs(helpMs), `${fmtMs(helloMs)} (compiled hello-world)`, "–", "", ""],
      [`\`lettuce serve\`, launch → \`initialize\` answered (${bigN} notes, indexed)`, fmtMs(initMs), `${fmtMs(helloMs)} (process start)`, "–", "≤ 300 ms", yes(initMs <= 300)],
      [`\`lettuce serve\`, launch → first \`search\` answered`, fmtMs(firstSearchMs), "", "–", "≤ 1 s", yes(firstSearchMs <= 1000)],
      ...peers.flatMap((p) => [
        [`cold index, ${fmtInt(p.notes)} notes`, fmtMs(p.lettuceColdMs), `${fmtMs(p.bareMs)} (bare FTS5 load)`, p.qmdColdMs ? `qmd ${fmtMs(p.qmdColdMs)} (${ratio(p.lettuceColdMs, p.qmdColdMs)})` : "qmd not run", `≤ 1.5× floor (${ratio(p.lettuceColdMs, p.bareMs)})`, yes(p.lettuceColdMs <= 1.5 * p.bareMs)],
        [
          `\`lettuce search <vault> ${p.word} --json\`, ${fmtInt(p.notes)} notes, whole process (CPU)`,
          `${fmtMs(p.lettuceSearchMs)} (${fmtMs(p.lettuceSearchCpuMs)})`,
          `${fmtMs(helloMs)} (${fmtMs(hello.cpuMs)}) process start; ${fmtMs(p.walkStatMs)} (${fmtMs(p.walkStatCpuMs)}) a compiled walk + lstat of every file` +
            (p.findStat ? `; ${fmtMs(p.findStat.wallMs)} (${fmtMs(p.findStat.cpuMs)}) GNU find stating every file (C, one thread)` : ""),
          p.qmdSearchMs ? `qmd search ${fmtMs(p.qmdSearchMs)} (${ratio(p.lettuceSearchMs, p.qmdSearchMs)})` : "qmd not run",
          p.notes >= 10000 ? `≤ 80 ms (${ratio(p.lettuceSearchMs, p.walkStatMs)} the walk + lstat)` : "",
          p.notes >= 10000 ? yes(p.lettuceSearchMs <= 80) : "",
        ],
      ]),
      [
        `\`lettuce search <vault> ${lastPeer.word} --json\` while \`serve\` owns the ${bigN}-note vault (no scan), whole process (CPU)`,
        `${fmtMs(served.wallMs)} (${fmtMs(served.cpuMs)})`,
        `${fmtMs(helloMs)} (${fmtMs(hello.cpuMs)}) process start`,
        "–",
        "≤ 80 ms",
        yes(served.wallMs <= 80),
      ],
    ];
    return [
      `## Start-up, CLI and peer (issue 15, parts 5–7)${opts.quick ? " (--quick)" : ""}, ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC`,
      "",
      `Compiled binary from this checkout (compile.sh); whole processes, spawn to exit, median of ${RUNS}; load ${loadStart} at start, ${loadavg()} at end.`,
      "",
      "| measure | Lettuce | floor | peer (Lettuce ÷ peer) | goal | met |",
      "|---|---|---|---|---|---|",
      ...rows.map((r) => `| ${r.join(" | ")} |`),
      "",
      qmd
        ? `Peer: qmd ${QMD_VERSION} (\`npm i @tobilu/qmd@${QMD_VERSION}\` into the bench cache, run with Bun), keyword index (\`collection add\`, which indexes the files) and \`qmd search\` (BM25) only; its vector index needs a model download. Synthetic vaults from gen-vault.mjs, seed 7, cached in ${CACHE}.`
        : "qmd was not run (--quick, or npm could not install it).",
      `Last vault searched: "${lastPeer.word}" (a word in 3–8 % of the notes).`,
    ].join("\n");
  } finally {
    tmp.remove();
  }
}

if (import.meta.main) console.log(await runStartupBench({ quick: process.argv.includes("--quick") }));
