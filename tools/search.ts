import { z } from "zod";
import { searchNotes } from "../lib/retrieval/search";
import { ALL_SCOPES, defineTool, limitField, offsetField, READ_ONLY } from "./types";

export const search = defineTool({
  name: "search",
  description:
    'Full-text search over note titles and bodies (SQLite FTS5, BM25; title matches weigh more). Bare words are AND\'d and match as prefixes; "exact phrase" in double quotes; OR / NOT (uppercase) between terms; a leading -word excludes it. Accents are ignored (cozum finds Çözüm). Returns {items: [{path, title, snippet, score}], total, offset, limit}, best first; score is the BM25 rank (lower = better). A malformed query returns no rows.',
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    query: z.string().describe("Search words, phrases and operators"),
    limit: limitField(25, 200),
    offset: offsetField,
  }),
  handler({ query, limit, offset }, { vault }) {
    const { items, total } = searchNotes(vault.indexDb, query, limit, offset);
    return { items, total, offset, limit };
  },
});

export const searchTools = [search];
