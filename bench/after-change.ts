// What each read tool costs the request thread right after the vault changed. Caches kept per index
// generation (tag counts, every title folded, a base's rows) are made again on the first call after a
// change, and a person typing in a synced note changes the vault every few seconds: a cache rebuilt on
// the event loop then stalls every other caller each time. For each tool: five rounds of (a note
// written and indexed, then the call), with a 1 ms timer on the request thread recording its longest
// pause during the call. The vault is copied to a temp dir with a base over every note (the costliest
// case for the database tools). Goal: no tool pauses the request thread past ~50 ms. Last, the change
// journal's catch-up with the whole index (after every full scan, and a vault's first serve), joined by a feed read.
//
//   bun bench/after-change.ts [--vault PATH] [--quick]   (default: ../shared/corpora/obsidian-hub; --quick: 3 rounds)
//
// In-process (the MCP client shares the thread; its share is a small JSON parse per call). The 100k
// vault of bench/scale.ts: --vault /tmp/lettuce-bench-scale/gen-100000-seed7 (copied first: ~1 min).
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { startTestServer } from "../tests/helpers/server";
import { fmtMs, loadavg, machineNotes, median } from "./lib/stats";

const { values } = parseArgs({ options: { vault: { type: "string" }, quick: { type: "boolean" } } });
const ROUNDS = values.quick ? 3 : 5;
const source = resolve(values.vault ?? join(import.meta.dir, "../../shared/corpora/obsidian-hub"));
if (!existsSync(source)) {
  console.log(`skip: no vault at ${source} (pass --vault PATH)`);
  process.exit(0);
}
process.env.LETTUCE_EMBED_PROVIDER ??= "none";

const dir = mkdtempSync(join(tmpdir(), "lettuce-after-change-"));
const root = join(dir, "vault");
cpSync(source, root, { recursive: true, filter: (s) => !s.includes("/.lettuce") });
mkdirSync(join(root, "Bench"), { recursive: true });
writeFileSync(join(root, "Bench/Every note.base"), "views:\n  - type: table\n    name: All\n");

const s = await startTestServer({ root });
const notes = s.vault.indexDb.query("SELECT path FROM notes ORDER BY length(path), path LIMIT 1").get() as { path: string };
const page = notes.path;
// A word of a title a few notes in (a real word, found by search and search_workspace alike).
const titles = s.vault.indexDb.query("SELECT title FROM notes ORDER BY id LIMIT 200").all() as { title: string }[];
const word = titles.flatMap((t) => t.title.split(/\s+/)).find((w) => /^[a-z]{5,}$/i.test(w)) ?? "note";
// The note most linked to: its backlinks are the longest list.
const linked = (s.vault.indexDb.query("SELECT n.path FROM notes n JOIN links l ON l.resolved = n.path GROUP BY n.path ORDER BY count(*) DESC LIMIT 1").get() as { path: string } | null)?.path ?? page;
// The most used tag and the fullest folder: the lists that sort the most notes.
const commonTag = (s.vault.indexDb.query("SELECT tag_lc FROM tags GROUP BY tag_lc ORDER BY count(*) DESC LIMIT 1").get() as { tag_lc: string } | null)?.tag_lc ?? "none";
const bigFolder = (s.vault.indexDb.query("SELECT folder FROM notes WHERE folder != '' GROUP BY folder ORDER BY count(*) DESC LIMIT 1").get() as { folder: string } | null)?.folder ?? "";
const CALLS: [string, Record<string, unknown>][] = [
  ["search", { query: word }],
  ["list_notes", {}],
  ["read_note", { path: page }],
  ["link_graph", { path: page, depth: 2 }],
  ["list_tags", {}],
  ["notes_by_tag", { tag: commonTag }],
  ["list_notes", { path: bigFolder }],
  ["list_folders", {}],
  ["lint", { limit: 100 }],
  ["wiki_health", {}],
  ["search_workspace", { query: word }],
  ["search_workspace", { query: "zzqxj" }], // found nowhere: the substring fallback
  ["list_workspace", {}],
  ["list_workspace", { parentId: bigFolder, limit: 500 }], // its largest page, every item classified
  ["get_page", { pageId: page }],
  ["get_pages", { pageIds: [page] }],
  ["get_related_pages", { pageId: page }],
  ["prepare_context", { task: `notes about ${word}` }],
  ["get_database_schema", { databaseId: "Bench/Every note.base" }],
  ["query_database", { databaseId: "Bench/Every note.base" }],
  ["get_changes_since", {}],
  ["get_vault_info", {}],
  ["list_attachments", {}],
  ["list_backlinks", { path: linked }],
  ["list_outgoing_links", { path: page }],
  ["read_outline", { path: page }],
  ["suggest_links", { path: page }],
  ["recent_activity", {}],
  ["agent_mentions", {}],
  ["pending_directives", {}],
  ["list_members", {}],
  ["query_audit_log", {}],
  ["list_my_proposals", {}],
  ["search_tools", { query: "find notes about a topic" }],
  ["resources/read", { uri: "lettuce://digest" }], // the digest resource, not a tool
];

let worst = 0;
let last = performance.now();
const timer = setInterval(() => {
  const now = performance.now();
  worst = Math.max(worst, now - last - 1);
  last = now;
}, 1);

const rows: { tool: string; call: number; pause: number }[] = [];
for (const [tool, args] of CALLS) {
  const took: number[] = [];
  const pauses: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    writeFileSync(join(root, "Bench/Scratch.md"), `# Scratch ${i}\n\n${tool} ${Date.now()}\n`);
    await s.vault.indexer.update(["Bench/Scratch.md"]);
    await Bun.sleep(20);
    worst = 0;
    last = performance.now();
    const t0 = performance.now();
    if (tool === "resources/read") await (await s.rpc({ jsonrpc: "2.0", id: i, method: tool, params: args })).text();
    else await s.call(tool, args, "write"); // the scope that may call every tool listed
    took.push(performance.now() - t0);
    await Bun.sleep(5);
    pauses.push(worst);
  }
  rows.push({ tool: `${tool} ${JSON.stringify(args)}`.slice(0, 60), call: median(took), pause: Math.max(...pauses) });
}
// The change journal's catch-up with the whole index, which follows every full scan (unchanged: the start-up
// scan of a restart) and, with an empty journal, a vault's first serve (every note recorded once). Joined by a
// feed read, as when an agent syncs right after start-up.
const journalRows = () => (s.vault.stateDb.query("SELECT count(*) AS n FROM change_journal").get() as { n: number }).n;
for (const [label, empty] of [["unchanged", false], ["the journal emptied first (a first serve)", true]] as const) {
  const took: number[] = [];
  const pauses: number[] = [];
  for (let i = 0; i < (empty ? 1 : ROUNDS); i++) {
    if (empty) s.vault.stateDb.exec("DELETE FROM change_journal");
    await s.vault.indexer.fullScan();
    worst = 0;
    last = performance.now();
    const t0 = performance.now();
    await s.call("get_changes_since", { limit: 1 }, "read");
    took.push(performance.now() - t0);
    await Bun.sleep(5);
    pauses.push(worst);
  }
  rows.push({ tool: `journal catch-up, ${label}: ${journalRows()} rows`, call: median(took), pause: Math.max(...pauses) });
}
clearInterval(timer);
await s.close();
rmSync(dir, { recursive: true, force: true });

console.log(`\n#### The request thread right after a change: ${source} (${new Date().toISOString().slice(0, 16)}Z, load ${loadavg()})\n`);
console.log(`${machineNotes()}\n`);
console.log(`| call (after a note was written) | call, median of ${ROUNDS} | worst pause of the request thread |`);
console.log("|---|---:|---:|");
for (const r of rows) console.log(`| ${r.tool.replace(/\|/g, "\\|")} | ${fmtMs(r.call)} | ${fmtMs(r.pause)} |`);
