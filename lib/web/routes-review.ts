// The person's review of agent work: proposals (diff, approve, reject) and
// the agent-edits timeline (diff, revert). Approve and revert go through the
// same write path as the CLI (lib/write), conflict-checked against the notes
// as they are now, and are recorded on the timeline as the person's.
import type { Hono } from "hono";
import { z } from "zod";
import { ToolError } from "../errors";
import type { VaultContext } from "../vault-context";
import { absOf, diskHash } from "../write/atomic";
import type { FileChange } from "../write/commit";
import { countEdits, editFacets, editGroup, listEdits, type EditRow } from "../write/edits";
import { approveProposal, changeDiff, getProposal, listProposals, previewProposal, PROPOSAL_STATUSES, rejectProposal, type ProposalStatus } from "../write/proposals";
import { revertEdit } from "../write/revert";
import type { WebEnv } from "./auth";
import { jsonBody, paging } from "./request";
import { badRequest, errorResponse } from "./security";
import { sliceWhole } from "../text-cut";
import { WEB_AGENT, WEB_TOKEN } from "./agent-label";

const MAX_DIFF_CHARS = 200_000;

function idParam(raw: string | undefined): number | null {
  const n = Number(raw);
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}


function rowChange(r: EditRow): FileChange {
  if (r.action === "move") return { action: "move", path: r.path, from: r.fromPath ?? undefined, before: r.before, after: r.after };
  if (r.action === "delete") return { action: "delete", path: r.path, trash: r.trashPath ?? undefined, before: r.before, after: null };
  return { action: "write", path: r.path, before: r.before, after: r.after };
}

const cut = (s: string) => (s.length > MAX_DIFF_CHARS ? sliceWhole(s, MAX_DIFF_CHARS) + `\n… diff cut at ${MAX_DIFF_CHARS} characters\n` : s);

export function reviewRoutes(app: Hono<WebEnv>, vault: VaultContext): void {
  const db = vault.stateDb;

  app.get("/api/proposals", (c) => {
    const status = c.req.query("status") ?? "pending";
    if (status !== "all" && !PROPOSAL_STATUSES.includes(status as ProposalStatus)) return badRequest(c, `status must be one of ${PROPOSAL_STATUSES.join(", ")} or all`);
    const { limit, offset } = paging((k) => c.req.query(k), 50);
    const agent = c.req.query("agent") || undefined;
    const { items, total } = listProposals(db, { status: status === "all" ? undefined : (status as ProposalStatus), agent, limit, offset });
    return c.json({ items: items.map(({ diff: _d, base: _b, args: _a, ...p }) => p), total, limit, offset });
  });

  app.get("/api/proposals/:id", async (c) => {
    const id = idParam(c.req.param("id"));
    const p = id === null ? null : getProposal(db, id);
    if (!p) return errorResponse(c, new ToolError("proposal-not-found", `No proposal ${c.req.param("id")}`));
    let diff = p.diff;
    let stale: { kind: string; message: string } | null = null;
    if (p.status === "pending") {
      const now = await previewProposal(vault, p);
      if ("diff" in now) diff = now.diff;
      else stale = { kind: now.error.kind, message: now.error.message };
    }
    // What the same agent proposed before (newest first), so a pattern of good or bad suggestions shows.
    const earlier = listProposals(db, { agent: p.agent, status: undefined, limit: 20, beforeId: p.id }).items;
    return c.json({
      ...p,
      diff,
      stale,
      history: earlier.map((q) => ({ id: q.id, createdAt: q.createdAt, tool: q.tool, path: q.path, summary: q.summary, status: q.status })),
    });
  });

  app.post("/api/proposals/:id/approve", async (c) => {
    const id = idParam(c.req.param("id"));
    if (id === null) return badRequest(c, "A proposal id is a positive number");
    try {
      const outcome = await approveProposal(vault, id, { reindex: true });
      return c.json({ ok: true, ...outcome });
    } catch (e) {
      return errorResponse(c, e);
    }
  });

  app.post("/api/proposals/:id/reject", async (c) => {
    const id = idParam(c.req.param("id"));
    if (id === null) return badRequest(c, "A proposal id is a positive number");
    const body = await jsonBody(c.req.raw, z.object({ reason: z.string().max(2000).optional() }));
    if ("error" in body) return badRequest(c, body.error);
    try {
      const p = await rejectProposal(vault, id, body.reason?.trim() || null);
      return c.json({ ok: true, id: p.id, status: p.status });
    } catch (e) {
      return errorResponse(c, e);
    }
  });

  app.get("/api/edits", (c) => {
    const { limit, offset } = paging((k) => c.req.query(k), 50);
    const filter = { path: c.req.query("path") || undefined, agent: c.req.query("agent") || undefined, tool: c.req.query("tool") || undefined };
    return c.json({ items: listEdits(db, { ...filter, limit, offset }), total: countEdits(db, filter), limit, offset, facets: offset === 0 ? editFacets(db) : undefined });
  });

  app.get("/api/edits/:id", async (c) => {
    const id = idParam(c.req.param("id"));
    const rows = id === null ? [] : await editGroup(db, id);
    if (!rows.length) return errorResponse(c, new ToolError("edit-not-found", `No edit ${c.req.param("id")} in the timeline`));
    // Has anyone changed these notes since? Then Revert will ask before overwriting.
    const changedSince = rows.filter((r) => r.action !== "delete" && diskHash(absOf(vault.root, r.path)) !== r.afterHash).map((r) => r.path);
    return c.json({
      id: rows[0]!.id,
      changes: rows.map((r) => {
        const { before: _b, after: _a, ...rec } = r;
        return { ...rec, diff: cut(changeDiff(rowChange(r))) };
      }),
      changedSince,
    });
  });

  app.post("/api/edits/:id/revert", async (c) => {
    const id = idParam(c.req.param("id"));
    if (id === null) return badRequest(c, "An edit id is a positive number");
    const body = await jsonBody(c.req.raw, z.object({ force: z.boolean().default(false) }));
    if ("error" in body) return badRequest(c, body.error);
    try {
      const res = await revertEdit(vault, id, { force: body.force, reindex: true, agent: WEB_AGENT, token: WEB_TOKEN });
      return c.json({ ok: true, ...res });
    } catch (e) {
      return errorResponse(c, e);
    }
  });
}
