import { z } from "zod";
import { auditLog } from "../lib/audit/log";
import { ALL_SCOPES, defineTool, limitField, READ_ONLY } from "./types";

export const queryAuditLog = defineTool({
  name: "query_audit_log",
  description: "Agent tool calls on this vault, newest first: [{tool, status, targetId, createdAt, agentName, tokenName}].",
  details: "The log of agent tool calls on this vault (HTTP and stdio), newest first: [{id, tool, status, errorKind, targetType, targetId, createdAt, agentName, tokenName}]. targetId is the path or id the call named; arguments' content is never logged. Filter by tool, status and an ISO 8601 from/to range. Kept for the vault's auditRetentionDays (default 90). Parameters: tool: Only calls of this tool, e.g. \"write_note\"; status: Only successful or only failed calls; from: Start of the time range, ISO 8601 (e.g. \"2026-01-01T00:00:00Z\"); to: End of the time range, ISO 8601; limit: Maximum entries (default 50, max 1000).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    tool: z.string().max(200).optional(),
    status: z.enum(["success", "error"]).optional(),
    from: z.string().max(100).optional(),
    to: z.string().max(100).optional(),
    limit: limitField(50, 1000),
  }),
  handler(args, { vault }) {
    return auditLog(vault).query(args);
  },
});

export const auditTools = [queryAuditLog];
