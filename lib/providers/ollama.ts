import { Ollama } from "ollama";
import { AttemptError, defaultPolicy, networkError, statusError, withRetries, type RetryPolicy } from "./retry";
import type { ChatMessage, ChatOptions, ChatProvider, EmbedOptions, EmbeddingProvider } from "./types";
import { embedInBatches } from "./vectors";
import { boundedResponse, ReplyTooLarge, tooLargeError } from "./bounded-body";
import { deadline } from "./deadline";

export const DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434";
export const DEFAULT_OLLAMA_EMBED_MODEL = "nomic-embed-text";
const BATCH = 32;

/** OLLAMA_HOST as Ollama itself reads it: "host", "host:port" or a URL; 0.0.0.0 means this machine. */
export function ollamaHost(raw = process.env.OLLAMA_HOST): string {
  let h = (raw ?? "").trim();
  if (!h) return DEFAULT_OLLAMA_HOST;
  if (!/^https?:\/\//i.test(h)) h = `http://${h}`;
  try {
    const u = new URL(h);
    if (u.hostname === "0.0.0.0") u.hostname = "127.0.0.1";
    if (!u.port && u.protocol === "http:" && !/:\d+$/.test(raw!.trim())) u.port = "11434";
    return u.toString().replace(/\/$/, "");
  } catch {
    return DEFAULT_OLLAMA_HOST;
  }
}

/** Does a model listed by /api/tags ("nomic-embed-text:latest") answer to the name asked for? */
export function sameOllamaModel(listed: string, wanted: string): boolean {
  if (listed === wanted) return true;
  return !wanted.includes(":") && listed.startsWith(`${wanted}:`) && listed.slice(wanted.length + 1) === "latest";
}

/**
 * One Ollama client per try: its fetch carries the try's deadline and keeps
 * the response headers (the client throws away Retry-After).
 */
function client(host: string, signal: AbortSignal): { api: Ollama; retryAfter: () => string | null } {
  let retryAfter: string | null = null;
  const api = new Ollama({
    host,
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      const res = await fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal });
      retryAfter = res.headers.get("retry-after");
      return boundedResponse(res);
    }) as typeof fetch,
  });
  return { api, retryAfter: () => retryAfter };
}

function classify(label: string, host: string, model: string, e: unknown, retryAfter: string | null, timedOut: boolean, timeoutMs: number): AttemptError {
  if (e instanceof ReplyTooLarge) return tooLargeError(label, e);
  const err = e as { name?: string; status_code?: number; message?: string };
  if (err?.name === "ResponseError" && typeof err.status_code === "number") {
    if (err.status_code === 404 || /not found/i.test(err.message ?? "")) {
      return new AttemptError("provider-error", `${label}: model "${model}" is not installed on ${host}; run \`ollama pull ${model}\``, false);
    }
    return statusError(label, err.status_code, err.message ?? "", retryAfter);
  }
  return networkError(label, host, e, timedOut, timeoutMs);
}

/** Models Ollama has installed, or null when it does not answer at `host` within the timeout. */
export async function probeOllama(host: string, timeoutMs = 1500): Promise<string[] | null> {
  const limit = deadline(timeoutMs);
  try {
    const { api } = client(host, limit.signal);
    const res = await api.list();
    return (res.models ?? []).map((m) => m.name ?? m.model).filter((n): n is string => typeof n === "string");
  } catch {
    return null;
  } finally {
    limit.clear();
  }
}

export class OllamaEmbedder implements EmbeddingProvider {
  readonly kind = "ollama";
  readonly id: string;
  dimension: number | null = null;
  // Ollama's default context (2048 tokens) holds this comfortably; retrieval works best on passages of a few paragraphs.
  readonly passageChars = 1500;
  readonly label: string;
  // nomic-embed-text was trained with task prefixes and ranks noticeably better with them.
  private prefixes: { query: string; document: string } | null;

  constructor(
    readonly host: string,
    readonly model: string,
    readonly policy: RetryPolicy = defaultPolicy("embed"),
  ) {
    this.id = `ollama:${model}`;
    this.label = `Ollama (${model})`;
    this.prefixes = /nomic-embed/i.test(model) ? { query: "search_query: ", document: "search_document: " } : null;
  }

  embed(texts: string[], opts: EmbedOptions = {}): Promise<Float32Array[]> {
    const prefix = this.prefixes ? this.prefixes[opts.purpose ?? "document"] : "";
    return embedInBatches(
      this,
      texts.map((t) => prefix + t),
      BATCH,
      async (batch, signal, timedOut) => {
        const c = client(this.host, signal);
        try {
          return (await c.api.embed({ model: this.model, input: batch, truncate: true }))?.embeddings;
        } catch (e) {
          throw classify(this.label, this.host, this.model, e, c.retryAfter(), timedOut(), this.policy.timeoutMs);
        }
      },
      opts.signal,
    );
  }

  close(): void {}
}

export class OllamaChat implements ChatProvider {
  readonly kind = "ollama";
  readonly id: string;
  private label: string;

  constructor(
    readonly host: string,
    readonly model: string,
    private policy: RetryPolicy = defaultPolicy("chat"),
  ) {
    this.id = `ollama:${model}`;
    this.label = `Ollama (${model})`;
  }

  chat(messages: ChatMessage[], opts: ChatOptions = {}): Promise<string> {
    return withRetries(
      this.policy,
      async (signal, timedOut) => {
        const c = client(this.host, signal);
        let res;
        try {
          res = await c.api.chat({
            model: this.model,
            messages,
            stream: false,
            ...(opts.json ? { format: "json" } : {}),
            options: {
              temperature: opts.temperature ?? 0,
              ...(opts.maxTokens ? { num_predict: opts.maxTokens } : {}),
              ...(opts.numCtx ? { num_ctx: opts.numCtx } : {}),
            },
          });
        } catch (e) {
          throw classify(this.label, this.host, this.model, e, c.retryAfter(), timedOut(), this.policy.timeoutMs);
        }
        const text = res?.message?.content;
        if (typeof text !== "string") throw new AttemptError("provider-error", `${this.label} answered without a message`, false);
        return text;
      },
      opts.signal,
    );
  }

  /** Ollama answers and has the model installed (listing models loads none, so this costs nothing). */
  async ping(timeoutMs: number): Promise<boolean> {
    const installed = await probeOllama(this.host, timeoutMs);
    return !!installed?.some((m) => sameOllamaModel(m, this.model));
  }

  close(): void {}
}
