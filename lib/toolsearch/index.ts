// Tool search (search_tools, POST /v1/tools/search): the catalogue is
// registered once by tools/index.ts; the index over it is built on first use.
import { z } from "zod";
import { selectEmbedder } from "../providers/select";
import { buildRecords, type CatalogueTool } from "./catalogue";
import { ToolSearchIndex, type ToolSearchInput, type ToolSearchResult } from "./search";

export type { CatalogueTool } from "./catalogue";
export { ToolSearchIndex, type SearchMode, type ToolSearchInput, type ToolSearchResult } from "./search";

/** The request body of POST /v1/tools/search and the arguments of search_tools (spec/tool-search.md). */
export const toolSearchInput = z.object({
  query: z.string().max(2000).optional(),
  search_mode: z.enum(["fts", "vector", "hybrid"]).optional(),
  tags: z.array(z.string().max(100)).max(50).optional().describe('Families, "read-only" or "writes"'),
  tool_types: z.array(z.string().max(100)).max(20).optional(),
  limit: z.number().int().min(1).max(100).default(10),
});

let catalogue: { tools: readonly CatalogueTool[]; families: Record<string, readonly { name: string }[]> } | null = null;
let index: ToolSearchIndex | null = null;

/** Called by tools/index.ts with every tool and each family's tools (the family becomes the tag). */
export function registerToolCatalogue(tools: readonly CatalogueTool[], families: Record<string, readonly { name: string }[]>): void {
  catalogue = { tools, families };
  index = null;
}

export function toolSearchIndex(): ToolSearchIndex {
  if (!index) {
    if (!catalogue) throw new Error("tool search: no catalogue registered (tools/index.ts registers it)");
    index = new ToolSearchIndex(buildRecords(catalogue.tools, catalogue.families));
  }
  return index;
}

/** Search the registered catalogue for a caller of this scope, with this process's embeddings provider. */
export function searchTools(input: ToolSearchInput, scope: string): Promise<ToolSearchResult[]> {
  return toolSearchIndex().search(input, scope, async () => (await selectEmbedder()).provider);
}
