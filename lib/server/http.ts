import { Hono } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import { bodyLimit } from "hono/body-limit";
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import { verifyToken, type TokenInfo } from "../store/tokens";
import { toolSearchHttp } from "../toolsearch/http";
import type { VaultContext } from "../vault-context";
import { JSONRPC, type McpDispatcher } from "./mcp";
import { mountWebUi } from "../web/app";

export const MAX_BODY_BYTES = Number(process.env.LETTUCE_MAX_BODY_BYTES) || 8 * 1024 * 1024;

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);

export interface HttpOptions {
  /** Extra host names a browser or tunnel may use (e.g. a tailnet name); loopback names are always allowed. */
  allowedHosts?: string[];
}

function hostnameOf(hostHeader: string): string {
  if (hostHeader.startsWith("[")) return hostHeader.slice(0, hostHeader.indexOf("]") + 1).toLowerCase();
  return hostHeader.split(":")[0]!.toLowerCase();
}

type Env = { Variables: { token: TokenInfo } };

/**
 * The HTTP face of the server: MCP Streamable HTTP (stateless, JSON responses)
 * at /mcp. Order matters: DNS-rebinding checks first (a page on evil.example
 * must learn nothing, not even "401"), then the size cap, then the token.
 */
export function createHttpApp(vault: VaultContext, mcp: McpDispatcher, opts: HttpOptions = {}): Hono<Env> {
  const allowed = new Set([...LOOPBACK, ...(opts.allowedHosts ?? []).map((h) => h.toLowerCase())]);
  const app = new Hono<Env>();

  app.use("*", async (c, next) => {
    const host = c.req.header("host");
    if (host && !allowed.has(hostnameOf(host))) return c.json({ error: "forbidden host" }, 403);
    const origin = c.req.header("origin");
    if (origin) {
      let ok = false;
      try {
        const name = new URL(origin).hostname.toLowerCase();
        ok = allowed.has(name) || allowed.has(`[${name}]`);
      } catch {
        ok = false;
      }
      if (!ok) return c.json({ error: "forbidden origin" }, 403);
    }
    await next();
  });

  app.get("/health", (c) => c.json({ ok: true, state: vault.indexer.status.state }));

  const limitBody = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => c.json({ jsonrpc: "2.0", id: null, error: { code: JSONRPC.INVALID_REQUEST, message: `Request body over ${MAX_BODY_BYTES} bytes` } }, 413),
  });
  const requireToken = bearerAuth({
    // A malformed Authorization header is as bad as a wrong token: the same flat 401 (Hono's default is 400).
    invalidAuthenticationHeader: { message: () => new Response("Unauthorized", { status: 401 }), wwwAuthenticateHeader: 'Bearer error="invalid_token"' },
    verifyToken: (token, c) => {
      const info = verifyToken(vault.stateDb, token);
      if (info) (c as unknown as { set(k: "token", v: TokenInfo): void }).set("token", info);
      return info !== null;
    },
  });
  app.use("/mcp", limitBody, requireToken);
  app.use("/v1/*", limitBody, requireToken);

  // Tool search for HTTP clients (spec/tool-search.md), the same search as the search_tools tool.
  app.post("/v1/tools/search", async (c) => {
    const [status, body] = await toolSearchHttp(await c.req.text(), c.get("token").scope);
    return c.json(body, status as 200);
  });

  app.post("/mcp", async (c) => {
    const pv = c.req.header("mcp-protocol-version");
    if (pv && !SUPPORTED_PROTOCOL_VERSIONS.includes(pv)) {
      return c.json({ jsonrpc: "2.0", id: null, error: { code: JSONRPC.INVALID_REQUEST, message: `Unsupported MCP-Protocol-Version: ${pv}` } }, 400);
    }
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text());
    } catch {
      return c.json({ jsonrpc: "2.0", id: null, error: { code: JSONRPC.PARSE_ERROR, message: "Parse error: the body is not valid JSON" } }, 400);
    }
    const token = c.get("token");
    const res = await mcp.handle(body, {
      token: { name: token.name, scope: token.scope },
      agent: c.req.header("x-lettuce-agent")?.slice(0, 100),
      signal: c.req.raw.signal,
    });
    if (res === null) return c.body(null, 202);
    return c.json(res);
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
