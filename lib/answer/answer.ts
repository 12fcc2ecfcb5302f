// answer: ask the wiki, not the model. Retrieve passages (retrieve(): hybrid
// when embeddings can be used, keyword otherwise), optionally reorder them by
// the link graph or a reranker, give them to the chat model as delimited
// untrusted reference data, and pass on only what the vault backs: citations
// of pages it was shown, quotes found verbatim in the page they name.
import type { ChatProvider } from "../providers/types";
import { retrieve, type RetrievalMode, type RetrievedNote } from "../semantic/retrieve";
import type { SemanticService } from "../semantic/service";
import { chatJson } from "./chat-json";
import { buildContext, contextBlock, type CandidatePage } from "./context";
import { checkFaithfulness, type Faithfulness } from "./faithfulness";
import { applyGraphPrior, neighboursOf } from "./graph";
import { notesByIds } from "../semantic/store";
import { offloaded } from "../offload/offloaded";
import { ANSWER_SYSTEM, answerUser } from "./prompts";
import { RERANK_POOL, rerankCandidates, type Reranker } from "./rerank";
import { sliceWhole } from "../text-cut";
import { validateAnswer, type ContextPage, type QuotedSpan, type Validated } from "./validate";

export interface AnswerOptions {
  query: string;
  limit?: number;
  preferRecent?: boolean;
  rerank?: boolean;
  expand?: boolean;
  useGraph?: boolean;
  checkFaithfulness?: boolean;
  signal?: AbortSignal;
  /** Filled with where the time went (bench/answer.ts); the model's share is `modelMs`. */
  trace?: AnswerTrace;
}

export interface AnswerTrace {
  retrievalMs: number;
  modelMs: number;
  validationMs: number;
}

export interface PageRef {
  path: string;
  title: string;
}

export interface AnswerResult {
  answer: string;
  citations: PageRef[];
  quotedSpans: QuotedSpan[];
  retrieved: PageRef[];
  /** Citations and quotes the model gave that failed validation (they are not passed on). */
  dropped: { citations: number; quotes: number };
  /** How the context was retrieved: "hybrid" (vector + BM25) or "keyword". */
  retrieval: RetrievalMode;
  reranker?: Reranker;
  faithfulness?: Faithfulness;
}

export const DEFAULT_LIMIT = 6;
// Passages per page handed to the context builder (it keeps what fits the budget).
const PASSAGES_PER_NOTE = 3;
const ANSWER_TOKENS = 1_000;
/** Several times what ANSWER_TOKENS asks for (a token is ~4 characters of English, fewer of other scripts). */
export const MAX_ANSWER_CHARS = 16 * ANSWER_TOKENS;
export const NOT_COVERED = "The notes do not cover this: no note in the vault matches the question.";

export interface Answerable {
  answer: string;
  citations: unknown[];
  quotes: unknown[];
}

/** The synthesis reply, or null when it is not the object asked for. */
export function readAnswer(o: Record<string, unknown>): Answerable | null {
  if (typeof o.answer !== "string" || !o.answer.trim()) return null;
  const list = (v: unknown) => (Array.isArray(v) ? v : typeof v === "string" ? [v] : v && typeof v === "object" ? [v] : []);
  // A model may ignore max_tokens: an answer past MAX_ANSWER_CHARS is cut (a 60 MB one went to the client whole).
  const answer = o.answer.trim();
  return { answer: answer.length > MAX_ANSWER_CHARS ? `${sliceWhole(answer, MAX_ANSWER_CHARS)}…` : answer, citations: list(o.citations), quotes: list(o.quotes) };
}

async function timed<T>(trace: AnswerTrace | undefined, key: keyof AnswerTrace, f: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  try {
    return await f();
  } finally {
    if (trace) trace[key] += performance.now() - t0;
  }
}

/** Retrieve, reorder (graph, rerank) and expand: the pages and passages the model will see. */
async function choosePages(svc: SemanticService, o: AnswerOptions, limit: number, chat: () => Promise<ChatProvider>) {
  const db = svc.vault.indexDb;
  const pool = o.rerank ? Math.max(RERANK_POOL, limit) : o.useGraph ? Math.max(limit * 3, 18) : limit;
  const r = await timed(o.trace, "retrievalMs", () =>
    retrieve(svc, { query: o.query, limit: pool, mode: "auto", preferRecent: o.preferRecent, expand: o.expand, passagesPerNote: PASSAGES_PER_NOTE, signal: o.signal }),
  );
  const t0 = performance.now();
  let order: RetrievedNote[] = o.useGraph ? applyGraphPrior(db, r.notes) : r.notes;
  if (o.trace) o.trace.retrievalMs += performance.now() - t0;
  let reranker: Reranker | undefined;
  if (o.rerank) {
    const ranked = await timed(o.trace, "modelMs", () =>
      rerankCandidates(
        o.query,
        order.map((n) => ({ note: n, path: n.path, title: n.title, text: n.passages[0]?.text ?? "" })),
        chat,
        o.signal,
      ),
    );
    order = ranked.order.map((c) => c.note);
    reranker = ranked.by;
  }
  const t1 = performance.now();
  const chosen = order.slice(0, limit);
  const candidates: CandidatePage[] = chosen.map((n) => ({ path: n.path, title: n.title, passages: n.passages.map((p) => ({ ord: p.ord, heading: p.heading, text: p.text })) }));
  if (o.useGraph && chosen.length) {
    const extra = neighboursOf(db, chosen[0]!.noteId, new Set(chosen.map((n) => n.noteId)));
    // Path and title only: the bodies are read where the passages are made.
    const texts = notesByIds(db, extra);
    // A neighbour's opening passages: where a linked page says what it is about. Split in a read worker when
    // it has none stored (keyword mode: the first megabyte of an 8 MB note ~0.1 s of the event loop).
    const passages = new Map(await offloaded.notePassages(svc.vault, extra, r.mode, 2, o.signal));
    for (const id of extra) {
      const t = texts.get(id);
      if (t) candidates.push({ path: t.path, title: t.title, passages: passages.get(id) ?? [] });
    }
  }
  const pages = buildContext(candidates);
  if (o.trace) o.trace.retrievalMs += performance.now() - t1;
  return { pages, mode: r.mode, reranker };
}

/** Ask the model to answer from these pages only, and validate what it cites and quotes. */
export async function synthesize(chat: ChatProvider, query: string, pages: ContextPage[], signal?: AbortSignal, trace?: AnswerTrace): Promise<{ reply: Answerable; validated: Validated }> {
  const block = contextBlock(pages);
  const reply = await timed(trace, "modelMs", () =>
    chatJson(chat, {
      what: "the question",
      messages: [
        { role: "system", content: ANSWER_SYSTEM(block) },
        { role: "user", content: answerUser(query, block) },
      ],
      maxTokens: ANSWER_TOKENS,
      signal,
      read: readAnswer,
    }),
  );
  const t0 = performance.now();
  const validated = validateAnswer(pages, reply.citations, reply.quotes);
  if (trace) trace.validationMs += performance.now() - t0;
  return { reply, validated };
}

export async function answerQuestion(svc: SemanticService, o: AnswerOptions): Promise<AnswerResult> {
  const limit = o.limit ?? DEFAULT_LIMIT;
  // No chat model: fail before any retrieval work (the "not configured" error).
  const chat = await svc.chat();
  const { pages, mode, reranker } = await choosePages(svc, o, limit, async () => chat);
  const retrieved = pages.map((p) => ({ path: p.path, title: p.title }));
  const base = { retrieval: mode, ...(reranker ? { reranker } : {}) };
  if (!pages.length) {
    // Nothing to ground an answer in: say so without spending a model call.
    return {
      answer: NOT_COVERED,
      citations: [],
      quotedSpans: [],
      retrieved,
      dropped: { citations: 0, quotes: 0 },
      ...base,
      ...(o.checkFaithfulness ? { faithfulness: { score: 1, unsupported: [] } } : {}),
    };
  }
  const { reply, validated: v } = await synthesize(chat, o.query, pages, o.signal, o.trace);
  const out: AnswerResult = { answer: reply.answer, citations: v.citations, quotedSpans: v.quotedSpans, retrieved, dropped: v.dropped, ...base };
  if (o.checkFaithfulness) out.faithfulness = await timed(o.trace, "modelMs", () => checkFaithfulness(chat, reply.answer, pages, o.signal));
  return out;
}
