// Tool search accuracy: plain-language requests, each with the tool an agent
// should end up calling, run through the real catalogue (tools/index.ts) in
// fts, vector and hybrid mode; prints top-1 / top-3 accuracy and the misses.
// Goal: hybrid top-3 ≥ 90 %.
//
//   bun bench/tool-search.ts [--misses]
//
// Vectors come from the embeddings provider the environment selects
// (LETTUCE_EMBED_PROVIDER etc., as for `serve`; with nothing configured the
// built-in model). With LETTUCE_EMBED_PROVIDER=none only fts is measured.
// Requests for tools this build lacks (another branch's) are skipped and counted.
import { parseArgs } from "node:util";
import { ALL_TOOLS } from "../tools";
import { describeEmbedder, selectEmbedder } from "../lib/providers/select";
import { toolSearchIndex, ToolSearchIndex, type SearchMode } from "../lib/toolsearch";

// Written before the search hints (lib/toolsearch/hints.ts), in the words a
// person or an agent would use, avoiding each tool's own description.
export const REQUESTS: [string, string][] = [
  ["who links to this note", "list_backlinks"],
  ["change just one section of a page", "patch_section"],
  ["find notes about gardening in winter", "semantic_search"],
  ['look up the exact phrase "frost date"', "search"],
  ["which notes are tagged recipe", "notes_by_tag"],
  ["show all tags and how often they are used", "list_tags"],
  ["rename a page and fix the links pointing at it", "move_note"],
  ["throw away a note I no longer need", "delete_note"],
  ["fix a typo in one paragraph", "apply_edits"],
  ["create a brand new page", "write_note"],
  ["save this answer as a page with its sources", "file_page"],
  ["record what I did today in the log", "append_log"],
  ["what should I call first when I connect", "get_vault_info"],
  ["show me the headings of a long note without reading all of it", "read_outline"],
  ["open a note and read it", "read_note"],
  ["which pages does this note point to", "list_outgoing_links"],
  ["map the neighbourhood of a note two hops out", "link_graph"],
  ["notes similar to this one that are not linked yet", "related_notes"],
  ["are there notes that say the same thing twice", "find_duplicates"],
  ["group the vault into themes", "topic_map"],
  ["check the vault for broken links and orphans", "lint"],
  ["give me an overall quality score for the wiki", "wiki_health"],
  ["page names mentioned in the text that should be links", "suggest_links"],
  ["what was done recently according to the log", "recent_activity"],
  ["did anyone ask me for something with an at-mention", "agent_mentions"],
  ["tasks a human left for the AI in callouts", "pending_directives"],
  ["wait until someone gives me new work", "await_directives"],
  ["mark the task I was given as finished", "complete_directive"],
  ["status of my suggested changes waiting for review", "list_my_proposals"],
  ["cancel a change I proposed", "withdraw_proposal"],
  ["what columns does this table have", "get_database_schema"],
  ["list the rows of the Tasks database where status is done", "query_database"],
  ["what changed since yesterday", "get_changes_since"],
  ["who has access to this vault", "list_members"],
  ["which tools did agents call and which of them failed", "query_audit_log"],
  ["show me the images and PDFs in the vault", "list_attachments"],
  ["get the picture file as base64", "read_attachment"],
  ["list every folder", "list_folders"],
  ["list the notes in the Inbox folder", "list_notes"],
  ["refresh the embeddings after a big import", "reindex_embeddings"],
  ["measure how good retrieval is on my test questions", "eval"],
  ["which tool should I use to edit notes", "search_tools"],
  // Tools of the workspace-read branch (skipped until it is merged).
  ["gather the context I need before starting a coding task", "prepare_context"],
  ["fetch several pages at once by their ids", "get_pages"],
  ["search pages and database rows by title or words in them", "search_workspace"],
  ["what pages are related to this one", "get_related_pages"],
];

// Written after the hints, and not tuned on: how well the hints generalise.
export const HELD_OUT: [string, string][] = [
  ["who references the page about compost", "list_backlinks"],
  ["replace the paragraph under the Installation heading", "patch_section"],
  ["search for notes containing the word kubernetes", "search"],
  ["move this note into the Archive folder", "move_note"],
  ["remove the draft note", "delete_note"],
  ["add a new recipe note", "write_note"],
  ["get the table of contents of a note", "read_outline"],
  ["has anything been edited since my last run", "get_changes_since"],
  ["which token holders exist and what can they do", "list_members"],
  ["show failed tool calls from today", "query_audit_log"],
  ["filter the reading list base by author", "query_database"],
  ["properties available in the projects base", "get_database_schema"],
  ["is there work assigned to me in the notes", "pending_directives"],
  ["notes that nobody links to", "lint"],
  ["list all attachments in the assets folder", "list_attachments"],
  ["find conceptually related notes to a question", "semantic_search"],
  ["replace one word in a note", "apply_edits"],
  ["how many notes carry each tag", "list_tags"],
  ["show the link network around the roadmap", "link_graph"],
  ["tell the person I finished the callout task", "complete_directive"],
];

const { values } = parseArgs({ options: { misses: { type: "boolean" } } });
const present = new Set(ALL_TOOLS.map((t) => t.name));
const sets = { main: REQUESTS.filter(([, tool]) => present.has(tool)), "held-out": HELD_OUT.filter(([, tool]) => present.has(tool)) };
const skipped = REQUESTS.length + HELD_OUT.length - sets.main.length - sets["held-out"].length;

const sel = await selectEmbedder();
const modes: SearchMode[] = sel.provider ? ["fts", "vector", "hybrid"] : ["fts"];
const records = toolSearchIndex().records;
const embedder = async () => sel.provider;

console.log(`# Tool search accuracy (rough; ${new Date().toISOString().slice(0, 10)}, 2 shared cores)\n`);
console.log(`${records.length} tools in the catalogue; ${sets.main.length} requests + ${sets["held-out"].length} held out${skipped ? ` (${skipped} skipped: their tool is not in this build)` : ""}.`);
console.log(`Embeddings: ${sel.provider ? describeEmbedder(sel.provider) : `none (${sel.reason})`}\n`);
console.log("| set | mode | top-1 | top-3 | ms per query (p50) |");
console.log("| --- | --- | --- | --- | --- |");
const missLines: string[] = [];
for (const [set, cases] of Object.entries(sets)) for (const mode of modes) {
  // A fresh index per run, so that no query vector is cached from another mode; the warm-up
  // pays the model load and the catalogue's embedding, which are once per process, not per query.
  const index = new ToolSearchIndex(records);
  if (mode !== "fts") await index.search({ query: "warm up", search_mode: mode, limit: 3 }, "write", embedder);
  let top1 = 0;
  let top3 = 0;
  const times: number[] = [];
  for (const [query, want] of cases) {
    const t0 = performance.now();
    const res = await index.search({ query, search_mode: mode, limit: 10 }, "write", embedder);
    times.push(performance.now() - t0);
    const names = res.map((r) => r.tool.name);
    if (names[0] === want) top1++;
    if (names.slice(0, 3).includes(want)) top3++;
    else missLines.push(`- ${set} ${mode}: "${query}" → want ${want}, got ${names.slice(0, 3).join(", ") || "(nothing)"}${names.includes(want) ? ` (rank ${names.indexOf(want) + 1})` : ""}`);
  }
  times.sort((a, b) => a - b);
  const pct = (n: number) => `${((100 * n) / cases.length).toFixed(1)} % (${n}/${cases.length})`;
  console.log(`| ${set} | ${mode} | ${pct(top1)} | ${pct(top3)} | ${times[Math.floor(times.length / 2)]!.toFixed(2)} |`);
}
if (values.misses && missLines.length) console.log(`\nMisses (not in the top 3):\n${missLines.join("\n")}`);
process.exit(0);
