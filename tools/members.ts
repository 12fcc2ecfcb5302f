import { statSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { osUserName } from "../lib/platform/user";
import { listTokens } from "../lib/store/tokens";
import { ALL_SCOPES, defineTool, READ_ONLY } from "./types";


export const listMembers = defineTool({
  name: "list_members",
  description: "Who has access: the owner and one member per token: [{userId, name, role, joinedAt}].",
  details: "Who has access to this vault: the local owner (role owner) and one member per live access token (role = its scope: read, propose or write; name = the token's name), as [{userId, email, name, role, joinedAt}]. email is null (tokens carry none).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({}),
  handler(_args, { vault }) {
    const tokens = listTokens(vault.stateDb);
    // The owner joined when the vault got its .lettuce folder (state.db); the first token is the fallback.
    let since = Number.POSITIVE_INFINITY;
    try {
      const st = statSync(join(vault.root, ".lettuce", "state.db"));
      since = st.birthtimeMs > 0 ? st.birthtimeMs : st.ctimeMs;
    } catch {
      /* the token dates below */
    }
    for (const t of listTokens(vault.stateDb, true)) since = Math.min(since, Date.parse(t.createdAt));
    const owner = { userId: "owner", email: null, name: osUserName(), role: "owner", joinedAt: Number.isFinite(since) ? new Date(since).toISOString() : null };
    return [owner, ...tokens.map((t) => ({ userId: `token:${t.id}`, email: null, name: t.name, role: t.scope, joinedAt: t.createdAt }))];
  },
});

export const memberTools = [listMembers];
