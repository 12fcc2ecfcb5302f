import { z } from "zod";
import { clampTimeout, DEFAULT_TIMEOUT_MS, directiveHub, MAX_TIMEOUT_MS, MIN_TIMEOUT_MS } from "../lib/work/directive-hub";
import { countPendingDirectives, queryDirectives, resolveScope } from "../lib/work/directives";
import { contributeVaultInfo } from "./vault-info";
import { ALL_SCOPES, defineTool, limitField, READ_ONLY } from "./types";

export const pendingDirectives = defineTool({
  name: "pending_directives",
  description: "Open > [!ai] callouts left for an agent: [{path, line, title, body}]. Then complete_directive.",
  details: "Unresolved `> [!ai]` callouts: tasks a person left for an agent. Returns a list of {path, line, title, body, done} (title: the callout line's text; body: its following > lines; line: 1-based), in path order. `[!ai-done]` callouts are done and not listed. Do the work, then complete_directive(path, line). For waiting on new ones without polling, use await_directives. Parameters: path: Scope to one note (\"Projects/Lettuce.md\") or folder (\"Inbox\"); limit: Maximum items to return (default 25, max 1000).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    path: z.string().optional().describe('A note or folder, e.g. "Inbox"'),
    limit: limitField(25),
  }),
  handler({ path, limit }, { vault }) {
    return queryDirectives(vault.indexDb, resolveScope(vault, path), { limit });
  },
});

export const awaitDirectives = defineTool({
  name: "await_directives",
  description: "Long-poll until the pending > [!ai] callouts change (or timeout_ms): {cursor, timedOut, directives}. Pass back cursor; worker leases them to you.",
  details: "Long-poll for directives: blocks until the set of pending `> [!ai]` callouts changes (a new or completed one; an unrelated edit does not wake it), or until timeout_ms, then returns {cursor, timedOut, directives} (directives: the current pending ones, same shape as pending_directives). timeout_ms defaults to 25000 and is clamped to [1000, 55000]. Pass back the cursor you received; cursor 0 (or a cursor from an earlier server run) returns the backlog at once. On timeout: {timedOut: true, directives: []}, just call again. Several workers: give each a distinct `worker` id; returned directives are leased to it for ~2 minutes (claim, default true), a directive leased to another worker is withheld, your own leases stay visible, and a lapsed lease frees the directive. Parameters: cursor: The cursor from your last call; 0 on the first call; timeout_ms: Longest wait in ms (default 25000; clamped to [1000, 55000]); path: Scope to one note or folder (\"Inbox\"); worker: A stable id for this worker (e.g. \"mac/serve\"); enables leases; claim: Lease returned directives to `worker` (default true; no effect without worker); limit: Maximum items to return (default 25, max 1000).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    cursor: z.number().int().min(0).default(0).describe("0 first; then the cursor you got"),
    timeout_ms: z.number().optional().describe(`Longest wait, ms (default ${DEFAULT_TIMEOUT_MS}, clamped to ${MIN_TIMEOUT_MS}–${MAX_TIMEOUT_MS})`),
    path: z.string().optional().describe('A note or folder, e.g. "Inbox"'),
    worker: z.string().min(1).max(200).optional().describe("Your stable worker id; enables leases"),
    claim: z.boolean().default(true),
    limit: limitField(25),
  }),
  async handler({ cursor, timeout_ms, path, worker, claim, limit }, { vault, signal }) {
    const scope = resolveScope(vault, path);
    return directiveHub(vault).await({ cursor, timeoutMs: clampTimeout(timeout_ms), scope, worker, claim, limit, signal });
  },
});

contributeVaultInfo((info, { vault }) => {
  info.liveness.pendingDirectives = countPendingDirectives(vault.indexDb);
});

export const directiveTools = [pendingDirectives, awaitDirectives];
