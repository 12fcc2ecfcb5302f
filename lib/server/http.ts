import { HTTPException } from "hono/http-exception";
import { Hono, type Context } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import { bodyLimit } from "hono/body-limit";
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import { verifyToken, type TokenInfo } from "../store/tokens";
import { toolSearchHttp } from "../toolsearch/http";
import type { VaultContext } from "../vault-context";
import { batchRefusal, JSONRPC, MAX_BATCH, parseJsonRpc, responseAroundBytes, serialiseResponse, type JsonRpcResponse } from "./jsonrpc";
import type { McpDispatcher } from "./mcp";
import { AnswerBudget, type AnswerLedger } from "./answer-budget";
import { mountWebUi } from "../web/app";
import { allowedName, hostnameOf, LOOPBACK, sameOrigin } from "./origin";
import { declaredAgent } from "../web/agent-label";
import { requestStarted } from "../offload/activity";
import { withoutControls } from "../control-chars";
import { envNumber } from "../env-number";
import { declaredBodyBytes, readCharged, RequestBudget, requestBytesPerToken, SERVER_BUSY } from "./request-budget";

export const MAX_BODY_BYTES = envNumber("LETTUCE_MAX_BODY_BYTES", 8 * 1024 * 1024, { min: 1024, max: 1024 ** 3, integer: true });
/**
 * A read token's requests carry queries, paths and ids, never a note's content: 1 MB is far past any of them.
 * At the 8 MB that writes need, one read token's 7.8 MB bodies (660k filter keys, 7.8 MB of "[") held the
 * request thread 1-2 s each in JSON.parse and validation (an audit).
 */
export const MAX_READ_BODY_BYTES = envNumber("LETTUCE_MAX_READ_BODY_BYTES", 1024 * 1024, { min: 1024, max: 1024 ** 3, integer: true });

/** The body of a request past what its token's scope may send, or null: by Content-Length before reading, else by its text. */
function overScopeLimit(scope: string, lengthHeader: string | undefined, text?: string): string | null {
  if (scope !== "read") return null;
  const n = text !== undefined ? Buffer.byteLength(text) : Number(lengthHeader);
  return Number.isFinite(n) && n > MAX_READ_BODY_BYTES ? `Request body over ${MAX_READ_BODY_BYTES} bytes, the most a read token may send` : null;
}

export interface HttpOptions {
  /** Extra host names a browser or tunnel may use (e.g. a tailnet name); loopback names are always allowed. */
  allowedHosts?: string[];
}

type Env = { Variables: { token: TokenInfo } };

/**
 * How many items the JSON array in `text` has, counting only up to `enough`
 * (a scan of the top level that skips strings and nested values; it stops as
 * soon as it has seen `enough`). Malformed text is left to JSON.parse.
 */
export function arrayItemsAtLeast(text: string, enough: number): number {
  let depth = 0;
  let items = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 92) i++; // backslash: skip the escaped character
      else if (ch === 34) inString = false;
      continue;
    }
    // The first non-blank character inside the outer array starts its first item.
    if (depth === 1 && items === 0 && ch > 32 && ch !== 93) items = 1;
    if (ch === 34) inString = true;
    else if (ch === 91 || ch === 123) depth++;
    else if (ch === 93 || ch === 125) {
      if (--depth === 0) break;
    } else if (ch === 44 && depth === 1 && ++items >= enough) return items;
  }
  return items;
}

/**
 * A batch's answers as a streamed JSON array: each answer is serialised and sent
 * when it is made, and the next item runs when the client has taken the last
 * one. Nothing builds the whole answer in memory, which for megabytes of graphs
 * cost the event loop more than the work itself. 202 when no item has an answer.
 */
async function streamBatch(answers: AsyncGenerator<JsonRpcResponse>, ledger: AnswerLedger): Promise<Response> {
  const first = await answers.next();
  if (first.done) return new Response(null, { status: 202 });
  const enc = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    start(ctrl) {
      ctrl.enqueue(enc.encode("[" + serialiseResponse(first.value)));
    },
    async pull(ctrl) {
      const next = await answers.next();
      if (next.done) {
        ctrl.enqueue(enc.encode("]"));
        ctrl.close();
        ledger.release();
      } else ctrl.enqueue(enc.encode("," + serialiseResponse(next.value)));
    },
    async cancel() {
      ledger.release();
      await answers.return(undefined);
    },
  });
  return new Response(stream, { status: 200, headers: { "content-type": "application/json" } });
}

/** Characters (or bytes) of a big answer sent per chunk: the client takes one before the next is made. */
const ANSWER_CHUNK = 1024 * 1024;

/**
 * A note-sized answer, sent a chunk at a time as the client takes it: its reservation goes back once the
 * last chunk is taken or the client goes away (a client that never reads holds only its own token's budget).
 * The answer comes in pieces: text, encoded a chunk at a time, or bytes a worker encoded (sent as they are).
 */
function streamedAnswer(pieces: (string | Uint8Array)[], ledger: AnswerLedger): Response {
  const enc = new TextEncoder();
  let i = 0;
  let at = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(ctrl) {
      while (i < pieces.length && at >= pieces[i]!.length) {
        i++;
        at = 0;
      }
      if (i >= pieces.length) {
        ctrl.close();
        ledger.release();
        return;
      }
      const piece = pieces[i]!;
      let end = Math.min(piece.length, at + ANSWER_CHUNK);
      if (typeof piece === "string") {
        // Never between the two halves of a surrogate pair (each would encode as U+FFFD).
        const last = piece.charCodeAt(end - 1);
        if (end < piece.length && last >= 0xd800 && last <= 0xdbff) end--;
        ctrl.enqueue(enc.encode(piece.slice(at, end)));
      } else ctrl.enqueue(piece.subarray(at, end));
      at = end;
    },
    cancel() {
      ledger.release();
    },
  });
  return new Response(stream, { status: 200, headers: { "content-type": "application/json" } });
}

/** application/json, with parameters (charset) or as a +json suffix type. */
function isJsonContentType(v: string | undefined): boolean {
  const type = v?.split(";")[0]!.trim().toLowerCase();
  return !!type && (type === "application/json" || /^application\/[a-z0-9.+-]*\+json$/.test(type));
}

/**
 * The transport asks clients to accept application/json and text/event-stream. We answer
 * JSON, so one of them (or a wildcard that covers JSON) is enough; no Accept header at
 * all means anything (HTTP's rule), which keeps curl one-liners working.
 */
function acceptsJson(v: string | undefined): boolean {
  if (v === undefined || v.trim() === "") return true;
  return v
    .split(",")
    .map((p) => p.split(";")[0]!.trim().toLowerCase())
    .some((t) => t === "application/json" || t === "text/event-stream" || t === "application/*" || t === "*/*");
}

/**
 * What an exception that reached the app answers. A client that went away while sending its body (the
 * read rejects): nobody is there to answer, and a 33-line stack per such client was most of a long-running
 * server's log (the soak audit). Anything else is a fault of ours: one line in the log, no detail to the
 * client, in the shape its caller reads: the web UI's API and the tool-search endpoint speak {error, kind}
 * (the page shows `error` as text), an MCP client gets a JSON-RPC error.
 */
export function answerError(err: Error, c: Context): Response {
  if (err instanceof HTTPException) return err.getResponse(); // a refusal a middleware made (a 401), as Hono answers it
  if (c.req.raw.signal.aborted || err.name === "AbortError") return c.body(null, 400);
  const path = new URL(c.req.url).pathname;
  console.error(`lettuce http: ${c.req.method} ${path}: ${err.message}`);
  if (path.startsWith("/api/") || path.startsWith("/v1/")) return c.json({ error: "Internal error; see the server log", kind: "internal" }, 500);
  return c.json({ jsonrpc: "2.0", id: null, error: { code: JSONRPC.INTERNAL, message: "Internal error; see the server log" } }, 500);
}

/**
 * The HTTP face of the server: MCP Streamable HTTP (stateless, JSON responses)
 * at /mcp. Order matters: DNS-rebinding checks first (a page on evil.example
 * must learn nothing, not even "401"), then the size cap, then the token.
 */
export function createHttpApp(vault: VaultContext, mcp: McpDispatcher, opts: HttpOptions = {}): Hono<Env> {
  // An IPv6 name arrives in a Host header in brackets: `--host ::` answered 403 at its own printed address.
  const named = (opts.allowedHosts ?? []).map((h) => h.toLowerCase());
  const allowed = new Set([...LOOPBACK, ...named, ...named.filter((h) => h.includes(":") && !h.startsWith("[")).map((h) => `[${h}]`)]);
  const app = new Hono<Env>();
  app.onError(answerError);
  // Per server: one token's note-sized answers not yet read (./answer-budget.ts).
  const answerBudget = new AnswerBudget();

  app.use("*", async (c, next) => {
    const host = c.req.header("host");
    if (host && !allowed.has(hostnameOf(host))) return c.json({ error: "forbidden host" }, 403);
    const origin = c.req.header("origin");
    // The web UI's routes answer a cookie, so only its own page may call them. /mcp and /v1 answer a bearer
    // token that no other page holds: there a local name is enough, and a browser-based MCP client served
    // from another port (an inspector) still reaches the server.
    const bearer = c.req.path === "/mcp" || c.req.path.startsWith("/v1/");
    if (origin && !(bearer ? allowedName(origin, allowed) : sameOrigin(origin, host, c.req.url, allowed))) return c.json({ error: "forbidden origin" }, 403);
    await next();
  });

  // Background embedding pauses while a request is in flight (lib/offload/activity.ts): an authenticated one.
  // Counted for every request, a process with no token sending 401s or /health every 100 ms held the
  // embedding at zero (an audit); the web UI counts its logged-in calls (lib/web/auth.ts).
  const activity = async (_c: unknown, next: () => Promise<void>) => {
    const done = requestStarted();
    try {
      await next();
    } finally {
      done();
    }
  };

  app.get("/health", (c) => c.json({ ok: true, state: vault.indexer.status.state }));

  const limitBody = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => c.json({ jsonrpc: "2.0", id: null, error: { code: JSONRPC.INVALID_REQUEST, message: `Request body over ${MAX_BODY_BYTES} bytes` } }, 413),
  });
  // Every refusal the same flat 401, as plain text with a named realm (Hono's defaults: an octet-stream body, realm="").
  const unauthorized = () => new Response("Unauthorized", { status: 401, headers: { "content-type": "text/plain; charset=utf-8" } });
  const requireToken = bearerAuth({
    realm: "lettuce",
    noAuthenticationHeader: { message: unauthorized },
    invalidToken: { message: unauthorized },
    // A malformed Authorization header is as bad as a wrong token: the same flat 401 (Hono's default is 400).
    invalidAuthenticationHeader: { message: unauthorized, wwwAuthenticateHeader: 'Bearer error="invalid_token"' },
    verifyToken: (token, c) => {
      const info = verifyToken(vault.stateDbNoSync, token);
      if (info) (c as unknown as { set(k: "token", v: TokenInfo): void }).set("token", info);
      return info !== null;
    },
  });
  // Per server: one token's request bodies in flight (./request-budget.ts), refused past it before Bun buffers more.
  const requestBudget = new RequestBudget();
  // A transport-level refusal: no call was read, so no tool answers `rate-limited`; the same kind and
  // retry_after_ms ride in the JSON-RPC error's data, beside HTTP's Retry-After.
  const busy = (c: Context<Env>) => {
    c.header("Retry-After", "1");
    c.header("Connection", "close");
    const message = `Too many requests of this token in flight (${requestBytesPerToken()} bytes of bodies at most; LETTUCE_REQUEST_BYTES_PER_TOKEN): retry when earlier ones have answered`;
    return c.json({ jsonrpc: "2.0", id: null, error: { code: SERVER_BUSY, message, data: { kind: "rate-limited", retry_after_ms: 1000 } } }, 429);
  };
  const inFlight = async (c: Context<Env>, next: () => Promise<void>) => {
    const token = c.get("token");
    const most = token.scope === "read" ? Math.min(MAX_READ_BODY_BYTES, MAX_BODY_BYTES) : MAX_BODY_BYTES;
    const declared = declaredBodyBytes(c.req.raw.headers, most);
    const leave = requestBudget.enter(token.name, declared ?? 0);
    if (!leave) return busy(c);
    try {
      const raw = c.req.raw;
      if (declared === null && raw.body) {
        const body = await readCharged(raw.body, leave, most);
        if (body === "over-budget") return busy(c);
        if (body === "too-large") {
          c.header("Connection", "close");
          const message = overScopeLimit(token.scope, String(most + 1)) ?? `Request body over ${MAX_BODY_BYTES} bytes`;
          return c.json({ jsonrpc: "2.0", id: null, error: { code: JSONRPC.INVALID_REQUEST, message } }, 413);
        }
        c.req.raw = new Request(raw, { body });
      }
      await next();
    } finally {
      leave();
    }
  };
  app.use("/mcp", requireToken, inFlight, limitBody, activity);
  app.use("/v1/*", requireToken, inFlight, limitBody, activity);

  // Tool search for HTTP clients (spec/tool-search.md), the same search as the search_tools tool.
  app.post("/v1/tools/search", async (c) => {
    const text = await c.req.text();
    const over = overScopeLimit(c.get("token").scope, undefined, text);
    if (over) return c.json({ error: over, kind: "too-large" }, 413);
    const [status, body] = await toolSearchHttp(text, c.get("token").scope);
    return c.json(body, status as 200);
  });

  app.post("/mcp", async (c) => {
    // The transport specification: a JSON-RPC body (415 otherwise), and a client that accepts JSON or SSE (406 otherwise).
    if (!isJsonContentType(c.req.header("content-type"))) {
      return c.json({ jsonrpc: "2.0", id: null, error: { code: JSONRPC.INVALID_REQUEST, message: "Unsupported Media Type: send the JSON-RPC message with Content-Type: application/json" } }, 415);
    }
    if (!acceptsJson(c.req.header("accept"))) {
      return c.json({ jsonrpc: "2.0", id: null, error: { code: JSONRPC.INVALID_REQUEST, message: "Not Acceptable: the Accept header must include application/json or text/event-stream" } }, 406);
    }
    const pv = c.req.header("mcp-protocol-version");
    if (pv && !SUPPORTED_PROTOCOL_VERSIONS.includes(pv)) {
      return c.json({ jsonrpc: "2.0", id: null, error: { code: JSONRPC.INVALID_REQUEST, message: `Unsupported MCP-Protocol-Version: ${pv}` } }, 400);
    }
    const scope = c.get("token").scope;
    const early = overScopeLimit(scope, c.req.header("content-length"));
    if (early) return c.json({ jsonrpc: "2.0", id: null, error: { code: JSONRPC.INVALID_REQUEST, message: early } }, 413);
    const text = await c.req.text();
    const late = overScopeLimit(scope, undefined, text);
    if (late) return c.json({ jsonrpc: "2.0", id: null, error: { code: JSONRPC.INVALID_REQUEST, message: late } }, 413);
    // A batch where the protocol has none, or with too many items, is refused before it is parsed
    // (JSON.parse of a 2.4 MB batch was most of what such a request cost).
    if (/^\s*\[/.test(text)) {
      const refusal = batchRefusal(arrayItemsAtLeast(text, MAX_BATCH + 1), pv);
      if (refusal) return c.json({ jsonrpc: "2.0", id: null, error: { code: JSONRPC.INVALID_REQUEST, message: refusal } }, 400);
    }
    let body: unknown;
    try {
      body = parseJsonRpc(text);
    } catch {
      return c.json({ jsonrpc: "2.0", id: null, error: { code: JSONRPC.PARSE_ERROR, message: "Parse error: the body is not valid JSON" } }, 400);
    }
    // Not a JSON-RPC message at all (null, a number, a string): the transport says to answer an input the
    // server cannot accept with an HTTP error status, as the MCP SDK's own server does (it was 200).
    if (body === null || typeof body !== "object") {
      return c.json({ jsonrpc: "2.0", id: null, error: { code: JSONRPC.INVALID_REQUEST, message: "Invalid JSON-RPC message: send a JSON object" } }, 400);
    }
    const token = c.get("token");
    // Big answers count against the token's budget until written (./answer-budget.ts).
    const answers = answerBudget.ledger(token.name);
    const caller = {
      token: { name: token.name, scope: token.scope },
      agent: declaredAgent(withoutControls(c.req.header("x-lettuce-agent") ?? "").slice(0, 100), token.name) || undefined,
      signal: c.req.raw.signal,
      protocolVersion: pv,
      answers,
    };
    // A streamed body gives the bytes back itself (its end, its cancel, or the client gone); anything else here.
    let streamed: Response | null = null;
    try {
      if (Array.isArray(body) && body.length > 0) {
        const refusal = batchRefusal(body.length, pv);
        if (refusal) return c.json({ jsonrpc: "2.0", id: null, error: { code: JSONRPC.INVALID_REQUEST, message: refusal } }, 400);
        const batch = await streamBatch(mcp.batchAnswers(body, caller), answers);
        if (batch.body) streamed = batch;
        return batch;
      }
      const res = await mcp.handle(body, caller);
      if (res === null) return c.body(null, 202);
      // A read worker's big answer came as bytes: sent as they are, never made a string here.
      const around = Array.isArray(res) ? null : responseAroundBytes(res);
      if (around) return (streamed = streamedAnswer(around, answers));
      const answer = Array.isArray(res) ? JSON.stringify(res) : serialiseResponse(res);
      if (answers.bytes > 0) return (streamed = streamedAnswer([answer], answers));
      return c.body(answer, 200, { "content-type": "application/json" });
    } finally {
      const signal = c.req.raw.signal;
      if (!streamed || signal.aborted) answers.release();
      else signal.addEventListener("abort", () => answers.release(), { once: true });
    }
  });

  // Stateless server: no SSE stream to open and no session to end.
  const notAllowed = (c: { header: (k: string, v: string) => void; json: (b: unknown, s: 405) => Response }) => {
    c.header("Allow", "POST");
    return c.json({ jsonrpc: "2.0", id: null, error: { code: JSONRPC.INVALID_REQUEST, message: "Method not allowed: use POST" } }, 405);
  };
  app.get("/mcp", (c) => notAllowed(c));
  app.delete("/mcp", (c) => notAllowed(c));

  // The person's web UI at / (browser sessions only; see lib/web/app.ts).
  mountWebUi(app, vault);

  return app;
}
