import { z } from "zod";
import { offloaded } from "../lib/offload/offloaded";
import { ALL_SCOPES, defineTool, limitField, offsetField, READ_ONLY } from "./types";

export const search = defineTool({
  name: "search",
  description: "Keyword search of titles and bodies (BM25): words AND'd as prefixes, \"phrase\", OR, NOT, -word. {items: [{path, title, snippet, score}], total}; lower score = better.",
  details: "Full-text search of note titles and bodies (BM25; titles and aliases weigh more). Bare words are AND'd prefixes (under 3 letters: exact); \"exact phrase\"; OR / NOT (uppercase); -word excludes. Accents ignored. Chinese, Japanese, Thai (no spaces between words): a word is found anywhere in the text, each pair of characters counting as a word. Greek, Arabic, Hebrew, Indic words without their accents or vowel marks are also matched as substrings (score 0, after the index's matches; partial: true when that scan stopped at its 4 MB budget). A note whose title or alias is the query comes first. Returns {items: [{path, title, snippet, score}], total, offset, limit}; score is BM25, lower = better. Over 32 words: query-too-complex. Parameters: query: Search words, phrases and operators; limit: Maximum items to return (default 25, max 200); offset: Items to skip, for paging (default 0).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    query: z.string(),
    limit: limitField(25, 200),
    offset: offsetField,
  }),
  async handler({ query, limit, offset }, { vault, signal }) {
    // Off the event loop (lib/offload): a slow full-text statement cannot hold other callers.
    // The answer, {items, total, offset, limit}, comes back as JSON text.
    return offloaded.search(vault, query, limit, offset, signal);
  },
});

export const searchTools = [search];
