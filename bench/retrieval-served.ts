// Our question sets asked the way issue 11 checks them: through a real `lettuce serve`
// (built-in model, background embedding as shipped) and the semantic_search tool over
// MCP HTTP, on a fresh copy of the vault. bench/retrieval.ts calls retrieve() in process
// on cached vectors; this shows that a client sees the same figures, and how long a
// new user waits before the vault is fully embedded.
//
//   bun bench/retrieval-served.ts [--sets oh,oh-all,srd]
//
// Per set: the seconds from `serve` to every note embedded (get_vault_info's
// embedding.state "current"), then hit@5 per kind and half for semantic_search with
// hybrid on and off, and for the keyword `search` tool (its query syntax ANDs words, so it
// gets the question's words OR'd, as BM25 would). Obsidian Help takes ~2 minutes on a quiet
// 2-core machine, the SRD wiki ~8.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliToken, startServer, toolCaller } from "./lib/search-bench";
import { loadavg } from "./lib/stats";

// Fresh vaults, not the retrieval bench's cache: the point is what a new user gets.
const scratch = mkdtempSync(join(tmpdir(), "lettuce-served-"));
process.env.LETTUCE_BENCH_CACHE = scratch;
const { obsidianHelp, obsidianHelpAll, srdWiki } = await import("./lib/retrieval-data");

const sets = (() => {
  const i = process.argv.indexOf("--sets");
  return (i === -1 ? "oh" : process.argv[i + 1]!).split(",");
})();
const SETS = { oh: obsidianHelp, "oh-all": obsidianHelpAll, srd: srdWiki } as const;

type Tally = Map<string, [hits: number, of: number]>;

async function runSet(key: keyof typeof SETS): Promise<string[]> {
  const set = SETS[key]();
  const token = await cliToken(set.vault, "read", "served-bench");
  // As shipped, but with the per-token limit on model calls lifted: the bench asks ~200 questions a minute.
  const server = await startServer(set.vault, { LETTUCE_EMBED_PROVIDER: "builtin", LETTUCE_LLM_PROVIDER: "none", LETTUCE_MODEL_RATE_LIMIT: "100000" });
  const t0 = performance.now();
  try {
    const call = toolCaller(server.url, token);
    for (;;) {
      const info = await call("get_vault_info", {});
      if (info.embedding?.state === "current") break;
      await Bun.sleep(1000);
    }
    const embedS = (performance.now() - t0) / 1000;
    const systems: [string, (q: string) => Promise<string[]>][] = [
      ["semantic_search, hybrid", async (q) => (await call("semantic_search", { query: q, hybrid: true, limit: 5 })).items.map((i: { path: string }) => set.docOf(i.path))],
      ["semantic_search, vector", async (q) => (await call("semantic_search", { query: q, limit: 5 })).items.map((i: { path: string }) => set.docOf(i.path))],
      ["search, the words OR'd", async (q) => {
        const words = q.match(/[\p{L}\p{N}]+/gu) ?? [];
        return words.length ? (await call("search", { query: words.join(" OR "), limit: 5 })).items.map((i: { path: string }) => set.docOf(i.path)) : [];
      }],
    ];
    const out = [`### ${set.name} (${key}): fully embedded ${embedSeconds(embedS)} after \`serve\` started`, "", "| tool | report half hit@5 | keyword | paraphrase | detail | tuning half hit@5 | paraphrase |", "|---|---:|---:|---:|---:|---:|---:|"];
    for (const [name, run] of systems) {
      const tally: Tally = new Map();
      for (const q of set.queries) {
        const hit = (await run(q.text)).some((d) => q.relevant.has(d));
        for (const k of [`${q.half}`, `${q.half} ${q.kind}`]) {
          const t = tally.get(k) ?? [0, 0];
          tally.set(k, [t[0] + (hit ? 1 : 0), t[1] + 1]);
        }
      }
      const c = (k: string) => {
        const t = tally.get(k) ?? [0, 0];
        return `${t[0]}/${t[1]}`;
      };
      out.push(`| ${name} | ${c("report")} | ${c("report keyword")} | ${c("report paraphrase")} | ${c("report detail")} | ${c("tune")} | ${c("tune paraphrase")} |`);
    }
    return out;
  } finally {
    await server.stop();
  }
}

function embedSeconds(s: number): string {
  return s < 120 ? `${s.toFixed(0)} s` : `${(s / 60).toFixed(1)} min`;
}

const out = [`## Question sets through \`lettuce serve\` and semantic_search (load ${loadavg()} at start)`, ""];
try {
  for (const key of sets) {
    if (!(key in SETS)) throw new Error(`unknown set ${key}; use ${Object.keys(SETS).join(", ")}`);
    console.error(`[served] ${key}: copying, serving, waiting for the background build`);
    out.push(...(await runSet(key as keyof typeof SETS)), "");
  }
  out.push(`Load at end: ${loadavg()}.`);
  console.log(out.join("\n"));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(0);
