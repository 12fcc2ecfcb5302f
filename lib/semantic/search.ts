// semantic_search: vector ranking of notes by their best passage, optionally
// fused with BM25 (any-term, stemmed; see MODEL_RANKING for how), optionally
// pulled toward recent notes, optionally widened by LLM query expansion.
// The ranking itself lives in ./retrieve.ts, shared with answer and prepare_context.
import { keywordSnippets } from "../retrieval/search";
import { retrieve } from "./retrieve";
import type { EmbeddingProgress, SemanticService } from "./service";
import { sliceWhole } from "../text-cut";

/** The fields an answer made while the vectors are still being built carries: partial: true and the progress. */
export function partialOf(p: EmbeddingProgress | undefined): { partial?: true; progress?: EmbeddingProgress } {
  return p ? { partial: true, progress: p } : {};
}

export interface SemanticQuery {
  query: string;
  hybrid?: boolean;
  preferRecent?: boolean;
  expand?: boolean;
  limit: number;
  offset?: number;
  signal?: AbortSignal;
}

export interface SemanticHit {
  path: string;
  title: string;
  snippet: string;
  score: number;
}

const SNIPPET_CHARS = 320;

export function snippetOf(text: string): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length <= SNIPPET_CHARS ? t : `${sliceWhole(t, SNIPPET_CHARS).replace(/\s+\S*$/, "")}…`;
}

export async function semanticSearch(svc: SemanticService, q: SemanticQuery): Promise<{ items: SemanticHit[]; total: number; partial?: true; progress?: EmbeddingProgress }> {
  const r = await retrieve(svc, {
    query: q.query,
    mode: q.hybrid ? "hybrid" : "vector",
    preferRecent: q.preferRecent,
    expand: q.expand,
    limit: q.limit,
    offset: q.offset,
    signal: q.signal,
  });
  // The snippet: the passage that matched the query itself best; for a note not embedded yet (found by the
  // keyword side of a partial answer), the keyword search's snippet.
  const bare = r.notes.filter((n) => !n.passages[0]).map((n) => n.path);
  const keyword = keywordSnippets(svc.vault.indexDb, bare, q.query);
  const items = r.notes.map((n) => ({ path: n.path, title: n.title, snippet: n.passages[0] ? snippetOf(n.passages[0].text) : (keyword.get(n.path) ?? ""), score: Math.round(n.score * 1e6) / 1e6 }));
  return { items, total: r.total, ...partialOf(r.partial) };
}
