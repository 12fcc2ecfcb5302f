import { z } from "zod";
import { lastLogDate, ledgerNewestFirst, uncompiledSources } from "../lib/work/ledger";
import { queryMentions } from "../lib/work/mentions";
import { contributeVaultInfo } from "./vault-info";
import { ALL_SCOPES, defineTool, limitField, READ_ONLY } from "./types";

export const recentActivity = defineTool({
  name: "recent_activity",
  description: "The log.md ledger, newest first, and sources/ notes nothing links to yet: {entries, uncompiledSources, uncompiledSourcesTotal}.",
  details: "The log.md ledger as data, plus the captured-but-not-compiled work signal. Ledger entries are log.md headings of the form `## [YYYY-MM-DD] op | Title` (the LLM-wiki convention). Returns {entries: [{date, op, title, line}] newest first, uncompiledSources: [paths of notes under sources/ that no page links to yet, the first `limit`], uncompiledSourcesTotal}. Filters: since (YYYY-MM-DD, inclusive), op (e.g. ingest, compile, query, lint; case-insensitive). Parameters: since: Only entries on or after this date, YYYY-MM-DD; op: Only entries of this ledger op, e.g. \"ingest\"; limit: Maximum items to return (default 50, max 1000).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    // A real calendar day: "2026-13-45" matched the pattern and answered no entries, as if nothing happened.
    since: z.iso
      .date("since is a real calendar day, YYYY-MM-DD")
      .optional()
      .describe("YYYY-MM-DD"),
    op: z.string().min(1).optional(),
    limit: limitField(50),
  }),
  handler({ since, op, limit }, { vault }) {
    let entries = ledgerNewestFirst(vault.indexDb, vault.root);
    if (since) entries = entries.filter((e) => e.date >= since);
    if (op) {
      const want = op.trim().toLowerCase();
      entries = entries.filter((e) => e.op === want);
    }
    // A sources/ folder of clipped pages can hold thousands: the same limit as the entries, and the count.
    const sources = uncompiledSources(vault.indexDb);
    return { entries: entries.slice(0, limit), uncompiledSources: sources.slice(0, limit), uncompiledSourcesTotal: sources.length };
  },
});

export const agentMentions = defineTool({
  name: "agent_mentions",
  description: "@handle mentions: [{path, handle, line, context}]. Pass handle for your queue.",
  details: "Find @handle mentions across the vault: a list of {path, handle, line, context} (context = the line, trimmed), in path and line order. Pass handle (case-insensitive, leading @ optional) for one agent's queue. Email addresses (foo@example.com) and mentions inside code are skipped. \"Did anyone leave me work?\" Parameters: handle: Only mentions of this handle, e.g. \"claude\"; limit: Maximum items to return (default 50, max 1000).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    handle: z.string().min(1).optional(),
    limit: limitField(50),
  }),
  handler({ handle, limit }, { vault }) {
    return queryMentions(vault.indexDb, { handle, limit });
  },
});

contributeVaultInfo((info, { vault }) => {
  info.liveness.lastLogDate = lastLogDate(vault.indexDb, vault.root);
});

export const activityTools = [recentActivity, agentMentions];
