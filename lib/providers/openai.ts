import { AttemptError, defaultPolicy, networkError, statusError, withRetries, type RetryPolicy } from "./retry";
import type { ChatMessage, ChatOptions, ChatProvider, EmbedOptions, EmbeddingProvider } from "./types";
import { embedInBatches } from "./vectors";
import { deadline } from "./deadline";
import { boundedResponse, ReplyTooLarge, tooLargeError } from "./bounded-body";

export const DEFAULT_OPENAI_EMBED_MODEL = "text-embedding-3-small";
export const DEFAULT_OPENAI_CHAT_MODEL = "gpt-4o-mini";
const BATCH = 64;

/**
 * An OpenAI-style base URL: "https://api.openai.com/v1", "http://localhost:1234/v1".
 * A bare host ("http://localhost:1234") gets "/v1", the path every compatible server uses.
 */
export function openAiBase(raw: string): string {
  let s = raw.trim().replace(/\/+$/, "");
  if (!/^https?:\/\//i.test(s)) s = `http://${s}`;
  const u = new URL(s);
  if (u.pathname === "/" || u.pathname === "") u.pathname = "/v1";
  return u.toString().replace(/\/+$/, "");
}

export async function postJson(
  label: string,
  url: string,
  body: unknown,
  apiKey: string | undefined,
  signal: AbortSignal,
  timedOut: () => boolean,
  timeoutMs: number,
): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify(body),
      signal,
    });
  } catch (e) {
    throw networkError(label, url, e, timedOut(), timeoutMs);
  }
  let text: string;
  try {
    text = await boundedResponse(res).text();
  } catch (e) {
    if (e instanceof ReplyTooLarge) throw tooLargeError(label, e);
    throw networkError(label, url, e, timedOut(), timeoutMs);
  }
  if (!res.ok) {
    let detail = text;
    try {
      const j = JSON.parse(text);
      detail = j?.error?.message ?? j?.error ?? j?.message ?? text;
    } catch {
      /* not JSON: keep the text */
    }
    if (res.status === 404) {
      throw new AttemptError("provider-error", `${label}: ${url} answered 404; check the base URL and the model name (${String(detail).slice(0, 200)})`, false);
    }
    throw statusError(label, res.status, String(detail), res.headers.get("retry-after"));
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new AttemptError("provider-error", `${label} answered with something that is not JSON`, false);
  }
}

export class OpenAIEmbedder implements EmbeddingProvider {
  readonly kind = "openai";
  readonly id: string;
  dimension: number | null = null;
  readonly passageChars = 1500;
  readonly label: string;

  constructor(
    readonly baseUrl: string,
    readonly model: string,
    private apiKey?: string,
    readonly policy: RetryPolicy = defaultPolicy("embed"),
  ) {
    this.id = `openai:${model}`;
    this.label = `The embeddings endpoint (${model})`;
  }

  embed(texts: string[], opts: EmbedOptions = {}): Promise<Float32Array[]> {
    return embedInBatches(
      this,
      texts,
      BATCH,
      async (batch, signal, timedOut) => {
        const j = (await postJson(this.label, `${this.baseUrl}/embeddings`, { model: this.model, input: batch, encoding_format: "float" }, this.apiKey, signal, timedOut, this.policy.timeoutMs)) as {
          data?: { embedding?: unknown; index?: number }[];
        };
        if (!Array.isArray(j?.data)) throw new AttemptError("provider-error", `${this.label} answered without a data array`, false);
        return [...j.data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)).map((d) => d.embedding);
      },
      opts.signal,
    );
  }

  close(): void {}
}

export class OpenAIChat implements ChatProvider {
  readonly kind = "openai";
  readonly id: string;
  private label: string;

  constructor(
    readonly baseUrl: string,
    readonly model: string,
    private apiKey?: string,
    private policy: RetryPolicy = defaultPolicy("chat"),
  ) {
    this.id = `openai:${model}`;
    this.label = `The chat endpoint (${model})`;
  }

  chat(messages: ChatMessage[], opts: ChatOptions = {}): Promise<string> {
    return withRetries(
      this.policy,
      async (signal, timedOut) => {
        const body = {
          model: this.model,
          messages,
          temperature: opts.temperature ?? 0,
          ...(opts.maxTokens ? { max_tokens: opts.maxTokens } : {}),
          ...(opts.json ? { response_format: { type: "json_object" } } : {}),
        };
        const j = (await postJson(this.label, `${this.baseUrl}/chat/completions`, body, this.apiKey, signal, timedOut, this.policy.timeoutMs)) as {
          choices?: { message?: { content?: unknown } }[];
        };
        const text = j?.choices?.[0]?.message?.content;
        if (typeof text !== "string") throw new AttemptError("provider-error", `${this.label} answered without a message`, false);
        return text;
      },
      opts.signal,
    );
  }

  /**
   * GET /models answers 200: the endpoint is up and takes the key. Servers
   * without a listing (404/405/501) get a one-token chat instead. Never throws.
   */
  async ping(timeoutMs: number): Promise<boolean> {
    const limit = deadline(timeoutMs);
    const signal = limit.signal;
    const headers = this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : undefined;
    try {
      const res = await fetch(`${this.baseUrl}/models`, { headers, signal });
      await res.body?.cancel();
      if (res.ok) return true;
      if (![404, 405, 501].includes(res.status)) return false;
      const chat = await fetch(`${this.baseUrl}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ model: this.model, messages: [{ role: "user", content: "ping" }], max_tokens: 1, temperature: 0 }),
        signal,
      });
      await chat.body?.cancel();
      return chat.ok;
    } catch {
      return false;
    } finally {
      limit.clear();
    }
  }

  close(): void {}
}
