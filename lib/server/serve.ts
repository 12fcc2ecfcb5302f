import type { Server } from "bun";
import { ALL_TOOLS } from "../../tools";
import type { VaultContext } from "../vault-context";
import { writeService } from "../write/service";
import { createHttpApp, MAX_BODY_BYTES } from "./http";
import { McpDispatcher } from "./mcp";

export interface ServeOptions {
  port: number;
  host: string;
  allowedHosts?: string[];
}

export interface RunningServer {
  server: Server<unknown>;
  url: string;
  mcp: McpDispatcher;
  /** The routes the server answers (method and path pattern), for a test to sweep every one. */
  routes: { method: string; path: string }[];
  /** Stop; with `graceMs`, calls under way first get up to that long to answer (no new ones are taken). */
  stop(graceMs?: number): Promise<void>;
}

/** The address cannot be listened on (the port is taken, or the host is none of this machine's). */
export class PortInUseError extends Error {}

/** Start HTTP on host:port (port 0 = any free port) for an open vault. */
export function startHttpServer(vault: VaultContext, opts: ServeOptions): RunningServer {
  // Crash recovery (pending timeline rows, leftover temp files) happens now, not at the first write.
  writeService(vault);
  const mcp = new McpDispatcher(vault, ALL_TOOLS);
  const app = createHttpApp(vault, mcp, { allowedHosts: [opts.host, ...(opts.allowedHosts ?? [])] });
  let server: Server<unknown>;
  try {
    server = Bun.serve({
      port: opts.port,
      hostname: opts.host,
      // Bun rejects larger bodies itself; the app's own cap answers 413 with a JSON body below it.
      maxRequestBodySize: MAX_BODY_BYTES + 1024 * 1024,
      // Long-polls (await_directives) park for up to 55 s.
      idleTimeout: 120,
      fetch: app.fetch,
    });
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "EADDRINUSE" || /in use/i.test(String(e))) throw new PortInUseError(`Port ${opts.port} on ${opts.host} is already in use; pick another with --port`);
    // A --host that names no address of this machine: say so, not the resolver's bare code.
    if (code === "ENOTFOUND" || code === "EADDRNOTAVAIL" || code === "EAI_AGAIN") {
      throw new PortInUseError(`Cannot listen on ${JSON.stringify(opts.host)}: it is not an address of this machine (${code}); try --host 127.0.0.1`);
    }
    throw e;
  }
  const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
  return {
    server,
    url: `http://${host}:${server.port}/mcp`,
    mcp,
    routes: app.routes.map((r) => ({ method: r.method, path: r.path })),
    async stop(graceMs = 0) {
      // A SIGTERM during a write (a move_note rewriting 3,000 links) closed its connection unanswered: the
      // call landed whole or not at all, but the agent could not tell which (the lifecycle audit).
      if (graceMs > 0 && (await Promise.race([server.stop(false).then(() => true), Bun.sleep(graceMs).then(() => false)]))) return;
      await server.stop(true);
    },
  };
}
