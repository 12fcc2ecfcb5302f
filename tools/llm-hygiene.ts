// The LLM-assisted hygiene tools: lint_semantic (contradictions, stale claims,
// missing pages, gaps, open questions, sources to read) and suggest_tags.
// Advisory: both return findings and write nothing. The work lives in lib/answer/.
import { z } from "zod";
import { lintSemantic } from "../lib/answer/lint-semantic";
import { suggestTags } from "../lib/answer/suggest-tags";
import { SemanticService } from "../lib/semantic/service";
import { normalizeVaultPath } from "../lib/vault/paths";
import { ALL_SCOPES, defineTool, limitField, offsetField, type ToolContext } from "./types";

/** The chat model after the per-token rate limit of model-spending calls (not-configured without one). */
async function chatFor(ctx: ToolContext, tool: string) {
  const svc = SemanticService.for(ctx.vault);
  svc.limiter.take(ctx.token.name, tool);
  return svc.chat();
}

const scopeField = z.string().optional().describe('A note or folder, e.g. "Projects"');
const scopeOf = (path: string | undefined) => (path === undefined ? "" : normalizeVaultPath(path, { allowRoot: true }));
const ADVISORY = { readOnlyHint: true } as const;

export const lintSemanticTool = defineTool({
  name: "lint_semantic",
  description: "LLM review: contradictions, stale claims, missing pages, data gaps, open questions. {items: [{kind, paths, message, suggestion}], complete}. Needs an LLM.",
  details: "LLM review of the wiki beyond lint: contradiction, stale-claim, missing-page, data-gap, open-question, suggested-source findings {kind, paths, message, suggestion}, paths checked. Reads related pages in batches; each call reviews up to max_batches new ones (cached ones are free) and says {complete, batches}: call again to continue. Pages with offset/limit. Advisory. Needs an LLM (kind not-configured). Parameters: path: Only notes in this folder (or this note), vault-relative, e.g. \"Projects\"; max_batches: At most this many batches sent to the model in this call (default 8; 0 = only what is cached); limit: Maximum items to return (default 20, max 200); offset: Items to skip, for paging (default 0).",
  scopes: ALL_SCOPES,
  annotations: ADVISORY,
  input: z.object({
    path: scopeField,
    max_batches: z.number().int().min(0).max(1000).default(8).describe("Model calls this time (0 = cached findings only)"),
    limit: limitField(20, 200),
    offset: offsetField,
  }),
  async handler({ path, max_batches, limit, offset }, ctx) {
    const scope = scopeOf(path);
    const chat = await chatFor(ctx, "lint_semantic");
    await ctx.vault.settle();
    return lintSemantic(ctx.vault, chat, { scope, maxBatches: max_batches, limit, offset, signal: ctx.signal });
  },
});

export const suggestTagsTool = defineTool({
  name: "suggest_tags",
  description: "LLM tag suggestions for untagged notes, existing tags first: [{path, suggestedTags, newTags, rationale}]. Writes nothing. Needs an LLM.",
  details: "LLM tag suggestions for the notes lint flags untagged or missing a required tag: [{path, suggestedTags, newTags, rationale}], one entry per note in lint order (suggestedTags may be empty). Prefers the vault's existing tags; newTags lists the ones no note carries yet; honours index.md's declared vocabulary. Page with offset/limit (notes). Advisory: nothing is written. Needs an LLM (kind not-configured). Parameters: path: Only notes in this folder (or this note), vault-relative, e.g. \"Projects\"; limit: Maximum items to return (default 20, max 100); offset: Items to skip, for paging (default 0).",
  scopes: ALL_SCOPES,
  annotations: ADVISORY,
  input: z.object({ path: scopeField, limit: limitField(20, 100), offset: offsetField }),
  async handler({ path, limit, offset }, ctx) {
    const scope = scopeOf(path);
    const chat = await chatFor(ctx, "suggest_tags");
    await ctx.vault.settle();
    return suggestTags(ctx.vault.indexDb, chat, { scope, limit, offset, signal: ctx.signal });
  },
});

export const llmHygieneTools = [lintSemanticTool, suggestTagsTool];
