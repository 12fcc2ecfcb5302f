// A hosted cross-encoder reranker, in the common /rerank wire shape that
// Cohere, Jina, Voyage-compatible servers and HuggingFace text-embeddings-
// inference share: POST {model, query, documents: [text…], top_n} →
// {results: [{index, relevance_score}]}. Voyage answers under `data` and some
// servers answer a bare array with `score`; all three are read.
import { AttemptError, defaultPolicy, withRetries, type RetryPolicy } from "./retry";
import { postJson } from "./openai";

export interface RerankScore {
  index: number;
  score: number;
}

export class RerankClient {
  readonly label: string;

  constructor(
    readonly url: string,
    readonly model: string | undefined,
    private apiKey?: string,
    private policy: RetryPolicy = defaultPolicy("chat"),
  ) {
    this.label = `The reranker (${url})`;
  }

  /** Scores for the documents, best first; documents the server leaves out are absent. Throws ProviderError. */
  rerank(query: string, documents: string[], signal?: AbortSignal): Promise<RerankScore[]> {
    if (!documents.length) return Promise.resolve([]);
    return withRetries(
      this.policy,
      async (s, timedOut) => {
        const body = { ...(this.model ? { model: this.model } : {}), query, documents, top_n: documents.length };
        const j = (await postJson(this.label, this.url, body, this.apiKey, s, timedOut, this.policy.timeoutMs)) as unknown;
        const list = Array.isArray(j) ? j : ((j as { results?: unknown })?.results ?? (j as { data?: unknown })?.data);
        if (!Array.isArray(list)) throw new AttemptError("provider-error", `${this.label} answered without a results array`, false);
        const seen = new Set<number>();
        const out: RerankScore[] = [];
        for (const r of list as { index?: unknown; relevance_score?: unknown; score?: unknown }[]) {
          const index = r?.index;
          const score = typeof r?.relevance_score === "number" ? r.relevance_score : r?.score;
          // An index outside the list, or twice, is the server's mistake: skip it rather than trust it.
          if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index >= documents.length || seen.has(index)) continue;
          if (typeof score !== "number" || !Number.isFinite(score)) continue;
          seen.add(index);
          out.push({ index, score });
        }
        if (!out.length) throw new AttemptError("provider-error", `${this.label} answered with no usable scores`, false);
        return out.sort((a, b) => b.score - a.score || a.index - b.index);
      },
      signal,
    );
  }
}

/** `LETTUCE_RERANK_URL` as an endpoint: a URL ending in /rerank is used as is, anything else gets /rerank. */
export function rerankEndpoint(raw: string): string {
  let s = raw.trim().replace(/\/+$/, "");
  if (!/^https?:\/\//i.test(s)) s = `http://${s}`;
  return /\/rerank$/i.test(new URL(s).pathname) ? s : `${s}/rerank`;
}

/** The cross-encoder the environment names, or null (then `rerank` asks the LLM instead). */
export function selectReranker(env: Record<string, string | undefined> = process.env): RerankClient | null {
  const url = env.LETTUCE_RERANK_URL?.trim();
  if (!url) return null;
  const model = env.LETTUCE_RERANK_MODEL?.trim() || undefined;
  const key = env.LETTUCE_RERANK_API_KEY?.trim() || env.LETTUCE_API_KEY?.trim() || undefined;
  return new RerankClient(rerankEndpoint(url), model, key);
}
