import { z } from "zod";
import { clampTimeout, DEFAULT_TIMEOUT_MS, directiveHub, MAX_TIMEOUT_MS, MIN_TIMEOUT_MS } from "../lib/work/directive-hub";
import { countPendingDirectives, queryDirectives, resolveScope } from "../lib/work/directives";
import { contributeVaultInfo } from "./vault-info";
import { ALL_SCOPES, defineTool, limitField, READ_ONLY } from "./types";

export const pendingDirectives = defineTool({
  name: "pending_directives",
  description:
    "Unresolved `> [!ai]` callouts: tasks a person left for an agent. Returns a list of {path, line, title, body, done} (title: the callout line's text; body: its following > lines; line: 1-based), in path order. `[!ai-done]` callouts are done and not listed. Do the work, then complete_directive(path, line). For waiting on new ones without polling, use await_directives.",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    path: z.string().optional().describe('Scope to one note ("Projects/Lettuce.md") or folder ("Inbox")'),
    limit: limitField(25),
  }),
  handler({ path, limit }, { vault }) {
    return queryDirectives(vault.indexDb, resolveScope(vault, path)).slice(0, limit);
  },
});

export const awaitDirectives = defineTool({
  name: "await_directives",
  description: [
    "Long-poll for directives: blocks until the set of pending `> [!ai]` callouts changes (a new or completed one; an unrelated edit does not wake it), or until timeout_ms,",
    `then returns {cursor, timedOut, directives} (directives: the current pending ones, same shape as pending_directives). timeout_ms defaults to ${DEFAULT_TIMEOUT_MS} and is clamped to [${MIN_TIMEOUT_MS}, ${MAX_TIMEOUT_MS}].`,
    "Pass back the cursor you received; cursor 0 (or a cursor from an earlier server run) returns the backlog at once. On timeout: {timedOut: true, directives: []}, just call again.",
    "Several workers: give each a distinct `worker` id; returned directives are leased to it for ~2 minutes (claim, default true), a directive leased to another worker is withheld, your own leases stay visible, and a lapsed lease frees the directive.",
  ].join(" "),
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    cursor: z.number().int().min(0).default(0).describe("The cursor from your last call; 0 on the first call"),
    timeout_ms: z.number().optional().describe(`Longest wait in ms (default ${DEFAULT_TIMEOUT_MS}; clamped to [${MIN_TIMEOUT_MS}, ${MAX_TIMEOUT_MS}])`),
    path: z.string().optional().describe('Scope to one note or folder ("Inbox")'),
    worker: z.string().min(1).max(200).optional().describe('A stable id for this worker (e.g. "mac/serve"); enables leases'),
    claim: z.boolean().default(true).describe("Lease returned directives to `worker` (default true; no effect without worker)"),
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
