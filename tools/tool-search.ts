import { searchTools, toolSearchInput } from "../lib/toolsearch";
import { ALL_SCOPES, defineTool, READ_ONLY } from "./types";

export const searchToolsTool = defineTool({
  name: "search_tools",
  description: "Find the tool for a job described in plain words: [{combined_score, tool: {name, description, args_json_schema}}].",
  details: "Find the right Lettuce tool for a job described in plain words (\"who links to this note\", \"change one section\"): ranks the tools your token may call by keywords and meaning, best first, as [{combined_score, tool: {name, description, args_json_schema, tags, …}, embedded_text, fts_rank, vector_rank}]. Filter by tags (families, \"read-only\", \"writes\"). Parameters: query: What you want to do, in plain words, e.g. \"who links to this note\"; omit to list every tool you may call; search_mode: fts (keywords), vector (meaning; needs an embeddings provider) or hybrid (both, fused; the default; falls back to fts without a provider); tags: Only tools with any of these tags: a family (\"links\", \"write\", \"databases\", …), \"read-only\" or \"writes\"; tool_types: Only tools of these types; every Lettuce tool is \"external_mcp\"; limit: Maximum results, 1–100 (default 10).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: toolSearchInput,
  handler(args, { token }) {
    return searchTools(args, token.scope);
  },
});

export const toolSearchTools = [searchToolsTool];
