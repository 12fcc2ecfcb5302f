// prepare_context (spec: workspace-read-tools.md): a task's context pack.
import { z } from "zod";
import { prepareContext } from "../lib/workspace/context/pack";
import { TRUST_POLICIES } from "../lib/workspace/context/rank";
import { ALL_SCOPES, defineTool, READ_ONLY } from "./types";

export const prepareContextTool = defineTool({
  name: "prepare_context",
  description: "Start multi-page work here: the pages a task needs within maxTokens, with trust, freshness and why chosen, and a contextRunId for writes.",
  details: "Call first for multi-page work: the pages that matter for a task, within maxTokens — bodies (or outline + excerpt), trust/freshness metadata, why each was chosen, related page ids, warnings — and a contextRunId (30 min) to pass to write tools. Matching is lexical (plus vectors when embeddings exist): add keywords for synonyms or the vault's language. Parameters: task: The concrete task or question; keywords: Extra search terms (synonyms, the vault's language); half the weight of the task's words; maxTokens: Approximate budget of the whole answer (about 4 characters a token); maxConcepts: Most pages to include; trustPolicy: any | prefer-human-reviewed | human-reviewed-only; includeRelated: List link neighbours (ids and titles) of the top pages.",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    task: z.string().min(1).max(4000),
    keywords: z.array(z.string().min(1).max(60)).max(24).default([]).describe("Synonyms, the vault's language"),
    maxTokens: z.number().int().min(1000).max(16000).default(2000).describe("~4 characters a token"),
    maxConcepts: z.number().int().min(1).max(16).default(6),
    trustPolicy: z.enum(TRUST_POLICIES).default("prefer-human-reviewed"),
    includeRelated: z.boolean().default(true),
  }),
  handler(args, { vault, token, signal }) {
    return prepareContext(vault, { ...args, token: token.name, signal });
  },
});

export const contextTools = [prepareContextTool];
