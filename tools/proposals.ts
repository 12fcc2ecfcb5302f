// The agent's side of proposals: what it queued and what became of it.
// The person's side is `lettuce proposals` (lib/cli/proposals.ts).
import { z } from "zod";
import { diffForAgent, listProposals, PROPOSAL_STATUSES, withdrawProposal, type Proposal } from "../lib/write/proposals";
import { AGENT_DIFF_PAGE_CHARS } from "../lib/write/limits";
import type { Scope } from "../lib/store/tokens";
import { defineTool, limitField, offsetField, READ_ONLY } from "./types";

const SCOPES: readonly Scope[] = ["propose", "write"];

function summaryOf(p: Proposal, withDiff: boolean) {
  return {
    proposalId: p.id,
    tool: p.tool,
    path: p.path,
    summary: p.summary,
    status: p.status,
    createdAt: p.createdAt,
    decidedAt: p.decidedAt,
    reason: p.reason,
    editId: p.editId,
    ...(withDiff ? { diff: diffForAgent(p.diff) } : {}),
  };
}

export const listMyProposals = defineTool({
  name: "list_my_proposals",
  description: "Your proposals, newest first: {items: [{proposalId, tool, path, status, reason}], total}.",
  details: "Your token's proposals, newest first, paginated: {items: [{proposalId, tool, path, summary, status, createdAt, decidedAt, reason, editId}], total, offset, limit}. status is pending, approved (editId is its timeline entry), rejected (reason says why) or withdrawn. Filter with `status`; `includeDiff` adds each proposal's unified diff. Parameters: status: Only proposals in this state (default: all); includeDiff: Include each proposal's diff (default false); limit: Maximum items to return (default 50, max 500); offset: Items to skip, for paging (default 0).",
  scopes: SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    status: z.enum(PROPOSAL_STATUSES).optional(),
    includeDiff: z.boolean().default(false),
    limit: limitField(50, 500),
    offset: offsetField,
  }),
  handler({ status, includeDiff, limit, offset }, { vault, token }) {
    const { items, total } = listProposals(vault.stateDb, { token: token.name, status, limit, offset });
    // With diffs, a page ends early once they add up to AGENT_DIFF_PAGE_CHARS (truncated: page on from offset + items).
    const out: ReturnType<typeof summaryOf>[] = [];
    let chars = 0;
    for (const p of items) {
      const s = summaryOf(p, includeDiff);
      chars += s.diff?.length ?? 0;
      if (out.length && chars > AGENT_DIFF_PAGE_CHARS) break;
      out.push(s);
    }
    return { items: out, total, offset, limit, ...(out.length < items.length ? { truncated: true } : {}) };
  },
});

export const withdrawProposalTool = defineTool({
  name: "withdraw_proposal",
  description: "Take back one of your pending proposals: it will not be applied.",
  details: "Take back one of your pending proposals (it will not be applied). Returns the proposal with status withdrawn. Errors: proposal-not-found (no such proposal of yours), proposal-not-pending (already approved, rejected or withdrawn). Parameters: proposalId: The proposalId a write call returned.",
  scopes: SCOPES,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  input: z.object({ proposalId: z.number().int().min(1) }),
  async handler({ proposalId }, { vault, token }) {
    return summaryOf(await withdrawProposal(vault, proposalId, token.name), false);
  },
});

export const proposalTools = [listMyProposals, withdrawProposalTool];
