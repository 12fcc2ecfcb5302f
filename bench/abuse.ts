// Abuse benchmark: the attacks of the hardening issue (docs/security.md)
// against a real `lettuce serve` child process on a copy of obsidian-hub,
// while this process pings the server every 10 ms. For each attack it prints
// the worst ping pause (the longest any caller waited for the server), what
// the attack got back, and the server's memory; then the person-save race
// (item 7) and its lost-save count. Goal: worst pause ≤ 100 ms, 0 lost saves.
//
//   bun bench/abuse.ts [--vault PATH] [--quick] [--only heavy|many]
//
// --only heavy: only the heavy reads once answered on the request thread (issue 15 part 1,
// item 3): query_database, search_workspace's substring fallback, prepare_context,
// get_changes_since's bootstrap; each row's worst ping pause is the figure (goal ≤ ~50 ms).
//
// --only many: only thousands of notes at once (a checkout rewriting every note; a move rewriting 2,000 notes' links).
//
// --quick: fewer repetitions, a 10 MB instead of a 50 MB person's note, one
// person-save run instead of five. Figures on a shared 2-core machine are rough.
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { BUN, killChildren } from "./lib/child";
import { cliToken, startServer } from "./lib/search-bench";
import { neverReads, unfinishedBody, type UnfinishedBody } from "../tests/helpers/raw-http";
import { fmtMs, loadavg, machineNotes, percentile } from "./lib/stats";

const REPO = resolve(import.meta.dir, "..");

function memMb(pid: number): { rss: number; hwm: number } {
  try {
    const s = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(s)?.[1] ?? NaN) / 1024;
    return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
  } catch {
    return { rss: NaN, hwm: NaN };
  }
}

export interface AbuseRow {
  attack: string;
  requests: number;
  outcome: string;
  worstPauseMs: number;
  p99PauseMs: number;
  pings: number;
  rssMb: number;
}

export interface AbuseFigures {
  vault: string;
  rows: AbuseRow[];
  personRuns: { saves: number; lost: number; agentWrites: number }[];
}

export async function runAbuseBench(opts: { vault?: string; quick?: boolean; only?: string } = {}): Promise<AbuseFigures> {
  const src = resolve(opts.vault ?? join(REPO, "../shared/corpora/obsidian-hub"));
  const quick = !!opts.quick;
  const root = mkdtempSync(join(tmpdir(), "lettuce-abuse-"));
  cpSync(src, root, { recursive: true, filter: (s) => !s.includes("/.lettuce") });
  const token = await cliToken(root, "write", "abuse");
  process.stderr.write(`abuse: serving a copy of ${src}…\n`);
  const server = await startServer(root);
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` };
  let nextId = 0;
  const post = (body: unknown, extra: Record<string, string> = {}) =>
    fetch(server.url, { method: "POST", headers: { ...headers, ...extra }, body: typeof body === "string" ? body : JSON.stringify(body) });
  const call = async (name: string, args: Record<string, unknown>) => {
    const res = await post({ jsonrpc: "2.0", id: ++nextId, method: "tools/call", params: { name, arguments: args } });
    const json: any = await res.json();
    return json.result ?? json;
  };
  const kindOf = (r: any) => (r?.isError ? r.kind : r?.error ? `rpc ${r.error.code}` : "ok");

  const rows: AbuseRow[] = [];
  // The pinger runs in a process of its own (bench/lib/pinger.ts): this process's work never counts as a pause.
  const pingerPath = new URL("./lib/pinger.ts", import.meta.url).pathname;
  /** Run `attack` while pinging every 10 ms; the ping loop keeps going until the attack settles. */
  const measure = async (attack: string, requests: number, fn: () => Promise<string>) => {
    process.stderr.write(`abuse: ${attack}…\n`);
    const pinger = Bun.spawn([BUN, pingerPath], {
      env: { ...process.env, PING_URL: server.url, PING_HEADERS: JSON.stringify(headers), PING_EVERY_MS: "10" },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "inherit",
    });
    let outcome: string;
    try {
      outcome = await fn();
    } finally {
      pinger.stdin.end();
    }
    const pauses = JSON.parse(await new Response(pinger.stdout).text()) as number[];
    rows.push({ attack, requests, outcome, worstPauseMs: Math.max(...pauses), p99PauseMs: percentile(pauses, 99), pings: pauses.length, rssMb: memMb(server.pid).rss });
  };
  const tally = (kinds: string[]) => {
    const m = new Map<string, number>();
    for (const k of kinds) m.set(k, (m.get(k) ?? 0) + 1);
    return [...m].map(([k, n]) => `${n}× ${k}`).join(", ");
  };
  /** `n` requests from `conc` clients at once. */
  const flood = async (n: number, conc: number, one: (i: number) => Promise<string>) => {
    const kinds: string[] = [];
    let i = 0;
    await Promise.all(Array.from({ length: conc }, async () => {
      while (i < n) kinds.push(await one(i++));
    }));
    return tally(kinds);
  };
  const letters = (n: number) => Array.from({ length: n }, (_, i) => "abcdefghijklmnopqrstuvwxyz"[i % 26]).join(" OR ");
  const reps = quick ? 8 : 40;

  try {
    await measure("idle (reference)", 0, async () => {
      await Bun.sleep(1000);
      return "–";
    });
    if (opts.only === "many") {
      await manyNotes();
      return { vault: src, rows, personRuns: [] };
    }
    if (opts.only !== "heavy") await attacks();
    await heavyReads();
    if (opts.only === "heavy") return { vault: src, rows, personRuns: [] };
    await manyNotes();
    // Item 7: a person saving every ~10 ms while four agents edit the same note.
    const personRuns = [];
    for (let run = 0; run < (quick ? 1 : 5); run++) personRuns.push(await personRace(root, call, run, quick ? 3000 : 5000));
    return { vault: src, rows, personRuns };
  } finally {
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  }

  async function attacks() {
    // Item 1: many short prefix terms.
    await measure("search: 500 one-letter terms OR'ed (2.5 KB)", reps, () => flood(reps, 4, async () => kindOf(await call("search", { query: letters(500) }))));
    await measure("search: 200 one-letter terms OR'ed (400 chars)", reps, () => flood(reps, 4, async () => kindOf(await call("search", { query: letters(200) }))));
    await measure("search: 32 one-letter terms OR'ed (the most allowed)", reps, () => flood(reps, 4, async () => kindOf(await call("search", { query: letters(32) }))));
    await measure("search: 32 common words OR'ed", reps, () =>
      flood(reps, 4, async () => kindOf(await call("search", { query: "the OR and OR obsidian OR plugin OR note OR notes OR github OR theme OR with OR for OR you OR this OR that OR from OR your OR can OR use OR link OR links OR file OR files OR page OR text OR make OR more OR all OR any OR new OR how OR get OR set OR add" }))),
    );
    // Item 2: huge notes.
    const words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua".split(" ");
    const prose = (bytes: number) => {
      const parts = ["# Big\n\n"];
      let n = 0;
      for (let i = 0; n < bytes; i++) {
        const w = `${words[(i * 7) % words.length]} ${words[i % words.length]}${i % 12 === 0 ? "\n" : " "}`;
        parts.push(w);
        n += w.length;
      }
      return parts.join("");
    };
    await measure("write_note of a 2 MiB note (indexed in the call)", 1, async () => kindOf(await call("write_note", { path: "Abuse/agent-2mib.md", content: prose(2 * 1024 * 1024 - 4096) })));
    await measure("search 'lorem' with a 2 MiB note in the vault", reps, () => flood(reps, 4, async () => kindOf(await call("search", { query: "lorem" }))));
    const bigMb = quick ? 10 : 50;
    await measure(`a person saves a ${bigMb} MB note (the watcher indexes it)`, 1, async () => {
      writeFileSync(join(root, "Abuse/person-big.md"), prose(bigMb * 1024 * 1024));
      // Wait until it is searchable: the watcher's indexing pass is part of what is measured.
      for (;;) {
        const r = await call("search", { query: "lorem", limit: 50 });
        if (!r.isError && JSON.parse(r.content[0].text).items.some((i: any) => i.path === "Abuse/person-big.md")) return "indexed";
        await Bun.sleep(200);
      }
    });
    await measure(`search 'lorem' with a ${bigMb} MB note in the vault`, reps, () => flood(reps, 4, async () => kindOf(await call("search", { query: "lorem" }))));
    // Answers never read: each connection's answer waits in the server until taken (docs/security.md: the answer budget).
    const unread = quick ? 10 : 40;
    await measure(`read_note of the ${bigMb} MB note over ${unread} connections that never read`, unread, async () => {
      const sockets = await Promise.all(Array.from({ length: unread }, (_, i) => neverReads(server.url, token, i, "read_note", { path: "Abuse/person-big.md" })));
      await Bun.sleep(3000);
      const held = `server RSS ${memMb(server.pid).rss.toFixed(0)} MB while they stay open`;
      for (const s of sockets) s.destroy();
      await Bun.sleep(2000); // the calls still queued behind them run out before the next attack
      return held;
    });
    // Request bodies that never end: refused past the token's budget from their headers (docs/security.md: the request budget).
    const hanging = quick ? 100 : 400;
    await measure(`${hanging} connections sending 900 KB bodies that never end`, hanging, async () => {
      const open: UnfinishedBody[] = [];
      for (let i = 0; i < hanging; i++) open.push(await unfinishedBody(server.url, token, 900_000));
      await Bun.sleep(3000);
      const answers = await Promise.all(open.map((h) => Promise.race([h.answer, Bun.sleep(200).then(() => "")])));
      const held = `${answers.filter((a) => a.startsWith("HTTP/1.1 429")).length} refused (429), server RSS ${memMb(server.pid).rss.toFixed(0)} MB while they stay open`;
      for (const h of open) h.socket.destroy();
      return held;
    });
    // Item 3: batches and graphs.
    const searches = JSON.stringify(Array.from({ length: 20_000 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "search", arguments: { query: "obsidian plugin" } } })));
    await measure("batch of 20,000 searches (2.4 MB), MCP 2025-06-18", 1, async () => `HTTP ${(await post(searches, { "mcp-protocol-version": "2025-06-18" })).status}`);
    await measure("batch of 20,000 searches, MCP 2025-03-26", 1, async () => `HTTP ${(await post(searches, { "mcp-protocol-version": "2025-03-26" })).status}`);
    const hub = "05 - Concepts/Buy me a coffee.md";
    const graphs = JSON.stringify(Array.from({ length: 32 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "link_graph", arguments: { path: hub, depth: 5, maxNodes: 10000 } } })));
    await measure("batch of 32 link_graph depth 5 (the cap), MCP 2025-03-26", 1, async () => {
      const res = await post(graphs, { "mcp-protocol-version": "2025-03-26" });
      const text = await res.text();
      return `HTTP ${res.status}, ${(text.length / 1024 / 1024).toFixed(1)} MB`;
    });
    await measure(`${reps * 5} link_graph depth 5 on the biggest hub, 8 at a time`, reps * 5, () =>
      flood(reps * 5, 8, async () => kindOf(await call("link_graph", { path: hub, depth: 5, maxNodes: 10000 }))),
    );
    await measure(`${quick ? 4 : 16} lint calls, 4 at a time`, quick ? 4 : 16, () => flood(quick ? 4 : 16, 4, async () => kindOf(await call("lint", {}))));
  }

  async function heavyReads() {
    // Heavy reads still answered on the request thread (issue 15): each call's worst ping pause.
    // A base with no filters selects every note: query_database's first call builds its rows.
    mkdirSync(join(root, "Abuse"), { recursive: true });
    writeFileSync(join(root, "Abuse/All notes.base"), "views:\n  - type: table\n    name: All\n");
    await Bun.sleep(500); // the watcher picks the base up
    const heavy = quick ? 2 : 5;
    await measure("query_database, a base over every note (first call, then again)", heavy, () => flood(heavy, 1, async () => kindOf(await call("query_database", { databaseId: "Abuse/All notes.base", limit: 50 }))));
    await measure("search_workspace, substring fallback (no keyword hit)", heavy, () => flood(heavy, 1, async (i) => kindOf(await call("search_workspace", { query: `xq${i}zv` }))));
    await measure("prepare_context, a task of common words", heavy, () => flood(heavy, 1, async () => kindOf(await call("prepare_context", { task: "how do I write a plugin that adds a theme to the graph view" }))));
    // log.md is read as a ledger on the request thread: a heading with a long run of blanks once took minutes.
    writeFileSync(join(root, "log.md"), `# Log\n\n## [2026-03-01] ingest${" ".repeat(400_000)}x\n## [2026-03-02] query | y\n`);
    await Bun.sleep(500); // the watcher indexes it
    await measure("recent_activity, get_vault_info over a log.md heading of 400 KB of blanks", heavy, () =>
      flood(heavy, 1, async (i) => kindOf(await call(i % 2 ? "get_vault_info" : "recent_activity", {}))),
    );
    await measure("get_changes_since, no cursor (bootstrap: every item)", heavy, () => flood(heavy, 1, async () => kindOf(await call("get_changes_since", { limit: 1000 }))));
    // Big answers: the 50 largest notes (~1 MB an answer on obsidian-hub), 32 calls at once. The files are
    // read, assembled and serialised in the read workers (docs/security.md, "Limits").
    const largest = largestNotes(root, 50);
    await measure("get_pages, the 50 largest notes, 32 calls at once", reps * 4, () => flood(reps * 4, 32, async () => kindOf(await call("get_pages", { pageIds: largest }))));
    await measure("read_note, the largest notes in turn, 32 calls at once", reps * 4, () => flood(reps * 4, 32, async (i) => kindOf(await call("read_note", { path: largest[i % largest.length] }))));
  }

  async function manyNotes() {
    // Thousands of notes at once (docs/security.md, "Thousands of notes changed at once"): a checkout that
    // rewrites every note, which the watcher indexes, and a move whose link rewrites touch 2,000 notes.
    const notes = allNotes(root);
    const stamp = `zq${Date.now().toString(36)}`;
    await measure(`a checkout rewrites all ${notes.length} notes (the watcher indexes them)`, 0, async () => {
      for (const n of notes) appendFileSync(join(root, n), `\n${stamp}\n`);
      const deadline = Date.now() + 120_000;
      for (;;) {
        const r: any = await call("search", { query: stamp, limit: 1 });
        const total = r?.isError ? 0 : JSON.parse(r.content[0].text).total;
        if (total >= notes.length) return `${total} indexed`;
        if (Date.now() > deadline) return `${total} indexed after 120 s`;
        await Bun.sleep(200);
      }
    });
    const LINKED = quick ? 500 : 2000;
    mkdirSync(join(root, "Abuse/Linked"), { recursive: true });
    writeFileSync(join(root, "Abuse/Hub note.md"), "# Hub note\n");
    for (let i = 0; i < LINKED; i++) writeFileSync(join(root, `Abuse/Linked/L${i}.md`), `# L${i}\n\nsee [[Hub note]] and [[Hub note#x|the hub]]\n`);
    for (let tries = 0; tries < 600; tries++) {
      const r: any = await call("list_backlinks", { path: "Abuse/Hub note.md", limit: 1 });
      if (!r?.isError && JSON.parse(r.content[0].text).total >= 2 * LINKED) break;
      await Bun.sleep(200);
    }
    await measure(`move_note of a note ${LINKED} notes link to (every link rewritten)`, 1, async () => {
      const r: any = await call("move_note", { from: "Abuse/Hub note.md", to: "Abuse/Moved hub.md" });
      return r?.isError ? r.kind : `${JSON.parse(r.content[0].text).linksUpdated} links`;
    });
  }
}

/** Every note of the vault, vault-relative (hidden folders left out). */
function allNotes(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, rel: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name.startsWith(".")) continue;
      if (e.isDirectory()) walk(join(dir, e.name), `${rel}${e.name}/`);
      else if (e.isFile() && e.name.endsWith(".md")) out.push(rel + e.name);
    }
  };
  walk(root, "");
  return out;
}

/** The vault's `n` largest notes, vault-relative (hidden folders left out, as the index does). */
function largestNotes(root: string, n: number): string[] {
  const found: [string, number][] = [];
  const walk = (dir: string, rel: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name.startsWith(".")) continue;
      if (e.isDirectory()) walk(join(dir, e.name), `${rel}${e.name}/`);
      else if (e.isFile() && e.name.endsWith(".md")) found.push([rel + e.name, statSync(join(dir, e.name)).size]);
    }
  };
  walk(root, "");
  return found.sort((a, b) => b[1] - a[1]).slice(0, n).map(([p]) => p);
}

const PERSON = `
const fs = require("node:fs");
const [file, ms, tag] = process.argv.slice(1);
const end = Date.now() + Number(ms);
let k = 0;
while (Date.now() < end) {
  const text = fs.readFileSync(file, "utf8");
  const tmp = file.replace(/[^/]+$/, ".person-" + tag + "-" + k + ".tmp");
  fs.writeFileSync(tmp, text + "- " + tag + "-" + k + "\\n");
  fs.renameSync(tmp, file);
  k++;
  Bun.sleepSync(8 + (k % 5));
}
console.log(k);
`;

async function personRace(root: string, call: (n: string, a: Record<string, unknown>) => Promise<any>, run: number, ms: number) {
  process.stderr.write(`abuse: person-save race ${run + 1}…\n`);
  const path = `Abuse/person-${run}.md`;
  await call("write_note", { path, content: "# Shared\n\n## Agents\n\n## Person\n\n" });
  const person = Bun.spawn([BUN, "-e", PERSON, join(root, path), String(ms), `p${run}`], { stdout: "pipe", stderr: "ignore" });
  let done = false;
  const out = new Response(person.stdout).text().then(async (t) => {
    await person.exited;
    done = true;
    return t;
  });
  let agentWrites = 0;
  await Promise.all(
    [0, 1, 2, 3].map(async (a) => {
      for (let j = 0; !done; j++) {
        const r = await call("patch_section", { path, heading: "Agents", mode: "append", content: `- a${a}-${j}` });
        if (!r.isError) agentWrites++;
      }
    }),
  );
  const saves = Number((await out).trim());
  const final = readFileSync(join(root, path), "utf8");
  let lost = 0;
  for (let k = 0; k < saves; k++) if (!final.includes(`- p${run}-${k}\n`)) lost++;
  return { saves, lost, agentWrites };
}

export function abuseReport(f: AbuseFigures): string {
  const lines = [
    `## Abuse (docs/security.md)`,
    "",
    `A \`lettuce serve\` child on a copy of ${f.vault}; a process of its own pings it every 10 ms during each attack. Load ${loadavg()}. ${machineNotes()}.`,
    "",
    "| attack | requests | answers | worst ping pause | p99 ping | pings | server RSS after |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...f.rows.map((r) => `| ${r.attack} | ${r.requests} | ${r.outcome} | ${fmtMs(r.worstPauseMs)} | ${fmtMs(r.p99PauseMs)} | ${r.pings} | ${r.rssMb.toFixed(0)} MB |`),
    "",
    ...(f.personRuns.length ? [] : ["(--only heavy: no person-save race.)"]),
    `Person-save race (item 7), a person saving by write-then-rename every ~10 ms while 4 agents append to the same note: ` +
      f.personRuns.map((r, i) => `run ${i + 1}: ${r.lost} lost of ${r.saves} saves (${r.agentWrites} agent writes)`).join("; ") +
      `. Total lost: ${f.personRuns.reduce((n, r) => n + r.lost, 0)}.`,
    "",
    "Goal: worst ping pause ≤ 100 ms during the search, batch and graph attacks; 0 lost person saves.",
  ];
  return lines.join("\n");
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { vault: { type: "string" }, quick: { type: "boolean" }, only: { type: "string" } } });
  process.on("SIGINT", () => {
    killChildren();
    process.exit(130);
  });
  try {
    console.log(abuseReport(await runAbuseBench({ vault: values.vault, quick: values.quick, only: values.only })));
  } finally {
    killChildren();
  }
}
