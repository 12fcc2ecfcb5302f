// A thin MCP JSON-RPC dispatcher over the SDK's protocol constants.
// Why not the SDK's Server + StreamableHTTPServerTransport: in stateless mode
// the SDK wants a fresh server and transport per request (their set-up costs
// more than a keyword query), and its tool-result schema has no place for the
// spec's top-level `kind` on failures. The SDK still carries stdio and is the
// client in our tests.
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { ToolError } from "../errors";
import { auditLog } from "../audit/log";
import { changeJournal } from "../changes/journal";
import type { Scope } from "../store/tokens";
import type { VaultContext } from "../vault-context";
import type { ToolContext, ToolDef } from "../../tools/types";
import { VERSION } from "../version";
import { handleResources } from "./resources";

export const JSONRPC = { PARSE_ERROR: -32700, INVALID_REQUEST: -32600, METHOD_NOT_FOUND: -32601, INVALID_PARAMS: -32602, INTERNAL: -32603 } as const;

export type JsonRpcId = string | number | null;
export interface JsonRpcResponse {
  jsonrpc: "2.0";
  id: JsonRpcId;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export interface Caller {
  token: { name: string; scope: Scope };
  agent?: string;
  signal?: AbortSignal;
}

export const SERVER_INSTRUCTIONS = [
  "Lettuce serves one Markdown vault. Call get_vault_info first: it returns the vault's AGENTS.md brief,",
  "what your token may do (capabilities.proposeOnly), and whether work is waiting (liveness).",
  "Paths are vault-relative (\"Projects/Lettuce.md\"). Tool results are one text part holding JSON;",
  "failures set isError and a `kind` to branch on.",
].join("\n");

function rpcError(id: JsonRpcId, code: number, message: string, data?: unknown): JsonRpcResponse {
  return { jsonrpc: "2.0", id, error: data === undefined ? { code, message } : { code, message, data } };
}

export class McpDispatcher {
  private byName = new Map<string, ToolDef>();
  private listCache = new Map<Scope, unknown[]>();
  /** Last clientInfo.name seen per token: stateless HTTP carries it only on initialize. */
  private clientNames = new Map<string, string>();

  constructor(
    readonly vault: VaultContext,
    tools: ToolDef[],
    private hooks: { afterCall?: (e: { tool: string; caller: Caller; ok: boolean; kind?: string; args: unknown }) => void } = {},
  ) {
    for (const t of tools) this.byName.set(t.name, t);
    // Workspace services fed by every dispatcher: the audit log records each call, the change journal each index pass.
    changeJournal(vault);
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
          const { $schema: _s, ...schema } = z.toJSONSchema(t.input, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
          return { name: t.name, description: (scope === "propose" && t.proposeDescription) || t.description, inputSchema: schema, ...(t.annotations ? { annotations: t.annotations } : {}) };
        });
      this.listCache.set(scope, list);
    }
    return list;
  }

  /** Handle one parsed JSON-RPC message (or batch). Returns null when nothing is to be sent back. */
  async handle(msg: unknown, caller: Caller): Promise<JsonRpcResponse | JsonRpcResponse[] | null> {
    if (Array.isArray(msg)) {
      if (msg.length === 0) return rpcError(null, JSONRPC.INVALID_REQUEST, "Empty batch");
      const out = (await Promise.all(msg.map((m) => this.handleOne(m, caller)))).filter((r): r is JsonRpcResponse => r !== null);
      return out.length ? out : null;
    }
    return this.handleOne(msg, caller);
  }

  private async handleOne(msg: unknown, caller: Caller): Promise<JsonRpcResponse | null> {
    if (!msg || typeof msg !== "object") return rpcError(null, JSONRPC.INVALID_REQUEST, "Invalid JSON-RPC message");
    const m = msg as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
    const hasId = "id" in m && (typeof m.id === "string" || typeof m.id === "number");
    const id = hasId ? (m.id as string | number) : null;
    if (m.jsonrpc !== "2.0" || typeof m.method !== "string") {
      // A response from the client (to a request we never send) is ignored; anything else is invalid.
      if (m.jsonrpc === "2.0" && ("result" in m || "error" in m)) return null;
      return rpcError(id, JSONRPC.INVALID_REQUEST, "Invalid JSON-RPC request: need jsonrpc \"2.0\" and a method");
    }
    if (!hasId) return null; // notifications (notifications/initialized, cancelled, …) get no answer
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
          return await this.callTool(id, params, caller);
        case "resources/list":
        case "resources/read":
        case "resources/templates/list": {
          const r = handleResources(this.vault, m.method, params, caller.token.scope);
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

  private initialize(params: Record<string, unknown>, caller: Caller) {
    const requested = typeof params.protocolVersion === "string" ? params.protocolVersion : LATEST_PROTOCOL_VERSION;
    const clientName = (params.clientInfo as { name?: unknown } | undefined)?.name;
    if (typeof clientName === "string" && clientName) this.clientNames.set(caller.token.name, clientName.slice(0, 100));
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
    const ctx: ToolContext = {
      vault: this.vault,
      token: caller.token,
      agent: caller.agent || this.clientNames.get(caller.token.name) || caller.token.name,
      signal: caller.signal,
    };
    if (!tool.scopes.includes(caller.token.scope)) {
      this.hooks.afterCall?.({ tool: name, caller, ok: false, kind: "forbidden", args: params.arguments });
      return { jsonrpc: "2.0", id, result: toolFailure("forbidden", `The ${caller.token.scope} token may not call ${name}`) };
    }
    const parsed = tool.input.safeParse(params.arguments ?? {});
    if (!parsed.success) {
      this.hooks.afterCall?.({ tool: name, caller, ok: false, kind: "invalid-params", args: params.arguments });
      return rpcError(id, JSONRPC.INVALID_PARAMS, `Invalid arguments for ${name}: ${z.prettifyError(parsed.error)}`);
    }
    try {
      const value = await tool.handler(parsed.data, ctx);
      this.hooks.afterCall?.({ tool: name, caller, ok: true, args: parsed.data });
      return { jsonrpc: "2.0", id, result: { content: [{ type: "text", text: JSON.stringify(value) }] } };
    } catch (e) {
      if (e instanceof ToolError) {
        this.hooks.afterCall?.({ tool: name, caller, ok: false, kind: e.kind, args: parsed.data });
        return { jsonrpc: "2.0", id, result: toolFailure(e.kind, e.message, e.data) };
      }
      // Never a stack trace to the client: log it here, say "internal" there.
      console.error(`lettuce: tool ${name} failed:`, e);
      this.hooks.afterCall?.({ tool: name, caller, ok: false, kind: "internal", args: parsed.data });
      return { jsonrpc: "2.0", id, result: toolFailure("internal", `Internal error in ${name}; see the server log`) };
    }
  }
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
