// A thin MCP JSON-RPC dispatcher over the SDK's protocol constants.
// Why not the SDK's Server + StreamableHTTPServerTransport: in stateless mode
// the SDK wants a fresh server and transport per request (their set-up costs
// more than a keyword query), and its tool-result schema has no place for the
// spec's top-level `kind` on failures. The SDK still carries stdio and is the
// client in our tests.
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { asCaller, CallerGate } from "../offload/caller";
import type { AnswerLedger } from "./answer-budget";
import { machineFault, ToolError } from "../errors";
import { declaredAgent } from "../web/agent-label";
import { compactSchema, invalidArgumentsText, MAX_ARGUMENT_VALUES, tooManyValues } from "../tool-schema";
import { auditLog } from "../audit/log";
import { changeJournal } from "../changes/journal";
import { JsonText } from "../offload/json-text";
import { offloaded } from "../offload/offloaded";
import type { Scope } from "../store/tokens";
import type { VaultContext } from "../vault-context";
import { ContentParts, type ToolContext, type ToolDef } from "../../tools/types";
import { VERSION } from "../version";
import { handleResources } from "./resources";
import { withoutControls } from "../control-chars";
import { answerBytes, batchRefusal, echoId, JSONRPC, MAX_BATCH_ANSWER_BYTES, rpcError, withLiteral, type JsonRpcId, type JsonRpcResponse } from "./jsonrpc";
import { envNumber } from "../env-number";

/**
 * Every tool call's time budget (ms); a call still running then answers kind "timeout". Read at call time.
 * A long-poll (await_directives) asks for its own wait and gets that much more; only a tool whose
 * input declares `timeout_ms` may: any other would take the field (then dropped by its schema) as
 * a way to hold a read for minutes.
 */
export function requestBudgetMs(args: unknown, takesWait: boolean): number {
  // At most 110 s: the HTTP server drops a connection idle for 120 s, and a call must answer `timeout` first.
  const base = envNumber("LETTUCE_REQUEST_TIMEOUT_MS", 30_000, { min: 1, max: 110_000 });
  const wait = takesWait ? (args as { timeout_ms?: unknown } | null)?.timeout_ms : undefined;
  return typeof wait === "number" && wait > 0 ? base + Math.min(wait, 120_000) : base;
}

export interface Caller {
  token: { name: string; scope: Scope };
  agent?: string;
  signal?: AbortSignal;
  /** The MCP-Protocol-Version header, when the transport has one (it decides whether batches exist). */
  protocolVersion?: string;
  /** Over stdio a cancelled read goes unanswered; over HTTP the request still needs its answer. */
  transport?: "stdio";
  /** Where the request's note-sized answers are reserved until written (HTTP; ./answer-budget.ts). */
  answers?: AnswerLedger;
}

export const SERVER_INSTRUCTIONS = [
  "Lettuce serves one Markdown vault. Call get_vault_info first: it returns the vault's AGENTS.md brief,",
  "what your token may do (capabilities.proposeOnly), and whether work is waiting (liveness).",
  "Paths are vault-relative (\"Projects/Lettuce.md\"). Tool results are one text part holding JSON;",
  "failures set isError and a `kind` to branch on.",
].join("\n");

const yieldToLoop = () => new Promise<void>((r) => setImmediate(r));

export class McpDispatcher {
  private byName = new Map<string, ToolDef>();
  private listCache = new Map<Scope, unknown[]>();
  /** Last clientInfo.name seen per token: stateless HTTP carries it only on initialize. */
  private clientNames = new Map<string, string>();
  /** Calls in flight by token and id (runKey), for notifications/cancelled. */
  private running = new Map<string, AbortController[]>();

  constructor(
    readonly vault: VaultContext,
    tools: ToolDef[],
    private hooks: { afterCall?: (e: { tool: string; caller: Caller; ok: boolean; kind?: string; args: unknown }) => void } = {},
  ) {
    for (const t of tools) this.byName.set(t.name, t);
    // Workspace services fed by every dispatcher: the audit log records each call, the change journal each index
    // pass (its whole-vault catch-up compared in a read worker).
    changeJournal(vault, () => offloaded.journalDiff(vault));
    const audit = auditLog(vault);
    const after = hooks.afterCall;
    this.hooks = {
      ...hooks,
      afterCall: (e) => {
        audit.record({ tool: e.tool, ok: e.ok, kind: e.kind, args: e.args, tokenName: e.caller.token.name, agent: e.caller.agent || this.clientNames.get(e.caller.token.name) || null });
        after?.(e);
      },
    };
  }

  visibleTools(scope: Scope): unknown[] {
    let list = this.listCache.get(scope);
    if (!list) {
      list = [...this.byName.values()]
        .filter((t) => t.scopes.includes(scope))
        .map((t) => {
          const { $schema: _s, ...schema } = compactSchema(z.toJSONSchema(t.input, { io: "input", unrepresentable: "any" })) as Record<string, unknown>;
          return { name: t.name, description: (scope === "propose" && t.proposeDescription) || t.description, inputSchema: schema, ...(t.annotations ? { annotations: t.annotations } : {}) };
        });
      this.listCache.set(scope, list);
    }
    return list;
  }

  /**
   * Handle one parsed JSON-RPC message (or batch). Returns null when nothing is to be sent back.
   */
  async handle(msg: unknown, caller: Caller): Promise<JsonRpcResponse | JsonRpcResponse[] | null> {
    if (Array.isArray(msg)) {
      if (msg.length === 0) return rpcError(null, JSONRPC.INVALID_REQUEST, "Empty batch");
      const refusal = batchRefusal(msg.length, caller.protocolVersion);
      if (refusal) return rpcError(null, JSONRPC.INVALID_REQUEST, refusal);
      const out: JsonRpcResponse[] = [];
      for await (const r of this.batchAnswers(msg, caller)) out.push(r);
      return out.length ? out : null;
    }
    return this.handleOne(msg, caller);
  }

  /**
   * A batch's answers, one at a time: each item runs after the previous one, with a
   * yield to the event loop between them, so that a batch never holds the server
   * while other callers wait (the HTTP layer serialises each answer as it comes).
   * The caller has checked batchRefusal.
   */
  async *batchAnswers(msgs: unknown[], caller: Caller): AsyncGenerator<JsonRpcResponse> {
    let bytes = 0;
    for (const m of msgs) {
      if (caller.signal?.aborted) return; // the client went away: stop spending work on it
      let r: JsonRpcResponse | null;
      if (bytes > MAX_BATCH_ANSWER_BYTES) {
        const id = m && typeof m === "object" && "id" in m && (typeof m.id === "string" || typeof m.id === "number") ? echoId(m, m.id) : null;
        r = m && typeof m === "object" && "id" in m ? rpcError(id, JSONRPC.INVALID_REQUEST, `Not run: this batch's answers passed ${MAX_BATCH_ANSWER_BYTES} bytes; send the rest in another request`) : null;
      } else {
        r = await this.handleOne(m, caller);
        if (r) bytes += answerBytes(r);
      }
      if (r) yield r;
      await yieldToLoop();
    }
  }

  private async handleOne(msg: unknown, caller: Caller): Promise<JsonRpcResponse | null> {
    if (!msg || typeof msg !== "object" || Array.isArray(msg)) return rpcError(null, JSONRPC.INVALID_REQUEST, "Invalid JSON-RPC message");
    const m = msg as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
    const hasId = "id" in m;
    const validId = hasId && (typeof m.id === "string" || (typeof m.id === "number" && Number.isFinite(m.id)));
    const id = validId ? echoId(m, m.id as string | number) : null;
    if (m.jsonrpc !== "2.0" || typeof m.method !== "string") {
      // A response from the client (to a request we never send) is ignored; anything else is invalid.
      if (m.jsonrpc === "2.0" && ("result" in m || "error" in m)) return null;
      return rpcError(id, JSONRPC.INVALID_REQUEST, "Invalid JSON-RPC request: need jsonrpc \"2.0\" and a method");
    }
    // JSON-RPC ids are strings or numbers; null, true, [] or {} is not "no id" (that would make it a notification).
    if (hasId && !validId) return rpcError(null, JSONRPC.INVALID_REQUEST, "Invalid JSON-RPC request: id must be a string or a number");
    if (!hasId) {
      // MCP's cancellation: the client gave up on one of its calls (a person pressed stop).
      if (m.method === "notifications/cancelled") this.cancel(caller, (m.params as { requestId?: unknown } | undefined)?.requestId);
      return null; // notifications (notifications/initialized, cancelled, …) get no answer
    }
    const params = (m.params ?? {}) as Record<string, unknown>;
    try {
      switch (m.method) {
        case "initialize":
          return { jsonrpc: "2.0", id, result: this.initialize(params, caller) };
        case "ping":
          return { jsonrpc: "2.0", id, result: {} };
        case "tools/list":
          return { jsonrpc: "2.0", id, result: { tools: this.visibleTools(caller.token.scope) } };
        case "tools/call":
          return await this.cancellable(m.id as string | number, caller, params.name, (c) => this.callTool(id, params, c));
        case "resources/list":
        case "resources/read":
        case "resources/templates/list": {
          const r = await handleResources(this.vault, m.method, params, caller.token.scope);
          return "error" in r ? rpcError(id, r.error.code, r.error.message, r.error.data) : { jsonrpc: "2.0", id, result: r.result };
        }
        default:
          return rpcError(id, JSONRPC.METHOD_NOT_FOUND, `Method not found: ${m.method}`);
      }
    } catch (e) {
      console.error(`lettuce: ${m.method} failed:`, e);
      return rpcError(id, JSONRPC.INTERNAL, "Internal error");
    }
  }

  /**
   * Run a call that notifications/cancelled may stop: its tool sees the abort through its signal (a read in a
   * worker is abandoned, a model call stopped). Calls are found by their token and id: one token cannot cancel
   * another's. The MCP spec asks that a cancelled call get no answer: so over stdio, for a read. A write that
   * began still lands, and its caller hears what happened. Over HTTP the request is answered all the same: two
   * clients sharing a token number their calls alike, and a late cancel of one's finished call could stop the
   * other's, which must then hear why rather than wait for an answer that never comes.
   */
  private async cancellable(rawId: string | number, caller: Caller, tool: unknown, run: (c: Caller) => Promise<JsonRpcResponse>): Promise<JsonRpcResponse | null> {
    const key = runKey(caller, rawId);
    const ctrl = new AbortController();
    const list = this.running.get(key) ?? [];
    list.push(ctrl);
    this.running.set(key, list);
    try {
      const res = await run({ ...caller, signal: caller.signal ? AbortSignal.any([caller.signal, ctrl.signal]) : ctrl.signal });
      const read = typeof tool === "string" && this.byName.get(tool)?.annotations?.readOnlyHint === true;
      return ctrl.signal.aborted && caller.transport === "stdio" && read ? null : res;
    } finally {
      const left = (this.running.get(key) ?? []).filter((c) => c !== ctrl);
      if (left.length) this.running.set(key, left);
      else this.running.delete(key);
    }
  }

  /** Stop the call a notifications/cancelled names, when exactly one of this token's calls has that id (two
   * clients sharing a token may both use it: then neither is stopped; the spec lets a server ignore a cancel). */
  private cancel(caller: Caller, requestId: unknown): void {
    if (typeof requestId !== "string" && typeof requestId !== "number") return;
    const list = this.running.get(runKey(caller, requestId));
    if (list?.length === 1) list[0]!.abort();
  }

  private initialize(params: Record<string, unknown>, caller: Caller) {
    const requested = typeof params.protocolVersion === "string" ? params.protocolVersion : LATEST_PROTOCOL_VERSION;
    const clientName = (params.clientInfo as { name?: unknown } | undefined)?.name;
    const label = typeof clientName === "string" ? withoutControls(clientName).slice(0, 100) : "";
    // Over any transport (stdio too), a client may not name itself the person (../web/agent-label.ts).
    if (label) this.clientNames.set(caller.token.name, declaredAgent(label, caller.token.name));
    return {
      protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION,
      capabilities: { tools: { listChanged: false }, resources: { subscribe: false, listChanged: false } },
      serverInfo: { name: "lettuce", title: "Lettuce", version: VERSION },
      instructions: SERVER_INSTRUCTIONS,
    };
  }

  private async callTool(id: JsonRpcId, params: Record<string, unknown>, caller: Caller): Promise<JsonRpcResponse> {
    const name = params.name;
    if (typeof name !== "string") return rpcError(id, JSONRPC.INVALID_PARAMS, "tools/call needs params.name (a string)");
    const tool = this.byName.get(name);
    if (!tool) {
      this.hooks.afterCall?.({ tool: name, caller, ok: false, kind: "unknown-tool", args: undefined });
      return rpcError(id, JSONRPC.INVALID_PARAMS, `Unknown tool: ${name}`);
    }
    // Reads get a time budget and stop waiting when it runs out. Writes have none: once a
    // write has started, its caller must hear what really happened, not "timeout"; nor do
    // the reads that legitimately run long (embedding a whole vault).
    const isRead = tool.annotations?.readOnlyHint === true && !tool.longRunning;
    const budgetMs = requestBudgetMs(params.arguments, "timeout_ms" in tool.input.shape);
    const budget = isRead ? AbortSignal.timeout(budgetMs) : undefined;
    const ctx: ToolContext = {
      vault: this.vault,
      token: caller.token,
      agent: caller.agent || this.clientNames.get(caller.token.name) || caller.token.name,
      signal: budget && caller.signal ? AbortSignal.any([caller.signal, budget]) : (budget ?? caller.signal),
    };
    // Answers not yet read count against the token (./answer-budget.ts): what this call reserved, then what it made.
    const answers = caller.answers;
    const unread = () => new ToolError("timeout", `${name} was cancelled while waiting for this token's earlier answers to be read`);
    let reserved = 0;
    if (answers) {
      ctx.reserveAnswer = async (bytes) => {
        await answers.reserve(bytes, ctx.signal).catch(() => {
          throw unread();
        });
        reserved += bytes;
      };
    }
    if (!tool.scopes.includes(caller.token.scope)) {
      this.hooks.afterCall?.({ tool: name, caller, ok: false, kind: "forbidden", args: params.arguments });
      return { jsonrpc: "2.0", id, result: toolFailure("forbidden", `The ${caller.token.scope} token may not call ${name}`) };
    }
    if (tooManyValues(params.arguments)) {
      this.hooks.afterCall?.({ tool: name, caller, ok: false, kind: "invalid-params", args: undefined });
      return rpcError(id, JSONRPC.INVALID_PARAMS, `Invalid arguments for ${name}: more than ${MAX_ARGUMENT_VALUES} values; no call needs that many`);
    }
    const parsed = tool.input.safeParse(params.arguments ?? {});
    if (!parsed.success) {
      this.hooks.afterCall?.({ tool: name, caller, ok: false, kind: "invalid-params", args: params.arguments });
      return rpcError(id, JSONRPC.INVALID_PARAMS, `Invalid arguments for ${name}: ${invalidArgumentsText(parsed.error)}`);
    }
    try {
      // One token's calls are worked on a few at a time (the rest wait their turn, in order), and what they
      // queue in the read workers takes turns with other callers' (lib/offload/caller.ts). A long-poll waits
      // rather than works, so it takes no turn: an agent parked on await_directives can still call.
      const key = caller.token.name;
      const work = async () => {
        const leave =
          name === "await_directives"
            ? () => {}
            : await CALLS.enter(key, ctx.signal).catch(() => {
                throw new ToolError("timeout", `${name} was cancelled while waiting for this token's earlier calls to finish`);
              });
        try {
          await answers?.door(ctx.signal).catch(() => {
            throw unread();
          });
          return await asCaller(key, () => tool.handler(parsed.data, ctx));
        } finally {
          leave();
        }
      };
      const value = budget ? await withinBudget(work(), budget, name, budgetMs) : await work();
      this.hooks.afterCall?.({ tool: name, caller, ok: true, args: parsed.data });
      // A read worker's result arrives serialised already (JsonText): keep its escaped form for serialiseResponse.
      const answer: JsonRpcResponse =
        value instanceof JsonText
          ? { jsonrpc: "2.0", id, result: { content: [withLiteral(textPart(value), value)] } }
          : value instanceof ContentParts
            ? { jsonrpc: "2.0", id, result: { content: value.parts } }
            : { jsonrpc: "2.0", id, result: { content: [{ type: "text", text: JSON.stringify(value) }] } };
      answers?.hold(answerBytes(answer) - reserved);
      return answer;
    } catch (e) {
      // A refusal, or a fault of the machine the caller can act on (a full disk: errors.ts machineFault).
      const refusal = e instanceof ToolError ? e : machineFault(e);
      if (refusal) {
        if (refusal !== e) console.error(`lettuce: tool ${name} failed: ${(e as Error).message}`);
        this.hooks.afterCall?.({ tool: name, caller, ok: false, kind: refusal.kind, args: parsed.data });
        return { jsonrpc: "2.0", id, result: toolFailure(refusal.kind, refusal.message, refusal.data) };
      }
      // Never a stack trace to the client: log it here, say "internal" there.
      console.error(`lettuce: tool ${name} failed:`, e);
      this.hooks.afterCall?.({ tool: name, caller, ok: false, kind: "internal", args: parsed.data });
      return { jsonrpc: "2.0", id, result: toolFailure("internal", `Internal error in ${name}; see the server log`) };
    }
  }
}

/** Calls one token may have worked on at once (LETTUCE_CALLS_PER_TOKEN, default 8); the rest wait their turn. */
const CALLS = new CallerGate(() => {
  return envNumber("LETTUCE_CALLS_PER_TOKEN", 8, { min: 1, max: 1000, integer: true });
});

/** A call's key for cancellation: its token and its id as the client wrote it ("7" and 7 are different ids). */
function runKey(caller: Caller, id: string | number): string {
  return `${caller.token.name}\u0000${typeof id}\u0000${id}`;
}

/** The handler's result, or a `timeout` ToolError once the budget's signal fires (whichever comes first). */
function withinBudget<T>(work: Promise<T>, budget: AbortSignal, tool: string, ms: number): Promise<T> {
  const timeout = () => new ToolError("timeout", `${tool} ran out of its ${ms} ms time budget; narrow the request (a smaller limit, depth or folder) and try again`, { budgetMs: ms });
  if (budget.aborted) return Promise.reject(timeout());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(timeout());
    budget.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => budget.removeEventListener("abort", onAbort));
  });
}

/** A text part whose text is unescaped from the worker's literal only if read (./jsonrpc.ts serialiseResponse uses the literal). */
function textPart(value: JsonText): { type: "text"; text: string } {
  return {
    type: "text",
    get text() {
      return value.text;
    },
  };
}

/**
 * A failed call: one JSON text part like every result ({"error", "kind", …details}),
 * plus `kind` at the top level as the spec's envelope shows, and `retry_after_ms`
 * beside it for the rate-limited and not-ready kinds. `data` keeps the details for
 * clients that read them there.
 */
export function toolFailure(kind: string, message: string, data?: Record<string, unknown>) {
  const retry = data?.retry_after_ms;
  return {
    content: [{ type: "text", text: JSON.stringify({ error: message, kind, ...(data ?? {}) }) }],
    isError: true,
    kind,
    ...(typeof retry === "number" ? { retry_after_ms: retry } : {}),
    ...(data ? { data } : {}),
  };
}
