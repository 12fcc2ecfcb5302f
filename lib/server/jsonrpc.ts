// JSON-RPC 2.0 as MCP carries it, on the wire: error codes, ids echoed exactly as the client wrote them,
// batches and their bounds, and answers serialised (around a read worker's ready-made text when there is one).
// The dispatcher (mcp.ts) decides what to answer; this module is how it is read and written.

import { envNumber } from "../env-number";

export const JSONRPC = { PARSE_ERROR: -32700, INVALID_REQUEST: -32600, METHOD_NOT_FOUND: -32601, INVALID_PARAMS: -32602, INTERNAL: -32603 } as const;

/** A number id travels back as the exact text it was sent as (JSON.rawJSON), so ids above 2^53 are not rounded. */
export type JsonRpcId = string | number | null | RawJson;
type RawJson = { readonly rawJSON: string };

// Batches: MCP 2025-06-18 removed JSON-RPC batching; older versions allow it, within these bounds.
export const FIRST_VERSION_WITHOUT_BATCHES = "2025-06-18";
export const MAX_BATCH = envNumber("LETTUCE_MAX_BATCH", 32, { min: 1, max: 1000, integer: true });
/** A batch stops running items once its answers pass this many bytes; the rest are answered with an error. */
export const MAX_BATCH_ANSWER_BYTES = envNumber("LETTUCE_MAX_BATCH_ANSWER_BYTES", 4 * 1024 * 1024, { min: 1024, max: 1024 ** 3, integer: true });

// Source text of number ids, keyed by the message object (parseJsonRpc's reviver records them).
const rawIds = new WeakMap<object, string>();

/**
 * JSON.parse that remembers how a message's numeric `id` was written when a
 * JS number cannot hold it (past 2^53, or a fraction), so that the answer
 * echoes it exactly (12345678901234567890 stays that, not …7000). The
 * reviver runs only then: it costs a call per value of the body.
 */
export function parseJsonRpc(text: string): unknown {
  const plain = JSON.parse(text);
  const msgs: unknown[] = Array.isArray(plain) ? plain : [plain];
  const inexact = (m: unknown) => !!m && typeof m === "object" && typeof (m as { id?: unknown }).id === "number" && !Number.isSafeInteger((m as { id: number }).id);
  if (msgs.length > MAX_BATCH || !msgs.some(inexact)) return plain;
  return JSON.parse(text, function (this: unknown, key: string, value: unknown, ctx?: { source?: string }) {
    if (key === "id" && typeof value === "number" && ctx?.source && this && typeof this === "object") rawIds.set(this, ctx.source);
    return value;
  });
}

export function echoId(m: object, id: string | number): JsonRpcId {
  const raw = typeof id === "number" ? rawIds.get(m) : undefined;
  return raw !== undefined && raw !== String(id) ? (JSON as unknown as { rawJSON(s: string): RawJson }).rawJSON(raw) : id;
}

/** A text part's JSON string literal that a read worker made already (lib/offload/json-text.ts JsonText). */
export interface ReadyLiteral {
  readonly literal: string;
  /** The literal as UTF-8 bytes, when it came that way (a big answer): sent as they are. */
  readonly bytes: Uint8Array | null;
  readonly size: number;
}

const literals = new WeakMap<object, ReadyLiteral>();

/** A text part whose JSON string literal was made already (a read worker's JsonText): serialiseResponse uses it. */
export function withLiteral<T extends object>(part: T, literal: ReadyLiteral): T {
  literals.set(part, literal);
  return part;
}

function readyLiteral(r: JsonRpcResponse): ReadyLiteral | undefined {
  const part = (r.result as { content?: object[] } | undefined)?.content;
  return part && part.length === 1 && !("isError" in (r.result as object)) ? literals.get(part[0]!) : undefined;
}

/**
 * A response as JSON. A result whose one text part came from a read worker is
 * put together around that part's ready-made literal instead of escaping its
 * (possibly hundreds of kilobytes of) text again on the event loop.
 */
export function serialiseResponse(r: JsonRpcResponse): string {
  const ready = readyLiteral(r);
  if (ready === undefined) return JSON.stringify(r);
  return `{"jsonrpc":"2.0","id":${JSON.stringify(r.id)},"result":{"content":[{"type":"text","text":${ready.literal}}]}}`;
}

/**
 * The same as serialiseResponse, in pieces, when the answer's literal came as bytes: the envelope's two ends
 * around those bytes, never turned into a string. Null for any other answer.
 */
export function responseAroundBytes(r: JsonRpcResponse): [string, Uint8Array, string] | null {
  const bytes = readyLiteral(r)?.bytes;
  return bytes ? [`{"jsonrpc":"2.0","id":${JSON.stringify(r.id)},"result":{"content":[{"type":"text","text":`, bytes, "}]}}"] : null;
}

/** About how many bytes an answer will take, without serialising it: its text and image parts, or a small error. */
export function answerBytes(r: JsonRpcResponse): number {
  const content = (r.result as { content?: { text?: string; data?: string }[] } | undefined)?.content;
  // A worker's ready-made literal stands for its text (reading the text would unescape it).
  return 100 + (content ?? []).reduce((n, c) => n + (literals.get(c)?.size ?? c.text?.length ?? 0) + (c.data?.length ?? 0), 0);
}

export interface JsonRpcResponse {
  jsonrpc: "2.0";
  id: JsonRpcId;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}


/** Why a batch of n messages is refused, or null when it may run. */
export function batchRefusal(n: number, protocolVersion: string | undefined): string | null {
  if (protocolVersion && protocolVersion >= FIRST_VERSION_WITHOUT_BATCHES) {
    return `JSON-RPC batches are not part of MCP ${protocolVersion} (removed in ${FIRST_VERSION_WITHOUT_BATCHES}); send one message per request`;
  }
  if (n > MAX_BATCH) return `Batch of ${n} messages; at most ${MAX_BATCH} per request`;
  return null;
}

export function rpcError(id: JsonRpcId, code: number, message: string, data?: unknown): JsonRpcResponse {
  return { jsonrpc: "2.0", id, error: data === undefined ? { code, message } : { code, message, data } };
}

