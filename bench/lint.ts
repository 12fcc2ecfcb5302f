// lint / wiki_health / suggest_links time on a temp copy of obsidian-hub
// (6,571 notes). Goal: lint ≤ 1 s.
//
//   bun bench/lint.ts [--vault PATH] [--runs N]
//
// Each figure is the median of N runs (min beside it) after one warm-up, both
// as a direct call on the index and as an MCP tools/call over HTTP (which adds
// JSON encoding of every finding).
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { healthFrom } from "../lib/hygiene/health";
import { lintVault } from "../lib/hygiene/lint";
import { suggestLinks } from "../lib/hygiene/suggest-links";
import { serveVaultCopy } from "./lib/served-vault";
import { loadavg, median } from "./lib/stats";

const { values } = parseArgs({ options: { vault: { type: "string" }, runs: { type: "string" } } });
const SRC = resolve(values.vault ?? join(import.meta.dir, "../../shared/corpora/obsidian-hub"));
const RUNS = Number(values.runs ?? 7);

const served = await serveVaultCopy(SRC, "lint");
const { root, vault, server, token, indexMs } = served;

async function time(fn: () => unknown | Promise<unknown>): Promise<{ med: number; min: number }> {
  await fn();
  const xs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn();
    xs.push(performance.now() - t0);
  }
  return { med: median(xs), min: Math.min(...xs) };
}

async function callTool(name: string, args: Record<string, unknown> = {}): Promise<number> {
  const res = await fetch(server.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
  });
  return (await res.text()).length;
}

const report = lintVault(vault.indexDb);
const byRule: Record<string, number> = {};
for (const f of report.findings) byRule[f.rule] = (byRule[f.rule] ?? 0) + 1;
// suggest_links on the five largest notes (the worst case for a mention scan).
const largest = (vault.indexDb.query("SELECT path FROM notes ORDER BY size DESC LIMIT 5").all() as { path: string }[]).map((r) => r.path);

const rows: [string, { med: number; min: number }][] = [
  ["lint (direct)", await time(() => lintVault(vault.indexDb))],
  ["wiki_health (direct)", await time(() => healthFrom(lintVault(vault.indexDb)))],
  ["lint tools/call over HTTP", await time(() => callTool("lint"))],
  ["wiki_health tools/call over HTTP", await time(() => callTool("wiki_health"))],
  ["suggest_links, 5 largest notes (each)", await time(() => largest.forEach((p) => suggestLinks(vault.indexDb, p, readFileSync(join(root, p), "utf8"))))],
  ["pending_directives tools/call", await time(() => callTool("pending_directives"))],
  ["agent_mentions tools/call", await time(() => callTool("agent_mentions"))],
  ["recent_activity tools/call", await time(() => callTool("recent_activity"))],
];
rows[4]![1] = { med: rows[4]![1].med / largest.length, min: rows[4]![1].min / largest.length };
const bytes = await callTool("lint");
const health = healthFrom(report);

await served.close();

console.log(`# Hygiene timings on ${SRC}\n`);
console.log(`${report.noteCount} notes, indexed in ${(indexMs / 1000).toFixed(2)} s; ${RUNS} runs each; load ${loadavg()}\n`);
console.log("| operation | median | min |");
console.log("| --- | --- | --- |");
for (const [name, r] of rows) console.log(`| ${name} | ${r.med.toFixed(1)} ms | ${r.min.toFixed(1)} ms |`);
console.log(`\nlint: ${report.findings.length} findings (${Object.entries(byRule).map(([r, n]) => `${r} ${n}`).join(", ")}); its default page (50 findings, per-rule counts) is ${(bytes / 1024).toFixed(0)} KB over HTTP.`);
console.log(`wiki_health: ${JSON.stringify(health)}`);
console.log("Goal: lint ≤ 1 s on obsidian-hub.");
