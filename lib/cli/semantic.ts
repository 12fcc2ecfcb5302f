// Semantic commands: `lettuce embed`, `lettuce related`, `lettuce eval`, and the
// semantic half of `lettuce search --semantic|--hybrid`.
import { describeEmbedder } from "../providers/select";
import { findNoteLikeLink } from "../retrieval/notes";
import { readQuestions, runEval } from "../answer/eval";
import { relatedNotes } from "../semantic/related";
import { semanticSearch, type SemanticHit } from "../semantic/search";
import { SemanticService } from "../semantic/service";
import type { VaultContext } from "../vault-context";
import { intOption, parse, UsageError, type Command } from "./command";
import { openIndexed } from "./index-search";
import { indexProgress } from "./progress";
import { shownInTerminal } from "../control-chars";
import { liveServer, type ServerPresence } from "../store/presence";
import { envNumber, MAX_TIMER_MS } from "../env-number";

/** Run an embedding pass with a progress bar at a terminal (plain lines every 10 s elsewhere), unless quiet. */
async function withProgress<T>(quiet: boolean, pass: (onProgress: (done: number, total: number) => void) => Promise<T>): Promise<T> {
  const bar = quiet ? null : indexProgress("Embedding", { plainEveryMs: 10_000 });
  try {
    return await pass((done, total) => bar?.update({ state: "scanning", done, total, indexedAt: null }));
  } finally {
    bar?.stop();
  }
}

const FOLLOW_POLL_MS = 500;
// A server whose background pass stopped (a model error) keeps its backlog until the watcher sees a change:
// after this long with no note embedded, this command stops waiting and embeds the rest itself. (A note
// counts once all its passages are in: one of thousands of passages on a slow model can take this long,
// and then both embed what is left: double work, nothing wrong.)
const followStallMs = () => envNumber("LETTUCE_EMBED_FOLLOW_STALL_MS", 120_000, { min: 1000, max: MAX_TIMER_MS });

/** The vault's running server, when it embeds in the background with the model this command would use. */
async function embeddingServer(vault: VaultContext): Promise<ServerPresence | null> {
  const server = liveServer(vault.root);
  if (!server?.embedder) return null;
  return (await SemanticService.for(vault).embedder()).id === server.embedder ? server : null;
}

/**
 * Wait while the vault's server embeds with the same model (both embedding would send every passage to
 * the model twice, each process at half speed), with its progress. The server, once the vectors are
 * current; null when there is no such server or it stopped first (this command embeds what is left itself).
 */
async function followServer(vault: VaultContext, quiet: boolean): Promise<ServerPresence | null> {
  const server = await embeddingServer(vault);
  if (!server) return null;
  const svc = SemanticService.for(vault);
  const provider = await svc.embedder();
  if (svc.pendingNotes(provider) === 0) return server;
  console.error(`The server at ${server.url} (pid ${server.pid}) embeds this vault with the same model; waiting for it.`);
  const done = await withProgress(quiet, async (onProgress) => {
    const total = svc.pendingNotes(provider);
    let before = total;
    let movedAt = performance.now();
    for (;;) {
      const left = svc.pendingNotes(provider);
      onProgress(total - Math.min(left, total), total);
      if (left === 0) return true;
      // Progress since the last look (new changes may have raised the count meanwhile).
      if (left < before) movedAt = performance.now();
      before = left;
      if (liveServer(vault.root)?.pid !== server.pid) return false;
      if (performance.now() - movedAt > followStallMs()) {
        console.error(`The server has embedded no note for ${Math.round(followStallMs() / 1000)} s; embedding the rest here.`);
        return false;
      }
      await Bun.sleep(FOLLOW_POLL_MS);
    }
  });
  return done ? server : null;
}

/** Bring the vectors up to date (at a terminal, waiting beats index-not-ready), or wait for the server that does. */
async function embedAll(vault: VaultContext, quiet = false) {
  await followServer(vault, quiet);
  return withProgress(quiet, (onProgress) => SemanticService.for(vault).reindex(onProgress));
}

/** Run a command body, then let background embedding settle and close the vault (runCli reports tool errors). */
async function guarded(vault: VaultContext, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } finally {
    await SemanticService.for(vault).idle();
    vault.close();
  }
}

function printHits(items: SemanticHit[], score: string): void {
  if (!items.length) console.log("No matches.");
  else console.log(`Best first (score: ${score}, higher is better)`);
  for (const h of items) console.log(`${shownInTerminal(h.path)}  (${h.score.toFixed(3)})\n    ${shownInTerminal(h.snippet.replace(/\s+/g, " ").slice(0, 200))}`);
}

export const embedCommand: Command = {
  name: "embed",
  summary: "Embed new and changed notes for semantic search, prune deleted ones",
  usage: [
    "lettuce embed <vault> [--rebuild] [--json]",
    "",
    "Indexes the vault, then embeds the passages of new and changed notes (vectors already in",
    ".lettuce/embeddings.db are reused) and drops deleted notes' vectors. --rebuild forgets this",
    "model's vectors and embeds everything again (for a model whose weights changed under the",
    "same name). The provider comes from LETTUCE_EMBED_PROVIDER (see docs/semantic.md). When",
    "`lettuce serve` runs on the vault and embeds with the same model, this waits for it (showing its",
    "progress) instead of sending the same passages to the model again; --rebuild then refuses.",
  ].join("\n"),
  async run(argv) {
    const { values, positionals } = parse(argv, { json: { type: "boolean" }, rebuild: { type: "boolean" } });
    if (positionals.length !== 1) throw new UsageError("embed takes exactly one vault path");
    const vault = await openIndexed(positionals[0], !!values.json);
    return guarded(vault, async () => {
      const svc = SemanticService.for(vault);
      const provider = await svc.embedder();
      const t0 = performance.now();
      if (values.rebuild) {
        const server = await embeddingServer(vault);
        if (server) {
          console.error(`lettuce: the server at ${server.url} (pid ${server.pid}) embeds this vault with this model; stop it before --rebuild`);
          return 1;
        }
      }
      const followed = values.rebuild ? null : await followServer(vault, !!values.json);
      const r = await withProgress(!!values.json, async (onProgress) => (values.rebuild ? { ...(await svc.rebuild(onProgress)), cachePruned: 0 } : svc.reindex(onProgress)));
      const summary = { ...r, model: provider.id, ms: Math.round(performance.now() - t0), ...(followed ? { embeddedByServer: followed.pid } : {}) };
      if (values.json) console.log(JSON.stringify(summary));
      else {
        if (followed) console.log(`The server (pid ${followed.pid}) keeps this vault's vectors current; what it had left is embedded.`);
        console.log(`Embedded ${r.notes} notes (${r.passages} passages, ${r.embedded} by the model, the rest from the cache) with the ${describeEmbedder(provider)} in ${summary.ms} ms`);
        if (r.pruned) console.log(`Dropped the vectors of ${r.pruned} deleted notes.`);
      }
      return 0;
    });
  },
};

export const relatedCommand: Command = {
  name: "related",
  summary: "Notes related in meaning to a note and not yet linked with it",
  usage: [
    "lettuce related <vault> <note> [--limit N] [--json]",
    "",
    "Like the related_notes tool: nearest notes by meaning, excluding notes already linked either way.",
    'The note is a path ("Concepts/Embeddings.md") or a name as in a wikilink ("Embeddings", an alias).',
  ].join("\n"),
  async run(argv) {
    const { values, positionals } = parse(argv, { json: { type: "boolean" }, limit: { type: "string" } });
    if (positionals.length !== 2) throw new UsageError("related needs a vault and a note (a path or a name)");
    const vault = await openIndexed(positionals[0], true);
    return guarded(vault, async () => {
      const note = findNoteLikeLink(vault.indexDb, vault.root, vault.indexer.resolver, positionals[1]!);
      await embedAll(vault, !!values.json);
      const res = await relatedNotes(SemanticService.for(vault), note, intOption(values.limit, "limit", 5, 1));
      if (values.json) console.log(JSON.stringify(res));
      else printHits(res.items, "cosine similarity");
      return 0;
    });
  },
};

export const evalCommand: Command = {
  name: "eval",
  summary: "Score retrieval against the vault's eval/questions.jsonl",
  usage: [
    "lettuce eval <vault> [--k N] [--json]",
    "",
    'Reads eval/questions.jsonl (one {"question", "expected_paths", "must_contain"} per line) and',
    "prints recall@k, precision@k, MRR and hit rate (and faithfulness with an LLM provider).",
  ].join("\n"),
  async run(argv) {
    const { values, positionals } = parse(argv, { json: { type: "boolean" }, k: { type: "string" } });
    if (positionals.length !== 1) throw new UsageError("eval takes exactly one vault path");
    const k = intOption(values.k, "k", 6, 1);
    if (k < 1) throw new UsageError("--k must be at least 1");
    const vault = await openIndexed(positionals[0], true);
    return guarded(vault, async () => {
      // A missing or malformed question file is said before the vault is embedded (minutes on a large one), not after.
      const questions = readQuestions(vault.root);
      const svc = SemanticService.for(vault);
      if (await svc.hasEmbedder()) await embedAll(vault, !!values.json);
      const r = await runEval(svc, k, { questions });
      if (values.json) {
        console.log(JSON.stringify(r));
        return 0;
      }
      for (const q of r.perQuestion) {
        const mark = q.hit ? "hit " : "miss";
        console.log(`${mark}  rr ${q.reciprocalRank.toFixed(2)}  ${q.question}`);
        if (!q.hit) console.log(`      expected ${q.expected.join(", ")}; got ${q.retrieved.slice(0, 3).join(", ") || "nothing"}`);
      }
      const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
      console.log(
        `\n${r.count} questions, ${r.retrieval} retrieval, k = ${r.k}: recall ${pct(r.recallAtK)}, precision ${pct(r.precisionAtK)}, MRR ${r.mrr.toFixed(3)}, hit rate ${pct(r.hitRate)}` +
          (r.faithfulnessRate === null ? " (no LLM provider: faithfulness not scored)" : `, faithfulness ${pct(r.faithfulnessRate)}`),
      );
      return 0;
    });
  },
};

/** `lettuce search --semantic|--hybrid`: embeds what is stale (with progress), then searches. */
export async function semanticSearchCli(dir: string, query: string, opts: { hybrid: boolean; limit: number; json: boolean }): Promise<number> {
  const vault = await openIndexed(dir, true);
  return guarded(vault, async () => {
    await embedAll(vault, opts.json);
    const res = await semanticSearch(SemanticService.for(vault), { query, hybrid: opts.hybrid, limit: opts.limit });
    if (opts.json) console.log(JSON.stringify(res));
    else printHits(res.items, opts.hybrid ? "fused rank score" : "cosine similarity");
    return 0;
  });
}
