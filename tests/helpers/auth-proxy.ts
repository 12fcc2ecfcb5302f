// A loopback proxy that adds `Authorization: Bearer <token>` to every request
// and forwards it to the real server, Host and Origin unchanged. For clients
// that cannot send headers (the MCP conformance suite).
import type { Server } from "bun";

export interface AuthProxy {
  url: string; // the proxied MCP endpoint, http://127.0.0.1:PORT/mcp
  stop(): Promise<void>;
}

export function startAuthProxy(targetMcpUrl: string, token: string): AuthProxy {
  const target = new URL(targetMcpUrl);
  const server: Server<unknown> = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const inUrl = new URL(req.url);
      const headers = new Headers(req.headers);
      headers.set("authorization", `Bearer ${token}`);
      // Bun's fetch sends a Host header given here as is: the server sees what the client sent.
      if (!headers.has("host")) headers.set("host", inUrl.host);
      const body = req.method === "GET" || req.method === "HEAD" ? undefined : await req.arrayBuffer();
      const res = await fetch(`${target.origin}${inUrl.pathname}${inUrl.search}`, { method: req.method, headers, body, redirect: "manual" });
      const out = new Headers(res.headers);
      out.delete("content-encoding"); // fetch already decoded the body
      out.delete("content-length");
      return new Response(res.body, { status: res.status, headers: out });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}${target.pathname}`,
    async stop() {
      await server.stop(true);
    },
  };
}
