// rerank: reorder a fused candidate pool before the context is chosen. A
// hosted cross-encoder when LETTUCE_RERANK_URL is set (it reads query and
// passage together, which neither BM25 nor a bi-encoder does), else the chat
// model ranks the candidates listwise. Either way the order is the only thing
// taken from it: ids it invents are ignored, candidates it leaves out keep
// their fused order after the ones it ranked.
import type { ChatProvider } from "../providers/types";
import { selectReranker } from "../providers/rerank";
import { toToolError } from "../semantic/tool-error";
import { chatJson } from "./chat-json";
import { RERANK_SYSTEM, referenceBlock } from "./prompts";

/** How many fused candidates are reranked (the context then takes the top `limit`). */
export const RERANK_POOL = 30;
// What each candidate shows the reranker: enough to judge, bounded for the window.
const CROSS_ENCODER_CHARS = 2_000;
const LISTWISE_CHARS = 500;

export interface RerankCandidate {
  path: string;
  title: string;
  /** The candidate's best passage. */
  text: string;
}

export type Reranker = "cross-encoder" | "llm";

export async function rerankCandidates<T extends RerankCandidate>(
  query: string,
  pool: T[],
  chat: () => Promise<ChatProvider>,
  signal?: AbortSignal,
): Promise<{ order: T[]; by: Reranker }> {
  const cross = selectReranker();
  if (cross) {
    if (pool.length < 2) return { order: pool, by: "cross-encoder" };
    let scores;
    try {
      scores = await cross.rerank(
        query,
        pool.map((c) => `${c.title}\n${c.text}`.slice(0, CROSS_ENCODER_CHARS)),
        signal,
      );
    } catch (e) {
      throw toToolError(e);
    }
    return { order: withRest(pool, scores.map((s) => s.index)), by: "cross-encoder" };
  }
  const model = await chat();
  if (pool.length < 2) return { order: pool, by: "llm" };
  const block = referenceBlock(
    pool.map((c, i) => ({
      id: `C${i + 1}`,
      attrs: [
        ["path", c.path],
        ["title", c.title],
      ],
      text: c.text.slice(0, LISTWISE_CHARS),
    })),
  );
  const ranking = await chatJson(model, {
    what: "the reranking",
    messages: [
      { role: "system", content: RERANK_SYSTEM(block) },
      { role: "user", content: `${block.text}\n\nQuestion: ${query}` },
    ],
    maxTokens: 400,
    signal,
    read: (o) => (Array.isArray(o.ranking) ? o.ranking : null),
  });
  const indexes = ranking
    .map((v) => (typeof v === "number" ? v : typeof v === "string" ? Number(v.trim().replace(/^\[?C/i, "").replace(/\]$/, "")) : NaN))
    .filter((n) => Number.isInteger(n))
    .map((n) => n - 1);
  return { order: withRest(pool, indexes), by: "llm" };
}

/** The pool in the given order (unknown and repeated indexes skipped), then the rest in their old order. */
function withRest<T>(pool: T[], indexes: number[]): T[] {
  const seen = new Set<number>();
  const out: T[] = [];
  for (const i of indexes) {
    if (i < 0 || i >= pool.length || seen.has(i)) continue;
    seen.add(i);
    out.push(pool[i]!);
  }
  pool.forEach((c, i) => {
    if (!seen.has(i)) out.push(c);
  });
  return out;
}
