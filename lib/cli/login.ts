// `lettuce login <vault>`: a fresh one-time link to the web UI of the server
// running on this vault. The code goes into the vault's state.db (hashed),
// which the running server reads when the link is opened: only someone who
// can write that file (the vault's owner) can mint a working link.
import { liveServer } from "../store/presence";
import { openStateDb } from "../store/state-db";
import { checkVaultDir } from "../vault-dir";
import { createLoginCode, LOGIN_CODE_TTL_MS } from "../web/sessions";
import { parse, UsageError, type Command } from "./command";

/** The login URL for a server whose MCP endpoint is `mcpUrl`. */
export function loginUrl(mcpUrl: string, code: string): string {
  const u = new URL(mcpUrl);
  u.pathname = "/login";
  u.search = `?code=${encodeURIComponent(code)}`;
  return u.toString();
}

export const loginCommand: Command = {
  name: "login",
  summary: "Print a one-time login link to the web UI of the running server",
  usage: [
    "lettuce login <vault> [--json]",
    "",
    `Prints http://HOST:PORT/login?code=… for the server running on this vault (lettuce serve).`,
    `The link works once, for ${LOGIN_CODE_TTL_MS / 60000} minutes, and opens a browser session (7 days).`,
  ].join("\n"),
  async run(argv) {
    const { values, positionals } = parse(argv, { json: { type: "boolean" } });
    if (positionals.length !== 1) throw new UsageError("login takes exactly one vault path");
    const root = checkVaultDir(positionals[0]);
    const server = liveServer(root);
    if (!server) {
      console.error(`lettuce login: no server is running on ${root}; start one with \`lettuce serve ${positionals[0]}\` (it prints a login link too)`);
      return 1;
    }
    const db = openStateDb(root);
    try {
      const { code, expiresAt } = createLoginCode(db);
      const url = loginUrl(server.url, code);
      if (values.json) console.log(JSON.stringify({ url, expiresAt: new Date(expiresAt).toISOString() }));
      else console.log(`Open this link in your browser (it works once, for ${LOGIN_CODE_TTL_MS / 60000} minutes):\n\n  ${url}\n`);
      return 0;
    } finally {
      db.close();
    }
  },
};
