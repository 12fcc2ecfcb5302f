// answer: ask the wiki a question and get a grounded answer whose citations
// and quotes are checked against the vault. The work lives in lib/answer/.
import { z } from "zod";
import { answerQuestion, DEFAULT_LIMIT } from "../lib/answer/answer";
import { SemanticService } from "../lib/semantic/service";
import { ALL_SCOPES, defineTool, limitField, READ_ONLY } from "./types";

export const answerTool = defineTool({
  name: "answer",
  description: "Ask the wiki: an LLM answers from retrieved passages only, with checked citations and verbatim quotes: {answer, citations, quotedSpans, retrieved}. Needs an LLM.",
  details: "Ask the wiki: retrieves the best passages (hybrid, or keyword without embeddings), has the LLM answer from them only, and keeps only citations of retrieved pages and quotes found verbatim in them. Returns {answer, citations, quotedSpans (heading, ordinal), retrieved, dropped}; check_faithfulness adds faithfulness {score, unsupported}. Needs an LLM (kind not-configured). Parameters: query: The question, in words; limit: How many pages to retrieve as context (default 6, max 20); prefer_recent: Prefer recently edited pages when retrieving; rerank: Rerank a pool of 30 fused candidates first (LETTUCE_RERANK_URL cross-encoder, else the LLM); one extra call; expand: LLM query expansion (HyDE + paraphrases) for recall; one extra call; use_graph: Boost well-linked pages and pages sharing the top hit's tags; add the top page's linked neighbours; check_faithfulness: Judge each claim of the answer against the passages; one extra call.",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    query: z.string().trim().min(1).max(2000),
    limit: limitField(DEFAULT_LIMIT, 20).describe("Pages to retrieve as context"),
    prefer_recent: z.boolean().default(false).describe("Favour recently edited pages"),
    rerank: z.boolean().default(false).describe("One extra call: rerank candidates"),
    expand: z.boolean().default(false).describe("One extra call: expand the query"),
    use_graph: z.boolean().default(false).describe("Favour well-linked pages and neighbours"),
    check_faithfulness: z.boolean().default(false).describe("One extra call: check each claim"),
  }),
  async handler({ query, limit, prefer_recent, rerank, expand, use_graph, check_faithfulness }, ctx) {
    const svc = SemanticService.for(ctx.vault);
    svc.limiter.take(ctx.token.name, "answer");
    return answerQuestion(svc, { query, limit, preferRecent: prefer_recent, rerank, expand, useGraph: use_graph, checkFaithfulness: check_faithfulness, signal: ctx.signal });
  },
});

export const answerTools = [answerTool];
