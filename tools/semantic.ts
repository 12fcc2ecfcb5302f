// The semantic tools: meaning-based search, related notes, duplicates, topics,
// the embedding reconcile, and retrieval evaluation. The work lives in lib/semantic/.
import { z } from "zod";
import { findNote } from "../lib/retrieval/notes";
import { chatAnswers } from "../lib/providers/probe";
import { selectChat } from "../lib/providers/select";
import { runEval } from "../lib/answer/eval";
import { relatedNotes } from "../lib/semantic/related";
import { semanticSearch } from "../lib/semantic/search";
import { SemanticService } from "../lib/semantic/service";
import { findDuplicates, topicMap } from "../lib/semantic/topics";
import { ALL_SCOPES, defineTool, limitField, notePathField, offsetField, READ_ONLY, type ToolContext } from "./types";
import { contributeVaultInfo } from "./vault-info";
import { envNumber, MAX_TIMER_MS } from "../lib/env-number";

/** The vault's semantic service, after the per-token rate limit for model-spending calls. */
function service(ctx: ToolContext, tool: string): SemanticService {
  const svc = SemanticService.for(ctx.vault);
  svc.limiter.take(ctx.token.name, tool);
  return svc;
}


export const semanticSearchTool = defineTool({
  name: "semantic_search",
  description: "Search by meaning (\"notes about X\"); hybrid adds keyword ranking (usually best). {items: [{path, title, snippet, score}], total}. Needs embeddings.",
  details: "Search notes by meaning, not just keyword overlap: embeds the query and ranks notes by the cosine similarity of their best passage. Use search for exact terms, this for \"notes about X\". hybrid fuses the vector ranking with BM25 over any of the query's words (reciprocal-rank fusion of the two rankings) and is usually best; prefer_recent gently favours recently edited notes (a note's score loses up to a quarter with age, half of that after 90 days); expand adds LLM query expansion (a hypothetical answer and paraphrases; needs an LLM provider). Returns {items: [{path, title, snippet, score}], total, offset, limit}, best first; the snippet is the best-matching passage; score is the cosine similarity, or the fused score with hybrid (higher = better). Needs an embeddings provider (the built-in model works offline; Ollama or any OpenAI-compatible endpoint if configured); without one it fails with kind not-configured. A changed note is re-embedded before the call answers; while a large backlog (the first build of a big vault) is embedded in the background it answers from the notes embedded so far, with partial: true and progress {notesEmbedded, notesTotal, passagesLeft, passagesPerSecond, etaSeconds}. Parameters: query: What you are looking for, in words or as a question; hybrid: Fuse vector and keyword (BM25) rankings; usually the best results; prefer_recent: Down-weight notes not edited for a while; expand: LLM query expansion (HyDE + paraphrases) for recall; needs an LLM provider; limit: Maximum items to return (default 20, max 100); offset: Items to skip, for paging (default 0).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  longRunning: true, // may embed the vault first (docs/security.md: no time budget)
  input: z.object({
    query: z.string().min(1).max(2000),
    hybrid: z.boolean().default(false).describe("Add keyword ranking (usually best)"),
    prefer_recent: z.boolean().default(false).describe("Favour recently edited notes"),
    expand: z.boolean().default(false).describe("LLM query expansion (needs an LLM)"),
    limit: limitField(20, 100),
    offset: offsetField,
  }),
  async handler({ query, hybrid, prefer_recent, expand, limit, offset }, ctx) {
    const svc = service(ctx, "semantic_search");
    const { items, total, ...partial } = await semanticSearch(svc, { query, hybrid, preferRecent: prefer_recent, expand, limit, offset, signal: ctx.signal });
    return { items, total, offset, limit, ...partial };
  },
});

export const relatedNotesTool = defineTool({
  name: "related_notes",
  description: "Notes closest in meaning to a note and not linked with it: link candidates. Needs embeddings.",
  details: "Notes nearest in meaning to a given note that it is not already linked with (in either direction): candidates to link, to thread a page into the graph (suggest_links finds literal name mentions instead). Returns {items: [{path, title, snippet, score}], total, offset, limit}; score is the cosine similarity of the notes' vectors; the snippet is the neighbour's passage closest to the note. Needs an embeddings provider (the built-in model works offline; Ollama or any OpenAI-compatible endpoint if configured); without one it fails with kind not-configured. A changed note is re-embedded before the call answers; while a large backlog (the first build of a big vault) is embedded in the background it answers from the notes embedded so far, with partial: true and progress {notesEmbedded, notesTotal, passagesLeft, passagesPerSecond, etaSeconds}. Parameters: path: Vault-relative path of the note, with its .md extension, e.g. \"Projects/Lettuce.md\"; limit: Maximum items to return (default 5, max 100); offset: Items to skip, for paging (default 0).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  longRunning: true, // may embed the vault first (docs/security.md: no time budget)
  input: z.object({ path: notePathField, limit: limitField(5, 100), offset: offsetField }),
  async handler({ path, limit, offset }, ctx) {
    const note = findNote(ctx.vault.indexDb, ctx.vault.root, path);
    const svc = service(ctx, "related_notes");
    const { items, total, ...partial } = await relatedNotes(svc, note, limit, offset);
    return { items, total, offset, limit, ...partial };
  },
});

export const findDuplicatesTool = defineTool({
  name: "find_duplicates",
  description: "Near-duplicate note pairs (0.9 = near-copy): [{pathA, pathB, similarity}]. Needs embeddings.",
  details: "Near-duplicate notes: every pair whose note vectors have a similarity (cosine after centring on the vault mean) of at least threshold (default 0.9), highest first, as [{pathA, pathB, similarity}]. Merge candidates for a health pass. Large vaults are searched by bucketing similar notes rather than comparing every pair. Needs an embeddings provider (the built-in model works offline; Ollama or any OpenAI-compatible endpoint if configured); without one it fails with kind not-configured. A changed note is re-embedded before the call answers; while a large backlog (the first build of a big vault) is embedded in the background it fails with kind index-not-ready and the progress (its bare array could not say it was partial); call again when get_vault_info.embedding.state is current. Parameters: threshold: Similarity cutoff, 0-1 (default 0.9 = near-duplicate); limit: Maximum items to return (default 100, max 5000).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  longRunning: true, // may embed the vault first (docs/security.md: no time budget)
  input: z.object({
    threshold: z.number().min(0).max(1).default(0.9).describe("Similarity cutoff, 0–1"),
    limit: limitField(100, 5000),
  }),
  async handler({ threshold, limit }, ctx) {
    return findDuplicates(service(ctx, "find_duplicates"), threshold, limit, ctx.signal);
  },
});

export const topicMapTool = defineTool({
  name: "topic_map",
  description: "Clusters of similar notes and those lacking a hub page: {clusters, missingHubs}. Needs embeddings.",
  details: "Cluster the vault into topics by embedding similarity (notes joined when their similarity, centred cosine, reaches threshold) and flag clusters without a hub page. Returns {clusters, missingHubs}; each cluster is {notes, size, hasHub, sharedTags}: hasHub means some member is linked to by at least two other members; sharedTags are tags carried by at least half of the members. missingHubs are the clusters with no hub: create an index/MOC page named from sharedTags and link the notes in. Needs an embeddings provider (the built-in model works offline; Ollama or any OpenAI-compatible endpoint if configured); without one it fails with kind not-configured. A changed note is re-embedded before the call answers; while a large backlog (the first build of a big vault) is embedded in the background it answers from the notes embedded so far, with partial: true and progress {notesEmbedded, notesTotal, passagesLeft, passagesPerSecond, etaSeconds}. Parameters: threshold: Similarity cutoff for the same topic, 0-1 (default 0.85); min_size: Smallest cluster to report (default 2); limit: Maximum items to return (default 10, max 500); offset: Items to skip, for paging (default 0); max_notes: Member paths shown per cluster (default 10; size counts all).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  longRunning: true, // may embed the vault first (docs/security.md: no time budget)
  input: z.object({
    threshold: z.number().min(0).max(1).default(0.85).describe("Similarity cutoff, 0–1"),
    min_size: z.number().int().min(2).max(1000).default(2),
    limit: limitField(10, 500),
    offset: offsetField,
    max_notes: z.number().int().min(1).max(1000).default(10).describe("Paths shown per cluster"),
  }),
  async handler({ threshold, min_size, limit, offset, max_notes }, ctx) {
    return topicMap(service(ctx, "topic_map"), { threshold, minSize: min_size, limit, offset, maxNotes: max_notes }, ctx.signal);
  },
});

const REINDEX_WAIT_MS = 25_000;

export const reindexEmbeddingsTool = defineTool({
  name: "reindex_embeddings",
  description: "Embed new and changed notes now, prune deleted ones: {notes, passages}. Rarely needed.",
  details: "Force a reconcile of the semantic index: embed new and changed notes (passages and note vectors), prune deleted ones; unchanged notes and passages whose vector is cached cost nothing. Returns {notes, passages} re-embedded, plus embedded (passages the model had to embed), pruned (deleted notes dropped) and cachePruned; during a background build it joins that build and counts what it embedded. A pass still running after 25 s (the first build of a big vault) goes on in the background and the call answers {notes, passages} so far (passages: those the model embedded) with partial: true and progress {notesEmbedded, notesTotal, passagesLeft, passagesPerSecond, etaSeconds}; get_vault_info.embedding follows it. Rarely needed: semantic tools refresh changed notes themselves. Equivalent to `lettuce embed`. Needs an embeddings provider (kind not-configured otherwise).",
  scopes: ALL_SCOPES,
  annotations: { readOnlyHint: true, idempotentHint: true },
  longRunning: true, // may embed the vault first (docs/security.md: no time budget)
  input: z.object({}),
  async handler(_args, ctx) {
    const svc = service(ctx, "reindex_embeddings");
    await ctx.vault.settle();
    let notes = 0;
    let passages = 0;
    const handle: { demote?: () => void } = {};
    const pass = svc.reindex((done, _total, detail) => {
      notes = done;
      passages = detail.embedded;
    }, handle);
    // An MCP client gives up on a call after a minute or so (the SDK's default is 60 s); a first build of a
    // big vault takes minutes. Past the wait the pass goes on in the background and the answer says so.
    const waitMs = envNumber("LETTUCE_REINDEX_WAIT_MS", REINDEX_WAIT_MS, { min: 1, max: MAX_TIMER_MS });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), waitMs)));
    const result = await Promise.race([pass, late]).finally(() => clearTimeout(timer));
    if (result) return result;
    handle.demote?.(); // nobody waits for it now: it yields to requests, as background embedding does
    pass.catch((e) => console.error("lettuce: reindex_embeddings, in the background:", (e as Error).message));
    const progress = svc.progressNow();
    return { notes, passages, partial: true, progress };
  },
});

export const evalTool = defineTool({
  name: "eval",
  description: "Score retrieval on eval/questions.jsonl: {recallAtK, precisionAtK, mrr, hitRate, faithfulnessRate, perQuestion}.",
  details: "Score retrieval against the vault's question set, eval/questions.jsonl (one JSON object per line: {\"question\": \"…\", \"expected_paths\": [\"Note.md\"], \"must_contain\": [\"phrase\"]}), to tell whether a change helped. Retrieval is hybrid semantic + keyword with an embeddings provider, keyword (BM25) otherwise. Returns {k, count, recallAtK, precisionAtK, mrr, hitRate, faithfulnessRate, perQuestion}. With an LLM provider it also answers each question from the retrieved notes and scores faithfulness (cites only retrieved notes and contains every must_contain span); without one faithfulnessRate is null. Parameters: k: Top-k cutoff (default 6).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  longRunning: true, // may embed the vault first (docs/security.md: no time budget)
  input: z.object({ k: z.number().int().min(1).max(100).default(6) }),
  async handler({ k }, ctx) {
    return runEval(service(ctx, "eval"), k, { signal: ctx.signal });
  },
});

contributeVaultInfo(async (info, { vault }) => {
  const svc = SemanticService.for(vault);
  const embeddings = await svc.hasEmbedder();
  info.capabilities.embeddings = embeddings;
  // True only when the chat model answers (a probe cached for 30 s), not merely when one is configured.
  info.capabilities.llm = await chatAnswers((await selectChat()).provider);
  info.liveness.embeddingIndexStale = embeddings ? svc.isStale(await svc.embedder()) : false;
  // Counted passages and the measured rate (docs/semantic.md, "Background embedding").
  if (embeddings) info.embedding = svc.progressNow();
});

export const semanticTools = [semanticSearchTool, relatedNotesTool, findDuplicatesTool, topicMapTool, reindexEmbeddingsTool, evalTool];
