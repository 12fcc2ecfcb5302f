// Every LLM call of lib/answer asks for one JSON object (JSON mode on both wire
// formats) and reads it through a shape check. Output that is not that object
// gets exactly one retry, with a reminder; a second failure is a provider-error
// with data.reason "invalid-json" (nothing a model says is passed on unchecked).
import { ToolError } from "../errors";
import { noteChatOutcome } from "../providers/probe";
import { ProviderError, type ChatMessage, type ChatProvider } from "../providers/types";
import { parseJsonObject } from "../semantic/expand";
import { toToolError } from "../semantic/tool-error";

// One way to read a reply's JSON object for every LLM feature (expand's: fences and a leading sentence tolerated).
export { parseJsonObject };

// Characters per token, on the cautious side: English runs about 4, code and
// other scripts fewer. Overestimating the window costs memory; underestimating
// it makes Ollama drop the start of the prompt without a word.
const CHARS_PER_TOKEN = 3;
const MIN_CTX = 4096;
const MAX_CTX = 131_072;

/**
 * The window a request needs, rounded up to a power of two: Ollama reloads a
 * model whenever num_ctx changes, so a few fixed sizes keep it loaded.
 */
export function contextWindowFor(messages: ChatMessage[], maxTokens: number): number {
  const chars = messages.reduce((n, m) => n + m.content.length, 0);
  const need = Math.ceil(chars / CHARS_PER_TOKEN) + maxTokens + 256;
  let ctx = MIN_CTX;
  while (ctx < need && ctx < MAX_CTX) ctx *= 2;
  return ctx;
}

export interface JsonCall<T> {
  /** What the call is for, in the error message ("the answer", "the faithfulness check"). */
  what: string;
  messages: ChatMessage[];
  maxTokens: number;
  /** Read the parsed object into T, or return null when it is not the shape asked for. */
  read: (o: Record<string, unknown>) => T | null;
  signal?: AbortSignal;
}

const REMINDER =
  "Your previous reply was not the JSON object described above. Reply again with only that JSON object: no prose, no code fences, every key present.";

export async function chatJson<T>(chat: ChatProvider, call: JsonCall<T>): Promise<T> {
  const numCtx = contextWindowFor(call.messages, call.maxTokens);
  let messages = call.messages;
  for (let attempt = 1; attempt <= 2; attempt++) {
    let reply: string;
    try {
      reply = await chat.chat(messages, { json: true, temperature: 0, maxTokens: call.maxTokens, numCtx, signal: call.signal });
      noteChatOutcome(chat, true);
    } catch (e) {
      if (e instanceof ProviderError && e.kind === "provider-unavailable") noteChatOutcome(chat, false);
      throw toToolError(e);
    }
    const o = parseJsonObject(reply);
    const v = o ? call.read(o) : null;
    if (v !== null) return v;
    messages = [...call.messages, { role: "user", content: REMINDER }];
  }
  throw new ToolError("provider-error", `The LLM (${chat.model}) did not reply to ${call.what} with the JSON object asked for, twice (one retry); try again, or use a stronger model`, {
    reason: "invalid-json",
    attempts: 2,
  });
}

/** Strings of an array (anything else in it dropped), or [] when it is not an array. */
export function stringsOf(v: unknown, max = 100): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string").slice(0, max) : [];
}
