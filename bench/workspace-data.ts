// Figures for the workspace-data tools on a real vault (default: a copy of
// ../shared/corpora/obsidian-hub, 6,571 notes): what the audit log adds to a
// call, and the size and time of the default answers of query_database,
// get_database_schema, get_changes_since, the digest and search_tools (the
// 32 KB payload rule). Rough: 2 shared cores.
//
//   bun bench/workspace-data.ts [--vault PATH] [--calls N]
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { AuditLog } from "../lib/audit/log";
import { changeJournal } from "../lib/changes/journal";
import { journalDiff } from "../lib/changes/diff";
import { serveVaultCopy } from "./lib/served-vault";
import { fmtMs, loadavg, median, percentile } from "./lib/stats";

const { values } = parseArgs({ options: { vault: { type: "string" }, calls: { type: "string" } } });
const SRC = resolve(values.vault ?? join(import.meta.dir, "../../shared/corpora/obsidian-hub"));
const CALLS = Number(values.calls ?? 2000);
process.env.LETTUCE_EMBED_PROVIDER ??= "none";

const served = await serveVaultCopy(SRC, "workspace-data");
const { root, vault, server, token } = served;
const noteCount = (vault.indexDb.query("SELECT count(*) AS n FROM notes").get() as { n: number }).n;
console.log(`# Workspace-data figures (rough; ${new Date().toISOString().slice(0, 10)}, load ${loadavg()})\n`);
console.log(`Vault: ${SRC} (${noteCount} notes), indexed in ${fmtMs(served.indexMs)}.\n`);

// A base over every note, and one over a folder, written as Obsidian writes them.
const firstFolder = (vault.indexDb.query("SELECT folder FROM notes WHERE folder <> '' GROUP BY folder ORDER BY count(*) DESC LIMIT 1").get() as { folder: string } | null)?.folder ?? "";
writeFileSync(join(root, "Everything.base"), "views:\n  - type: table\n    name: All\n");
writeFileSync(join(root, "Folder.base"), `filters:\n  and:\n    - file.inFolder("${firstFolder}")\n    - 'file.ext == "md"'\n`);
await vault.indexer.update(["Everything.base", "Folder.base"]);

async function rpc(name: string, args: Record<string, unknown>): Promise<{ ms: number; bytes: number }> {
  const t0 = performance.now();
  const res = await fetch(server.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: name.includes("/") ? name : "tools/call", params: name.includes("/") ? args : { name, arguments: args } }),
  });
  const body = (await res.json()) as { result?: { content?: { text: string }[]; contents?: { text: string }[] } };
  const text = body.result?.content?.[0]?.text ?? body.result?.contents?.[0]?.text ?? "";
  return { ms: performance.now() - t0, bytes: Buffer.byteLength(text) };
}

// 1. What recording adds to a call: record() itself, and a cheap call with and without it.
const log = new AuditLog(vault.stateDb);
const rec: number[] = [];
for (let i = 0; i < CALLS; i++) {
  const t0 = performance.now();
  log.record({ tool: "read_note", ok: i % 7 !== 0, kind: "note-not-found", args: { path: `Folder/Note ${i}.md`, content: "x" }, agent: "bench", tokenName: "bench" });
  rec.push(performance.now() - t0);
}
const f0 = performance.now();
log.flush();
const flushMs = performance.now() - f0;
log.close();

// A cheap tool (list_members: one small query), with and without recording, interleaved in
// blocks of 50 so that the machine's load drifts over both alike.
const original = AuditLog.prototype.record;
const withAudit: number[] = [];
const withoutAudit: number[] = [];
for (let block = 0; block < CALLS / 50; block++) {
  const on = block % 2 === 0;
  AuditLog.prototype.record = on ? original : () => {};
  for (let i = 0; i < 50; i++) {
    const t0 = performance.now();
    await served.server.mcp.handle({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "list_members", arguments: {} } }, { token: { name: "bench", scope: "read" } });
    if (block >= 2) (on ? withAudit : withoutAudit).push(performance.now() - t0);
  }
}
AuditLog.prototype.record = original;

console.log("## Audit log\n");
console.log("| measure | p50 | p99 |");
console.log("| --- | --- | --- |");
console.log(`| AuditLog.record() (buffer push + target) | ${(median(rec) * 1000).toFixed(2)} µs | ${(percentile(rec, 99) * 1000).toFixed(2)} µs |`);
console.log(`| flush of ${CALLS} buffered rows (one transaction) | ${fmtMs(flushMs)} total, ${((flushMs / CALLS) * 1000).toFixed(1)} µs a row | |`);
console.log(`| list_members via the dispatcher, audit on | ${fmtMs(median(withAudit))} | ${fmtMs(percentile(withAudit, 99))} |`);
console.log(`| list_members via the dispatcher, audit off | ${fmtMs(median(withoutAudit))} | ${fmtMs(percentile(withoutAudit, 99))} |`);
console.log(`| added at p50 | ${((median(withAudit) - median(withoutAudit)) * 1000).toFixed(1)} µs | |\n`);

// 2. Default answers: size and time (first call, then the median of 5 warm ones).
console.log("## Default answers (HTTP, read token)\n");
console.log("| call | bytes | first | warm p50 |");
console.log("| --- | --- | --- | --- |");
const cases: [string, string, Record<string, unknown>][] = [
  ["query_database (all notes, 50 rows)", "query_database", { databaseId: "Everything.base" }],
  [`query_database (${firstFolder}/)`, "query_database", { databaseId: "Folder.base" }],
  ["query_database with content, limit 50", "query_database", { databaseId: "Folder.base", fields: ["content"] }],
  ["get_database_schema (all notes)", "get_database_schema", { databaseId: "Everything.base" }],
  ["get_changes_since (bootstrap page)", "get_changes_since", {}],
  ["digest page 1", "resources/read", { uri: "lettuce://digest" }],
  ["search_tools (fts)", "search_tools", { query: "who links to this note", search_mode: "fts" }],
  ["list_members", "list_members", {}],
  ["query_audit_log", "query_audit_log", {}],
];
for (const [label, name, args] of cases) {
  const first = await rpc(name, args);
  const warm: number[] = [];
  for (let i = 0; i < 5; i++) warm.push((await rpc(name, args)).ms);
  console.log(`| ${label} | ${first.bytes.toLocaleString("en-US")} | ${fmtMs(first.ms)} | ${fmtMs(median(warm))} |`);
}
const page1 = await fetch(server.url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "lettuce://digest" } }) }).then((r) => r.text());
const pages = /page 2 of (\d+)/.exec(page1)?.[1];
const j0 = performance.now();
const written = await changeJournal(vault).reconcile(async () => journalDiff(vault.indexDb, vault.stateDbNoSync));
console.log(`\nDigest pages: ${pages ?? "1"}. A full journal reconcile over the index (as after each start-up scan) took ${fmtMs(performance.now() - j0)} and recorded ${written} changes.`);

await served.close();
process.exit(0);
