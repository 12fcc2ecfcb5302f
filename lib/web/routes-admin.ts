// The rest of the person's side: agent work waiting (directives, leases,
// mentions, the log, uncompiled sources), wiki health and lint, the graph,
// tokens, and a read-only view of the settings and providers in use.
import type { Hono } from "hono";
import { z } from "zod";
import { ToolError } from "../errors";
import { RULES, type Rule } from "../hygiene/lint-config";
import { offloaded } from "../offload/offloaded";
import { describeEmbedder, selectChat, selectEmbedder } from "../providers/select";
import { vecVersion } from "../store/index-db";
import { contextMode } from "../store/context-runs";
import { createToken, listTokens, revokeTokenById, SCOPES, type Scope } from "../store/tokens";
import { VERSION } from "../version";
import type { VaultContext } from "../vault-context";
import { directiveHub } from "../work/directive-hub";
import { ALL_NOTES, countPendingDirectives, directiveKeys, queryDirectives } from "../work/directives";
import { ledgerNewestFirst, uncompiledSources } from "../work/ledger";
import { queryMentions } from "../work/mentions";
import type { WebEnv } from "./auth";
import { clientConfig } from "./client-config";
import { localGraph, wholeGraph } from "./graph";
import { healthHistory, recordHealth } from "./health-history";
import { jsonBody, paging } from "./request";
import { badRequest, errorResponse } from "./security";

const WORK_LIST = 100;
const FINDINGS_PER_RULE = 10;

/** Environment settings the Settings page shows; the API key is shown as set or not, never its value. */
const ENV_SHOWN = ["LETTUCE_EMBED_PROVIDER", "LETTUCE_EMBED_MODEL", "LETTUCE_EMBED_BASE_URL", "LETTUCE_LLM_PROVIDER", "LETTUCE_LLM_MODEL", "LETTUCE_LLM_BASE_URL", "LETTUCE_RERANK_URL", "OLLAMA_HOST"];

export function adminRoutes(app: Hono<WebEnv>, vault: VaultContext): void {
  const idb = vault.indexDb;

  app.get("/api/work", (c) => {
    const pending = queryDirectives(idb, ALL_NOTES, { limit: WORK_LIST });
    const keys = directiveKeys(pending);
    const leases = directiveHub(vault).liveLeases();
    const directives = pending.map((d, i) => {
      const l = leases.get(keys[i]!);
      return { ...d, lease: l ? { worker: l.worker, expiresAt: new Date(Date.now() + l.remainingMs).toISOString() } : null };
    });
    const ledger = ledgerNewestFirst(idb, vault.root);
    const sources = uncompiledSources(idb);
    return c.json({
      directives: { items: directives, total: countPendingDirectives(idb) },
      mentions: { items: queryMentions(idb, { limit: WORK_LIST }) },
      log: { items: ledger.slice(0, 50), total: ledger.length },
      uncompiledSources: { items: sources.slice(0, WORK_LIST), total: sources.length },
    });
  });

  // Both in a read worker, as the lint and wiki_health tools are: the whole-vault plan behind them takes
  // seconds and ~100 MB at 100k notes, and is kept once, there, not again on the event loop.
  app.get("/api/hygiene", async (c) => {
    // Per rule, only the first findings are written (lintPage): a big vault can have millions.
    const { health, rules } = await offloaded.hygieneReport(vault, FINDINGS_PER_RULE);
    try {
      recordHealth(vault.stateDbNoSync, health);
    } catch {
      /* a busy state.db: the hourly recorder catches up */
    }
    return c.json({ health, history: healthHistory(vault.stateDb), rules });
  });

  app.get("/api/lint", async (c) => {
    const rule = c.req.query("rule");
    if (!rule || !(RULES as readonly string[]).includes(rule)) return badRequest(c, `rule must be one of ${RULES.join(", ")}`);
    const { limit, offset } = paging((k) => c.req.query(k), 100);
    const { text } = await offloaded.lint(vault, { rule: rule as Rule }, offset, limit);
    const page = JSON.parse(text) as { items: unknown[]; total: number };
    return c.json({ items: page.items, total: page.total, limit, offset });
  });

  app.get("/api/graph", async (c) => {
    try {
      const center = c.req.query("center");
      if (center) return c.json(await localGraph(vault, center, Number(c.req.query("depth") ?? 1) || 1));
      const cap = Number(c.req.query("cap"));
      return c.json(await wholeGraph(vault, { cap: Number.isFinite(cap) && cap > 0 ? cap : undefined, folder: c.req.query("folder") || undefined }));
    } catch (e) {
      return errorResponse(c, e);
    }
  });

  app.get("/api/tokens", (c) => c.json({ items: listTokens(vault.stateDb, true) }));

  app.post("/api/tokens", async (c) => {
    const body = await jsonBody(
      c.req.raw,
      z.object({
        name: z.string().trim().min(1).max(100).regex(/^[\w .@-]+$/, "use letters, digits, spaces and . _ @ -"),
        scope: z.enum(SCOPES as [Scope, ...Scope[]]),
      }),
    );
    if ("error" in body) return badRequest(c, body.error);
    try {
      const { token, info } = createToken(vault.stateDb, body.name, body.scope);
      const url = new URL("/mcp", c.req.url).toString();
      return c.json({ token, info, url, config: clientConfig(url, token) });
    } catch (e) {
      // createToken refuses a taken name with a plain Error.
      return errorResponse(c, e instanceof Error && /already exists/.test(e.message) ? new ToolError("already-exists", e.message) : e);
    }
  });

  app.post("/api/tokens/:id/revoke", (c) => {
    const id = Number(c.req.param("id"));
    if (!Number.isSafeInteger(id) || id < 1) return badRequest(c, "A token id is a positive number");
    if (!revokeTokenById(vault.stateDb, id)) return errorResponse(c, new ToolError("token-not-found", `No active token with id ${id}`));
    return c.json({ ok: true, id });
  });

  app.get("/api/settings", async (c) => {
    const [emb, chat] = await Promise.all([selectEmbedder(), selectChat()]);
    const env: Record<string, string | null> = {};
    for (const k of ENV_SHOWN) env[k] = process.env[k]?.trim() || null;
    env.LETTUCE_API_KEY = process.env.LETTUCE_API_KEY?.trim() ? "(set)" : null;
    const s = vault.indexer.status;
    return c.json({
      root: vault.root,
      version: VERSION,
      immutablePaths: vault.immutablePaths,
      contextMode: contextMode(vault.stateDb),
      providers: {
        embeddings: emb.provider ? { name: describeEmbedder(emb.provider), reason: emb.reason } : { name: null, reason: emb.reason },
        llm: chat.provider ? { name: `${chat.provider.kind} (${chat.provider.model})`, reason: chat.reason } : { name: null, reason: chat.reason },
      },
      vectorSearch: vecVersion(idb),
      index: { state: s.state, done: s.done, total: s.total, indexedAt: s.indexedAt },
      env,
    });
  });
}
