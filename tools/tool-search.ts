import { searchTools, toolSearchInput } from "../lib/toolsearch";
import { ALL_SCOPES, defineTool, READ_ONLY } from "./types";

export const searchToolsTool = defineTool({
  name: "search_tools",
  description:
    'Find the right Lettuce tool for a job described in plain words ("who links to this note", "change one section"): ranks the tools your token may call by keywords and meaning, best first, as [{combined_score, tool: {name, description, json_schema, tags, …}, embedded_text, fts_rank, vector_rank}]. Filter by tags (families, "read-only", "writes").',
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: toolSearchInput,
  handler(args, { token }) {
    return searchTools(args, token.scope);
  },
});

export const toolSearchTools = [searchToolsTool];
