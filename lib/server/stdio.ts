import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { ALL_TOOLS } from "../../tools";
import type { Scope } from "../store/tokens";
import type { VaultContext } from "../vault-context";
import { writeService } from "../write/service";
import { McpDispatcher } from "./mcp";

/**
 * MCP over stdin/stdout for clients that spawn servers. The process owner
 * launched us, so there is no bearer token: the scope comes from --scope.
 */
export async function serveStdio(vault: VaultContext, scope: Scope): Promise<void> {
  writeService(vault); // crash recovery at start, as over HTTP
  const mcp = new McpDispatcher(vault, ALL_TOOLS);
  const transport = new StdioServerTransport();
  const caller = { token: { name: "stdio", scope } };
  await new Promise<void>((resolve) => {
    transport.onmessage = async (msg) => {
      const res = await mcp.handle(msg, caller);
      if (res === null) return;
      for (const r of Array.isArray(res) ? res : [res]) await transport.send(r as JSONRPCMessage);
    };
    transport.onclose = () => resolve();
    transport.onerror = (e) => console.error("lettuce stdio:", e.message);
    process.stdin.on("end", () => resolve());
    void transport.start();
  });
}
