import { ALL_TOOLS } from "../../tools";
import type { Scope } from "../store/tokens";
import type { VaultContext } from "../vault-context";
import { writeService } from "../write/service";
import { JSONRPC, parseJsonRpc, serialiseResponse, type JsonRpcResponse } from "./jsonrpc";
import { McpDispatcher, type Caller } from "./mcp";

/** A line longer than this (bytes) is answered with a parse error instead of being parsed (the SDK's stdio buffer limit). */
export const MAX_STDIO_LINE = 10 * 1024 * 1024;
// Calls answered at once, and lines read ahead of them.
const MAX_IN_FLIGHT = 32;
const MAX_WAITING = 256;

/**
 * Calls `onLine` with each line of `input` (UTF-8, without its "\n"), and `onTooLong`
 * once for a line past `max` bytes, whose bytes are dropped as they come rather than
 * held: node:readline kept a 400 MB line without a newline whole before anything
 * could refuse it. Resolves when the input ends.
 */
export function boundedLines(input: NodeJS.ReadableStream, max: number, onLine: (line: string) => void, onTooLong: () => void): Promise<void> {
  let parts: Buffer[] = [];
  let size = 0;
  let overflow = false;
  const end = (tail: Buffer) => {
    if (overflow) onTooLong();
    else onLine(Buffer.concat([...parts, tail]).toString("utf8"));
    parts = [];
    size = 0;
    overflow = false;
  };
  const add = (piece: Buffer) => {
    if (overflow) return;
    size += piece.length;
    if (size > max) {
      overflow = true;
      parts = [];
    } else parts.push(piece);
  };
  return new Promise((resolve, reject) => {
    input.on("data", (chunk: Buffer | string) => {
      let buf = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      for (let nl = buf.indexOf(10); nl !== -1; nl = buf.indexOf(10)) {
        if (!overflow && size + nl > max) {
          overflow = true;
          parts = [];
        }
        end(overflow ? Buffer.alloc(0) : buf.subarray(0, nl));
        buf = buf.subarray(nl + 1);
      }
      if (buf.length) add(Buffer.from(buf)); // a copy: the stream may reuse its chunk
    });
    input.once("end", () => {
      if (size || overflow) end(Buffer.alloc(0));
      resolve();
    });
    input.once("error", reject);
    // Destroyed (the client is gone): no "end" comes, and whoever waits on the lines must go on.
    input.once("close", () => resolve());
  });
}

/**
 * MCP over stdin/stdout for clients that spawn servers: one JSON-RPC message
 * per line. The process owner launched us, so there is no bearer token: the
 * scope comes from --scope.
 *
 * Lines are read by boundedLines and handed to the same dispatcher as
 * HTTP, rather than through the SDK's StdioServerTransport, because that
 * transport parses with plain JSON.parse (an id past 2^53 comes back rounded)
 * and drops a line that is not valid JSON-RPC without answering, where the
 * JSON-RPC spec asks for -32700 / -32600.
 */
export async function serveStdio(vault: VaultContext, scope: Scope, opts: { clientGone?: AbortSignal } = {}): Promise<void> {
  writeService(vault); // crash recovery at start, as over HTTP
  const mcp = new McpDispatcher(vault, ALL_TOOLS);
  const caller: Caller = { token: { name: "stdio", scope }, transport: "stdio" };
  // A long poll (await_directives parks for up to 55 s) must not keep the process alive for a client that has
  // gone: it is cancelled a moment after stdin closes. Every other call still answers, however slow the reader.
  const ending = new AbortController();
  // Set when stdout's write says the client is not reading (Bun reports no writableLength), until it drains.
  let unreadAnswers = false;
  // The client closed its end of stdout (EPIPE): nobody is left to answer. Without this the error was
  // uncaught, a crash with a stack trace that left the process's users/ file behind (the lifecycle audit).
  // `opts.clientGone`: the process that started this one has exited (lib/cli/serve.ts watches it).
  let clientGone = false;
  const goodbye = () => {
    clientGone = true;
    ending.abort();
    process.stdin.destroy();
  };
  process.stdout.on("error", goodbye);
  if (opts.clientGone?.aborted) goodbye();
  else opts.clientGone?.addEventListener("abort", goodbye, { once: true });
  const send = (r: JsonRpcResponse | JsonRpcResponse[]) => {
    if (clientGone) return;
    if (!process.stdout.write((Array.isArray(r) ? JSON.stringify(r) : serialiseResponse(r)) + "\n")) unreadAnswers = true;
  };
  /** The message on one line, or undefined when the line was answered with a parse error (or is empty). */
  const read = (line: string): unknown => {
    if (!line.trim()) return undefined;
    try {
      return parseJsonRpc(line);
    } catch {
      send(parseError("the line is not valid JSON"));
      return undefined;
    }
  };
  const answer = async (msg: unknown) => {
    const res = await mcp.handle(msg, isLongPoll(msg) ? { ...caller, signal: ending.signal } : caller);
    // Batches exist only before the version the client and server agreed on (there is no header here).
    const agreed = !Array.isArray(res) && (res?.result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
    if (isInitialize(msg) && typeof agreed === "string") caller.protocolVersion = agreed;
    if (res !== null) send(res);
  };
  // Messages are answered concurrently, as over HTTP: a slow call does not hold up a ping behind it.
  // But within bounds: at most MAX_IN_FLIGHT at once, none started while the client leaves answers
  // unread (stdout's write said so, until it drains), and stdin is not read on while lines wait. A client that sent
  // 1,500 heavy calls and never read stdout grew the process past 1 GB (an audit).
  const inFlight = new Set<Promise<void>>();
  const waiting: unknown[] = [];
  // Lines after an initialize wait for it: it decides the protocol version the next messages are held to.
  let initialized: Promise<void> = Promise.resolve();
  const pump = () => {
    while (waiting.length && inFlight.size < MAX_IN_FLIGHT && !unreadAnswers) {
      const msg = waiting.shift();
      const run = () => answer(msg).catch((e) => console.error("lettuce stdio:", (e as Error).message));
      const p = isInitialize(msg) ? (initialized = initialized.then(run)) : initialized.then(run);
      inFlight.add(p);
      void p.finally(() => {
        inFlight.delete(p);
        pump();
      });
    }
    if (waiting.length >= MAX_WAITING) process.stdin.pause();
    else if (waiting.length < MAX_WAITING / 2) process.stdin.resume();
  };
  process.stdout.on("drain", () => {
    unreadAnswers = false;
    pump();
  });
  const onLine = (raw: string) => {
    const msg = read(raw.replace(/\r$/, ""));
    if (msg === undefined) return;
    // A cancellation is acted on at once, not queued behind the calls it may be about: a call still waiting
    // for its turn is dropped unanswered, one under way is stopped by the dispatcher.
    const cancelled = cancelledId(msg);
    if (cancelled !== undefined) {
      // Only a tool call (an initialize cannot be cancelled, says the spec); one not started has done nothing.
      const i = waiting.findIndex((w) => isToolCall(w) && (w as { id?: unknown }).id === cancelled);
      if (i !== -1) waiting.splice(i, 1);
      else void mcp.handle(msg, caller);
      return;
    }
    waiting.push(msg);
    pump();
  };
  await boundedLines(process.stdin, MAX_STDIO_LINE, onLine, () => send(parseError(`message longer than ${MAX_STDIO_LINE} bytes`))).catch(() => {});
  // stdin closed: the answers to what was already asked still go out, to a client that reads them.
  /** True once stdout drained (or closed); false when it took no more for STDOUT_STALL_MS. */
  const flushed = () =>
    new Promise<boolean>((resolve) => {
      const done = (drained: boolean) => {
        clearTimeout(timer);
        for (const e of ["drain", "close", "error"]) process.stdout.off(e, onEvent);
        resolve(drained);
      };
      const onEvent = () => done(true);
      const timer = setTimeout(() => done(false), STDOUT_STALL_MS);
      for (const e of ["drain", "close", "error"]) process.stdout.on(e, onEvent);
    });
  const grace = setTimeout(() => ending.abort(), STDIN_END_GRACE_MS);
  grace.unref?.();
  for (;;) {
    if (clientGone || (process.stdout as { destroyed?: boolean }).destroyed) {
      // Nobody left to answer: calls not started are dropped (they did nothing), but one under way (a move
      // rewriting 12,000 links) still finishes, never cut off half-way by the exit (the review).
      waiting.length = 0;
      unreadAnswers = false;
    }
    if (!waiting.length && !inFlight.size && !unreadAnswers) break;
    pump();
    if (inFlight.size) await Promise.race(inFlight);
    // Answers still queued for a client that has not read them: the process must not exit before they are
    // out, unless the client stopped reading altogether. One that closed stdin and then stdout unread left
    // no event to wake this loop, and the process ran on as an orphan holding the index (the lifecycle audit).
    else if (!(await flushed())) break;
  }
}

// How long answers may sit unread after stdin closed before the client counts as gone (any drain restarts it).
const STDOUT_STALL_MS = 10_000;

// How long a long poll still parked when stdin closes may go on before it is cancelled.
const STDIN_END_GRACE_MS = 2000;

const isLongPoll = (msg: unknown) =>
  !!msg && typeof msg === "object" && (msg as { method?: unknown }).method === "tools/call" && (msg as { params?: { name?: unknown } }).params?.name === "await_directives";

const isToolCall = (msg: unknown): boolean => !!msg && typeof msg === "object" && (msg as { method?: unknown }).method === "tools/call";

/** The request id a notifications/cancelled names, or undefined for any other message. */
const cancelledId = (msg: unknown): unknown => {
  if (!msg || typeof msg !== "object" || (msg as { method?: unknown }).method !== "notifications/cancelled" || "id" in msg) return undefined;
  return (msg as { params?: { requestId?: unknown } }).params?.requestId ?? undefined;
};

const isInitialize = (msg: unknown) => !!msg && typeof msg === "object" && (msg as { method?: unknown }).method === "initialize";

function parseError(why: string): JsonRpcResponse {
  return { jsonrpc: "2.0", id: null, error: { code: JSONRPC.PARSE_ERROR, message: `Parse error: ${why}` } };
}
