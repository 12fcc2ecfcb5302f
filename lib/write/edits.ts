// The agent-edits timeline in state.db: one row per file change an agent (or a
// person's revert or approval) made, with the bytes before and after, so any
// edit can be listed and reverted. A row is written as "pending" before its
// rename and marked "applied" right after; ./recover.ts settles rows a
// crashed process left pending.
import type { Database } from "bun:sqlite";
import { ownStamp, recordedProcessAlive } from "../platform/pid";
import { loadText, loadTextInTurns, releaseTexts, storeText, type StagedTexts } from "./edit-texts";

export type EditAction = "write" | "move" | "delete";

export interface NewEdit {
  tool: string;
  action: EditAction;
  path: string;
  fromPath?: string | null;
  trashPath?: string | null;
  before: Uint8Array | null;
  after: Uint8Array | null;
  beforeHash: string | null;
  afterHash: string | null;
  agent: string;
  token: string;
  proposalId?: number | null;
  reverts?: number | null;
  tmp?: string | null; // vault-relative temp file of a pending write
}

export interface EditRecord {
  id: number;
  groupId: number;
  time: string;
  tool: string;
  action: EditAction;
  path: string;
  fromPath: string | null;
  trashPath: string | null;
  beforeHash: string | null;
  afterHash: string | null;
  agent: string;
  token: string;
  proposalId: number | null;
  reverts: number | null;
  /** The newest call that reverted this one (it may itself have been reverted since). */
  revertedBy?: number | null;
}

export interface EditRow extends EditRecord {
  before: Uint8Array | null;
  after: Uint8Array | null;
}

const LIST_COLUMNS =
  "id, group_id, time, tool, action, path, from_path, trash_path, before_hash, after_hash, agent, token, proposal_id, reverts, " +
  // The newest revert of this row's call (reverts holds a call's first id), for "reverted by #N".
  "(SELECT max(coalesce(r.group_id, r.id)) FROM agent_edits r WHERE r.reverts = coalesce(agent_edits.group_id, agent_edits.id) AND r.state = 'applied') AS reverted_by";

function toRecord(r: Record<string, unknown>): EditRecord {
  return {
    id: r.id as number,
    groupId: (r.group_id as number | null) ?? (r.id as number),
    time: r.time as string,
    tool: r.tool as string,
    action: r.action as EditAction,
    path: r.path as string,
    fromPath: (r.from_path as string | null) ?? null,
    trashPath: (r.trash_path as string | null) ?? null,
    beforeHash: (r.before_hash as string | null) ?? null,
    afterHash: (r.after_hash as string | null) ?? null,
    agent: r.agent as string,
    token: r.token as string,
    proposalId: (r.proposal_id as number | null) ?? null,
    reverts: (r.reverts as number | null) ?? null,
    ...(r.reverted_by != null ? { revertedBy: r.reverted_by as number } : {}),
  };
}

/** A row's text: rows from before edit_texts hold their bytes; newer ones name them by hash. */
function rowText<T>(v: unknown, hash: unknown, load: (hash: string) => T): Uint8Array | T | null {
  return v != null ? (v instanceof Uint8Array ? v : new Uint8Array(v as ArrayBuffer)) : typeof hash === "string" ? load(hash) : null;
}

function toRow(db: Database, r: Record<string, unknown>): EditRow {
  const load = (h: string) => loadText(db, h);
  return { ...toRecord(r), before: rowText(r.before, r.before_hash, load), after: rowText(r.after, r.after_hash, load) };
}

/** toRow, the texts loaded off the event loop (they may be 30 MB each). */
async function toRowInTurns(db: Database, r: Record<string, unknown>): Promise<EditRow> {
  const load = (h: string) => loadTextInTurns(db, h);
  return { ...toRecord(r), before: await rowText(r.before, r.before_hash, load), after: await rowText(r.after, r.after_hash, load) };
}

/**
 * Insert the rows of one call as pending, in one transaction. Returns their ids; the first is the group's id.
 * `group`: the call's first row, when these rows continue a call whose first rows are in already. `staged`:
 * big texts already written in part (stageText).
 */
export function insertPending(db: Database, edits: NewEdit[], group: number | null = null, staged?: StagedTexts): number[] {
  const now = new Date().toISOString();
  const ins = db.query(
    `INSERT INTO agent_edits(group_id, time, tool, action, path, from_path, trash_path, before, after, before_hash, after_hash,
                             agent, token, proposal_id, reverts, state, tmp, owner_pid, owner_stamp)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
  );
  const ids: number[] = [];
  db.transaction(() => {
    for (const e of edits) {
      // The texts first, in the same transaction: another process releasing texts sees this row's
      // references or none of them (releaseTexts).
      if (e.before && e.beforeHash) storeText(db, e.before, e.beforeHash, undefined, staged);
      if (e.after && e.afterHash) storeText(db, e.after, e.afterHash, e.before && e.beforeHash ? { bytes: e.before, hash: e.beforeHash } : undefined, staged);
      const res = ins.run(
        group ?? ids[0] ?? null, now, e.tool, e.action, e.path, e.fromPath ?? null, e.trashPath ?? null, null, null,
        e.beforeHash, e.afterHash, e.agent, e.token, e.proposalId ?? null, e.reverts ?? null, e.tmp ?? null, process.pid,
        ownStamp(),
      );
      ids.push(Number(res.lastInsertRowid));
    }
    // Immediate: its first statements read (is the text there yet?), and a deferred transaction that reads
    // before it writes fails at once, without waiting, when another process wrote meanwhile (the review).
  }).immediate();
  if (ids.length && group === null) inFlight.add(ids[0]!);
  return ids;
}

export function markApplied(db: Database, ids: number[]): void {
  if (!ids.length) return;
  const q = db.query("UPDATE agent_edits SET state = 'applied', tmp = NULL, owner_pid = NULL, owner_stamp = NULL WHERE id = ?");
  db.transaction(() => {
    for (const id of ids) q.run(id);
  })();
}

export function dropPending(db: Database, ids: number[]): void {
  if (!ids.length) return;
  // Only rows that name their texts in edit_texts count there (older rows hold their bytes themselves).
  const hashes = db.query(
    `SELECT CASE WHEN before IS NULL THEN before_hash END AS b, CASE WHEN after IS NULL THEN after_hash END AS a
     FROM agent_edits WHERE id = ? AND state = 'pending'`,
  );
  const q = db.query("DELETE FROM agent_edits WHERE id = ? AND state = 'pending'");
  db.transaction(() => {
    const texts: string[] = [];
    for (const id of ids) {
      const h = hashes.get(id) as { b: string | null; a: string | null } | null;
      if (h?.a) texts.push(h.a);
      if (h?.b) texts.push(h.b);
      q.run(id);
    }
    releaseTexts(db, texts);
  }).immediate();
}

/**
 * The revert that undid the call whose first timeline id is `first`, if it still stands (nothing has
 * reverted the revert since): that call's edits are undone, and reverting it again would do nothing.
 */
export function standingRevertOf(db: Database, first: number): number | null {
  const r = db.query("SELECT coalesce(group_id, id) AS g FROM agent_edits WHERE reverts = ? AND state = 'applied' ORDER BY id DESC LIMIT 1").get(first) as { g: number } | null;
  if (!r) return null;
  const undone = db.query("SELECT 1 FROM agent_edits WHERE reverts = ? AND state = 'applied' LIMIT 1").get(r.g);
  return undone ? null : r.g;
}

export interface EditFilter {
  /** Entries about this note (as source, destination or trashed note). */
  path?: string;
  agent?: string;
  tool?: string;
}

function editWhere(f: EditFilter): { where: string; params: string[] } {
  const where = ["state = 'applied'"];
  const params: string[] = [];
  if (f.path) {
    where.push("(path = ? OR from_path = ? OR trash_path = ?)");
    params.push(f.path, f.path, f.path);
  }
  if (f.agent) {
    where.push("agent = ?");
    params.push(f.agent);
  }
  if (f.tool) {
    where.push("tool = ?");
    params.push(f.tool);
  }
  return { where: where.join(" AND "), params };
}

export function listEdits(db: Database, opts: EditFilter & { limit?: number; offset?: number } = {}): EditRecord[] {
  const { where, params } = editWhere(opts);
  const rows = db.query(`SELECT ${LIST_COLUMNS} FROM agent_edits WHERE ${where} ORDER BY id DESC LIMIT ? OFFSET ?`).all(...params, opts.limit ?? 50, opts.offset ?? 0);
  return (rows as Record<string, unknown>[]).map(toRecord);
}

export function countEdits(db: Database, f: EditFilter = {}): number {
  const { where, params } = editWhere(f);
  return (db.query(`SELECT count(*) AS n FROM agent_edits WHERE ${where}`).get(...params) as { n: number }).n;
}

/** The agents and tools that appear on the timeline (for filters), most frequent first. */
export function editFacets(db: Database, limit = 100): { agents: string[]; tools: string[] } {
  const col = (c: "agent" | "tool") =>
    (db.query(`SELECT ${c} AS v FROM agent_edits WHERE state = 'applied' GROUP BY ${c} ORDER BY count(*) DESC, ${c} LIMIT ?`).all(limit) as { v: string }[]).map((r) => r.v);
  return { agents: col("agent"), tools: col("tool") };
}

/** The newest applied timeline id (0 on an empty timeline): changes when anything lands. */
export function latestEditId(db: Database): number {
  return (db.query("SELECT coalesce(max(id), 0) AS n FROM agent_edits WHERE state = 'applied'").get() as { n: number }).n;
}

export function getEdit(db: Database, id: number): EditRow | null {
  const r = db.query("SELECT * FROM agent_edits WHERE id = ? AND state = 'applied'").get(id) as Record<string, unknown> | null;
  return r ? toRow(db, r) : null;
}

/** The applied rows of the call that `id` belongs to, in the order they were made (texts not loaded). */
function groupRows(db: Database, id: number): Record<string, unknown>[] {
  const first = db.query("SELECT id, group_id FROM agent_edits WHERE id = ? AND state = 'applied'").get(id) as { id: number; group_id: number | null } | null;
  if (!first) return [];
  const gid = first.group_id ?? first.id;
  return db.query("SELECT * FROM agent_edits WHERE (id = ?1 OR group_id = ?1) AND state = 'applied' ORDER BY id").all(gid) as Record<string, unknown>[];
}

/**
 * Every applied row of the call that `id` belongs to, in the order they were made, its texts loaded off the
 * event loop (a revert, the web UI's view of an edit: they may be 30 MB each).
 */
export async function editGroup(db: Database, id: number): Promise<EditRow[]> {
  const out: EditRow[] = [];
  for (const r of groupRows(db, id)) out.push(await toRowInTurns(db, r));
  return out;
}

/**
 * Groups (first row ids) this process has pending: a write between its rows' insert and its bookkeeping, or
 * bookkeeping being retried (commit.ts). Recovery in this process leaves them alone; any other row of this
 * pid is from a process that had it before (pid reuse), or from a vault opened twice here.
 */
export const inFlight = new Set<number>();

/** Whether the process that recorded `pid` (and `stamp`, when it did) with work in flight still runs. */
export function processAlive(pid: number, stamp: string | null): boolean {
  if (pid === process.pid) return false; // this process's own live groups are in inFlight
  return recordedProcessAlive(pid, stamp);
}
