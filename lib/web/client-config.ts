/** What a person pastes into an MCP client to connect it with a token (printed by `serve`, shown by the Tokens page). */
export function clientConfig(url: string, token: string): string {
  const cursor = JSON.stringify({ mcpServers: { lettuce: { url, headers: { Authorization: `Bearer ${token}` } } } }, null, 2);
  return [
    "Claude Code:",
    `  claude mcp add --transport http lettuce ${url} --header "Authorization: Bearer ${token}"`,
    "Cursor / Claude Desktop / any client that takes JSON (mcp.json):",
    cursor.replace(/^/gm, "  "),
  ].join("\n");
}
