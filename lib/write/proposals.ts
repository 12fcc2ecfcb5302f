// Proposals: what a propose token's write calls become. The operation is
// planned (so it is validated exactly as a real write would be) and stored
// with the hashes of the notes it was planned against and a unified diff. A
// person approves it (re-planned against the notes as they are now, through
// the same write path; a note that changed since is a conflict), rejects it,
// or the agent withdraws it.
import type { Database } from "bun:sqlite";
import { createTwoFilesPatch } from "diff";
import { ToolError } from "../errors";
import { syncStateWal } from "../store/state-db";
import type { VaultContext } from "../vault-context";
import type { FileChange } from "./commit";
import { AGENT_DIFF_CHARS, MAX_DIFF_CHARS, MAX_PENDING_PROPOSALS, MAX_WITHDRAWN_KEPT } from "./limits";
import type { Base, Plan, WriteOp } from "./plan";
import { WRITE_OPS } from "./registry";
import { writeService, type WriteOutcome } from "./service";
import { sliceWhole } from "../text-cut";
import { ownStamp } from "../platform/pid";

export const PROPOSAL_STATUSES = ["pending", "approved", "rejected", "withdrawn"] as const;
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];

export interface Proposal {
  id: number;
  createdAt: string;
  token: string;
  agent: string;
  tool: string;
  path: string;
  args: Record<string, unknown>;
  base: Base;
  summary: string;
  diff: string;
  status: ProposalStatus;
  decidedAt: string | null;
  reason: string | null;
  editId: number | null;
}

function toProposal(r: Record<string, unknown>): Proposal {
  return {
    id: r.id as number,
    createdAt: r.created_at as string,
    token: r.token as string,
    agent: r.agent as string,
    tool: r.tool as string,
    path: r.path as string,
    args: JSON.parse(r.args as string),
    base: JSON.parse(r.base as string),
    summary: r.summary as string,
    diff: r.diff as string,
    status: r.status as ProposalStatus,
    decidedAt: (r.decided_at as string | null) ?? null,
    reason: (r.reason as string | null) ?? null,
    editId: (r.edit_id as number | null) ?? null,
  };
}

const text = (b: Uint8Array | null) => (b === null ? "" : Buffer.from(b).toString("utf8"));

// jsdiff's line diff costs about (lines × edit distance): a 300 KB note replaced by different lines held the
// server 57 s. Each change gets this many lines of edit distance and milliseconds, a plan PLAN_DIFF_MS in all;
// past that the changed region is shown whole (wholeDiff), which costs one pass over the lines.
const DIFF_MAX_EDIT = 1_000;
const DIFF_MS = 40;
const PLAN_DIFF_MS = 80;
/** jsdiff's default, so that a region shown whole reads like the hunks around it. */
const CONTEXT = 4;

const linesOf = (s: string): string[] => s.match(/[^\n]*\n|[^\n]+$/g) ?? [];

/**
 * A unified diff without a line-by-line comparison: the lines the two texts share at the start and the end
 * are kept as context and every line between is shown removed, then added. Exact when one side is empty
 * or the change only adds or only removes lines.
 * Stops once past MAX_DIFF_CHARS: every caller cuts there, and a 2 MiB note would make 4 MB to throw away.
 */
function wholeDiff(oldName: string, newName: string, before: string, after: string, label: boolean): string {
  const a = linesOf(before);
  const b = linesOf(after);
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const from = Math.max(0, pre - CONTEXT);
  const tail = Math.max(0, suf - CONTEXT);
  const oldCount = a.length - tail - from;
  const newCount = b.length - tail - from;
  const removed = a.length - suf - pre;
  const added = b.length - suf - pre;
  const out: string[] = [];
  // Lines only added or only removed are the diff jsdiff would give: nothing to warn of.
  if (label && removed && added) {
    out.push(`(not compared line by line, too many changes to compare in time: the ${removed} old lines between the unchanged start and end are shown removed, the ${added} new ones added)\n`);
  }
  out.push(`--- ${oldName}\n+++ ${newName}\n`);
  out.push(`@@ -${oldCount ? from + 1 : from},${oldCount} +${newCount ? from + 1 : from},${newCount} @@\n`);
  let size = out.reduce((n, s) => n + s.length, 0);
  const emit = (mark: string, line: string) => {
    const s = line.endsWith("\n") ? mark + line : `${mark}${line}\n\\ No newline at end of file\n`;
    out.push(s);
    size += s.length;
  };
  for (let i = from; i < pre && size <= MAX_DIFF_CHARS; i++) emit(" ", a[i]!);
  for (let i = pre; i < a.length - suf && size <= MAX_DIFF_CHARS; i++) emit("-", a[i]!);
  for (let i = pre; i < b.length - suf && size <= MAX_DIFF_CHARS; i++) emit("+", b[i]!);
  for (let i = a.length - suf; i < a.length - tail && size <= MAX_DIFF_CHARS; i++) emit(" ", a[i]!);
  return out.join("");
}

/** The diff of two texts: jsdiff's within `ms`, else the changed region whole and labelled so. */
function textDiff(oldName: string, newName: string, before: string, after: string, ms: number): string {
  if (before === "" || after === "") return before === after ? `--- ${oldName}\n+++ ${newName}\n` : wholeDiff(oldName, newName, before, after, false);
  if (ms > 0) {
    const patch = createTwoFilesPatch(oldName, newName, before, after, undefined, undefined, { maxEditLength: DIFF_MAX_EDIT, timeout: ms });
    if (patch !== undefined) return patch.replace(/^=+\n/, "");
  }
  return wholeDiff(oldName, newName, before, after, true);
}

/** A unified diff of one file change (a write, move or delete), computed within `ms` milliseconds. */
export function changeDiff(c: FileChange, ms = DIFF_MS): string {
  if (c.action === "move") return `rename from ${c.from}\nrename to ${c.path}\n`;
  if (c.action === "delete") return `delete ${c.path} (moved to ${c.trash})\n` + textDiff(`a/${c.path}`, "/dev/null", text(c.before), "", ms);
  return textDiff(c.before === null ? "/dev/null" : `a/${c.path}`, `b/${c.path}`, text(c.before), text(c.after), ms);
}

/** A proposal's diff as an agent is sent it: cut at AGENT_DIFF_CHARS (the person sees it whole). */
export function diffForAgent(diff: string): string {
  if (diff.length <= AGENT_DIFF_CHARS) return diff;
  return sliceWhole(diff, AGENT_DIFF_CHARS) + `\n… ${diff.length - AGENT_DIFF_CHARS} more characters; the person reviewing it sees the whole diff\n`;
}

/**
 * A unified diff of everything the plan would change, cut at MAX_DIFF_CHARS. The changes share PLAN_DIFF_MS
 * (a move rewrites links in thousands of notes), and none is diffed once the cut is reached.
 */
export function planDiff(plan: Plan): string {
  const deadline = performance.now() + PLAN_DIFF_MS;
  let out = "";
  for (const c of plan.changes) {
    if (out.length > MAX_DIFF_CHARS) break;
    out += changeDiff(c, Math.min(DIFF_MS, Math.floor(deadline - performance.now())));
  }
  return out.length > MAX_DIFF_CHARS ? sliceWhole(out, MAX_DIFF_CHARS) + `\n… diff cut at ${MAX_DIFF_CHARS} characters\n` : out;
}

export interface ProposalReceipt {
  proposalId: number;
  status: "pending";
  path: string | null;
  summary: string;
  diff: string;
}

/** Validate and queue a write from a propose token; the vault is not touched. */
export async function propose<A>(vault: VaultContext, op: WriteOp<A>, args: A, who: { agent: string; token: string }): Promise<ProposalReceipt> {
  const db = vault.stateDbNoSync;
  requireRoom(db, who.token);
  const plan = await op.plan(vault, args);
  if (!plan.changes.length) {
    throw new ToolError("no-change", "The proposed edit would not change anything; nothing was queued");
  }
  const path = plan.primary ?? plan.changes[0]!.path;
  const diff = planDiff(plan);
  // Counted again with the insert, under the write lock: the plan was awaited, and calls sent at once (or
  // from another process) all saw room for one more before it.
  const row = db.transaction(() => {
    requireRoom(db, who.token);
    return db
      .query(
        `INSERT INTO proposals(created_at, token, agent, tool, path, args, base, summary, diff, status)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending') RETURNING id`,
      )
      .get(new Date().toISOString(), who.token, who.agent, op.name, path, JSON.stringify(args), JSON.stringify(plan.base), plan.summary, diff) as {
      id: number;
    };
  }).immediate();
  await syncStateWal(vault.root);
  return { proposalId: row.id, status: "pending", path: plan.primary, summary: plan.summary, diff: diffForAgent(diff) };
}

/** Refuse a token at its limit of pending proposals (checked before planning, and again with the insert). */
function requireRoom(db: Database, token: string): void {
  const pending = (db.query("SELECT count(*) AS n FROM proposals WHERE token = ? AND status = 'pending'").get(token) as { n: number }).n;
  if (pending >= MAX_PENDING_PROPOSALS) {
    throw new ToolError("too-many-proposals", `This token already has ${pending} pending proposals (the limit is ${MAX_PENDING_PROPOSALS}); wait for a review or withdraw some`, {
      limit: MAX_PENDING_PROPOSALS,
    });
  }
}

export function pendingCount(db: Database): number {
  return (db.query("SELECT count(*) AS n FROM proposals WHERE status = 'pending'").get() as { n: number }).n;
}

export function getProposal(db: Database, id: number): Proposal | null {
  const r = db.query("SELECT * FROM proposals WHERE id = ?").get(id) as Record<string, unknown> | null;
  return r ? toProposal(r) : null;
}

export function listProposals(
  db: Database,
  opts: { token?: string; agent?: string; status?: ProposalStatus; limit?: number; offset?: number; beforeId?: number } = {},
): { items: Proposal[]; total: number } {
  const where: string[] = [];
  const params: (string | number)[] = [];
  if (opts.beforeId !== undefined) {
    where.push("id < ?");
    params.push(opts.beforeId);
  }
  if (opts.token !== undefined) {
    where.push("token = ?");
    params.push(opts.token);
  }
  if (opts.agent !== undefined) {
    where.push("agent = ?");
    params.push(opts.agent);
  }
  if (opts.status) {
    where.push("status = ?");
    params.push(opts.status);
  }
  const w = where.length ? `WHERE ${where.join(" AND ")}` : "";
  const total = (db.query(`SELECT count(*) AS n FROM proposals ${w}`).get(...params) as { n: number }).n;
  const rows = db.query(`SELECT * FROM proposals ${w} ORDER BY id DESC LIMIT ? OFFSET ?`).all(...params, opts.limit ?? 50, opts.offset ?? 0);
  return { items: (rows as Record<string, unknown>[]).map(toProposal), total };
}

function requirePending(db: Database, id: number, token?: string): Proposal {
  const p = getProposal(db, id);
  if (!p || (token !== undefined && p.token !== token)) throw new ToolError("proposal-not-found", `No proposal ${id}${token !== undefined ? " of yours" : ""}`, { id });
  if (p.status !== "pending") throw new ToolError("proposal-not-pending", `Proposal ${id} is already ${p.status}`, { id, status: p.status });
  return p;
}

/** Decide a pending proposal; proposal-not-pending when another process or caller decided it meanwhile. */
function decide(db: Database, id: number, status: ProposalStatus, reason: string | null, editId: number | null): void {
  const { changes } = db
    .query("UPDATE proposals SET status = ?, decided_at = ?, reason = ?, edit_id = ? WHERE id = ? AND status = 'pending'")
    .run(status, new Date().toISOString(), reason, editId, id);
  // Between requirePending's read and this write (a reviewer in the web UI, `lettuce proposals approve` in a
  // terminal): saying "rejected" of a proposal that was approved and applied would be false.
  if (changes === 0) requirePending(db, id);
}

/**
 * The agent takes back its own pending proposal. Nobody can approve it now, so its arguments go and its
 * diff is cut to what the agent was shown; past MAX_WITHDRAWN_KEPT the token's oldest withdrawn go.
 */
export async function withdrawProposal(vault: VaultContext, id: number, token: string): Promise<Proposal> {
  const db = vault.stateDbNoSync;
  requirePending(db, id, token);
  db.transaction(() => {
    decide(db, id, "withdrawn", null, null);
    db.query(
      `UPDATE proposals SET args = '{}',
         diff = CASE WHEN length(diff) > ?1 THEN substr(diff, 1, ?1) || ?2 ELSE diff END
       WHERE id = ?3 AND status = 'withdrawn'`,
    ).run(AGENT_DIFF_CHARS, "\n… diff cut when the proposal was withdrawn\n", id);
    db.query(
      `DELETE FROM proposals WHERE token = ?1 AND status = 'withdrawn'
         AND id < (SELECT id FROM proposals WHERE token = ?1 AND status = 'withdrawn' ORDER BY id DESC LIMIT 1 OFFSET ?2)`,
    ).run(token, MAX_WITHDRAWN_KEPT - 1);
  })();
  await syncStateWal(vault.root);
  return getProposal(db, id)!;
}

export async function rejectProposal(vault: VaultContext, id: number, reason: string | null): Promise<Proposal> {
  const db = vault.stateDbNoSync;
  requirePending(db, id);
  decide(db, id, "rejected", reason, null);
  await syncStateWal(vault.root);
  return getProposal(db, id)!;
}

function opOf(p: Proposal): WriteOp {
  const op = WRITE_OPS[p.tool];
  if (!op) throw new ToolError("internal", `Proposal ${p.id} names an unknown tool ${p.tool}`);
  return op;
}

/**
 * What approving would change now: the plan against the current notes, or
 * the conflict that approving would report.
 */
export async function previewProposal(vault: VaultContext, p: Proposal): Promise<{ diff: string } | { error: ToolError }> {
  try {
    return { diff: planDiff(await opOf(p).plan(vault, p.args, p.base)) };
  } catch (e) {
    if (e instanceof ToolError) return { error: e };
    throw e;
  }
}

/** Apply a pending proposal through the write path, pinned to the notes it was made against. */
export async function approveProposal(vault: VaultContext, id: number, opts: { reindex?: boolean } = {}): Promise<WriteOutcome> {
  const db = vault.stateDb;
  const p = requirePending(db, id);
  // Claim it first, so that two reviewers (or a withdraw racing an approve) cannot both act on it. The claim
  // names this process until the edit is recorded: a crash in between is settled at the next start.
  const claimed = db
    .query("UPDATE proposals SET status = 'approved', decided_at = ?, claimed_by = ?, claimed_stamp = ? WHERE id = ? AND status = 'pending'")
    .run(new Date().toISOString(), process.pid, ownStamp(), id);
  if (claimed.changes === 0) requirePending(db, id);
  let outcome: WriteOutcome;
  try {
    outcome = await writeService(vault, opts).execute(opOf(p), p.args, { tool: p.tool, agent: p.agent, token: p.token, proposalId: p.id }, p.base);
  } catch (e) {
    db.query("UPDATE proposals SET status = 'pending', decided_at = NULL, claimed_by = NULL WHERE id = ?").run(id);
    throw e;
  }
  try {
    db.query("UPDATE proposals SET edit_id = ?, claimed_by = NULL WHERE id = ?").run(outcome.editId, id);
  } catch (e) {
    // The edit landed (and is on the timeline): say so. The next start links the proposal to it (recover.ts).
    console.error(`lettuce: proposal ${id} was applied (edit ${outcome.editId}) but could not be marked so yet: ${(e as Error).message}`);
  }
  return outcome;
}

