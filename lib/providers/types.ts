// The two model interfaces every model-backed feature goes through: one for
// embeddings, one for chat. Implementations: ollama.ts, openai.ts, builtin.ts;
// select.ts picks one from the environment.

export interface EmbedOptions {
  /** "query" for a search query (interactive: jumps ahead of bulk work), "document" for passages. */
  purpose?: "query" | "document";
  /** Documents a request waits for (the tool catalogue): ahead of background work, as a query is. */
  urgent?: boolean;
  signal?: AbortSignal;
}

export interface EmbeddingProvider {
  /** "builtin", "ollama" or "openai". */
  readonly kind: string;
  /** Stable identity of the vector space: provider kind + model (+ endpoint). Vectors of two ids never mix. */
  readonly id: string;
  readonly model: string;
  /** Known up front for the built-in model; learned from the first answer for remote ones. */
  readonly dimension: number | null;
  /**
   * The longest passage worth sending, in characters. The built-in model reads
   * only its first 128 tokens (about 500 characters of English), so larger
   * passages would be silently cut.
   */
  readonly passageChars: number;
  /** Embed texts; one vector per text, in order. Throws ProviderError. */
  embed(texts: string[], opts?: EmbedOptions): Promise<Float32Array[]>;
  /** Optional: get ready for bulk work that is about to come (the built-in model starts its workers). */
  warm?(): void;
  /** Release workers or sockets. */
  close(): void;
}

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface ChatOptions {
  temperature?: number;
  maxTokens?: number;
  /** Ask the model for a JSON object (both wire formats have a switch for it). */
  json?: boolean;
  /**
   * The context window the request needs, in tokens. Ollama's default window
   * (2048 or 4096) silently drops the start of a longer prompt, so Ollama gets
   * it as options.num_ctx; OpenAI-compatible servers size their window themselves.
   */
  numCtx?: number;
  signal?: AbortSignal;
}

export interface ChatProvider {
  readonly kind: string;
  readonly id: string;
  readonly model: string;
  chat(messages: ChatMessage[], opts?: ChatOptions): Promise<string>;
  /** Does the model answer right now? A cheap check (a model listing, else a one-token chat); never throws. */
  ping(timeoutMs: number): Promise<boolean>;
  close(): void;
}

/**
 * Why a model call failed, as a tool error kind:
 * - not-configured: there is no provider of this type at all
 * - provider-unavailable: it did not answer (down, timed out, 5xx after retries)
 * - provider-error: it answered, but wrongly (bad key, unknown model, wrong dimension, bad payload)
 * - rate-limited: it kept answering 429; retryAfterMs says when to try again
 */
export type ProviderErrorKind = "not-configured" | "provider-unavailable" | "provider-error" | "rate-limited";

export class ProviderError extends Error {
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "ProviderError";
  }
}

/** Scale a vector to unit length in place (zero vectors stay zero). */
export function normalize(v: Float32Array): Float32Array {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  if (s > 0) {
    const inv = 1 / Math.sqrt(s);
    for (let i = 0; i < v.length; i++) v[i]! *= inv;
  }
  return v;
}
