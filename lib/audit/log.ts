// The audit log: every tools/call, HTTP or stdio, as one row in state.db.
// Recording must not slow a call: entries are buffered in memory and written
// in one transaction a moment later (or when the buffer fills, or before a
// query reads the log, or when the vault closes). Old rows are pruned in the
// background by the vault's retention setting (`auditRetentionDays`, default 90)
// and its row cap (`auditMaxRows`), so a token calling thousands of times a
// second cannot grow state.db without bound between the hourly prunings.
import type { Database } from "bun:sqlite";
import { ToolError } from "../errors";
import { whenQuiet } from "../offload/activity";
import { getSetting } from "../store/state-db";
import { auditTarget } from "./target";
import { parseIsoTime } from "../iso-time";

export const DEFAULT_RETENTION_DAYS = 90;
/** ~120 bytes a row: about 120 MB of state.db at the default. */
export const DEFAULT_MAX_ROWS = 1_000_000;
export const MIN_MAX_ROWS = 1_000;
export const MAX_MAX_ROWS = 100_000_000;
// A server prunes again after recording this many rows (or a tenth of the cap), not only every hour.
const PRUNE_AFTER_ROWS = 20_000;
const FLUSH_MS = 250;
const FLUSH_AT = 256;
const PRUNE_EVERY_MS = 60 * 60 * 1000;
const DAY_MS = 86_400_000;

export interface AuditCall {
  tool: string;
  ok: boolean;
  kind?: string;
  args: unknown;
  agent: string | null;
  tokenName: string;
}

export interface AuditEntry {
  id: number;
  tool: string;
  status: "success" | "error";
  errorKind: string | null;
  targetType: string | null;
  targetId: string | null;
  createdAt: string;
  agentName: string | null;
  tokenName: string;
}

export interface AuditQuery {
  tool?: string;
  status?: "success" | "error";
  /** ISO 8601 */
  from?: string;
  to?: string;
  limit: number;
  offset?: number;
}

type Pending = [number, string, string, string | null, string | null, string | null, string | null, string];

/** The vault's retention in days: the `auditRetentionDays` setting, or 90. */
export function retentionDays(db: Database): number {
  const n = Number(getSetting(db, "auditRetentionDays"));
  return Number.isInteger(n) && n >= 1 ? n : DEFAULT_RETENTION_DAYS;
}

/** The vault's row cap: the `auditMaxRows` setting, or a million. */
export function maxRows(db: Database): number {
  const n = Number(getSetting(db, "auditMaxRows"));
  return Number.isInteger(n) && n >= MIN_MAX_ROWS && n <= MAX_MAX_ROWS ? n : DEFAULT_MAX_ROWS;
}

// Ids only grow and rows only go from the old end, so the rows past the cap are those at or below
// max(id) − cap: two index lookups where a count(*) would walk a million rows.
function overCapBound(db: Database): number | null {
  const r = db.query("SELECT min(id) AS lo, max(id) AS hi FROM audit_log").get() as { lo: number | null; hi: number | null };
  if (r.lo === null || r.hi === null) return null;
  const bound = r.hi - maxRows(db);
  return bound >= r.lo ? bound : null;
}

/** Everything expired or past the cap, at once (the CLI; a server goes slice by slice between calls). */
export function pruneAudit(db: Database, now = Date.now()): number {
  let n = 0;
  let got: number;
  do {
    got = pruneAuditSlice(db, PRUNE_SLICE, now);
    n += got;
  } while (got >= PRUNE_SLICE);
  return n;
}

// Rows deleted per statement by the server's background pruning (it waits for a quiet moment between slices).
const PRUNE_SLICE = 2000;

/** Delete at most `max` of the oldest expired entries; returns how many went. */
export function pruneAuditSlice(db: Database, max = PRUNE_SLICE, now = Date.now()): number {
  const n = db.query("DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE created_at < ? ORDER BY created_at LIMIT ?)").run(now - retentionDays(db) * DAY_MS, max).changes;
  if (n >= max) return n;
  const bound = overCapBound(db);
  if (bound === null) return n;
  return n + db.query("DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE id <= ? ORDER BY id LIMIT ?)").run(bound, max - n).changes;
}

function isoMs(v: string | undefined, name: string): number | null {
  if (v === undefined) return null;
  const ms = parseIsoTime(v);
  if (ms === null) throw new ToolError("invalid-input", `${name} is not an ISO 8601 time: ${JSON.stringify(v)}`);
  return ms;
}

/** Entries newest first. Reads what is in state.db (the CLI reads it directly; a server flushes first). */
export function queryAudit(db: Database, q: AuditQuery): AuditEntry[] {
  const where: string[] = [];
  const params: (string | number)[] = [];
  if (q.tool) {
    where.push("tool = ?");
    params.push(q.tool);
  }
  if (q.status) {
    where.push("status = ?");
    params.push(q.status);
  }
  const from = isoMs(q.from, "from");
  const to = isoMs(q.to, "to");
  if (from !== null) {
    where.push("created_at >= ?");
    params.push(from);
  }
  if (to !== null) {
    where.push("created_at <= ?");
    params.push(to);
  }
  const rows = db
    .query(
      `SELECT id, tool, status, error_kind, target_type, target_id, created_at, agent_name, token_name FROM audit_log
       ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
    )
    .all(...params, q.limit, q.offset ?? 0) as Record<string, unknown>[];
  return rows.map((r) => ({
    id: r.id as number,
    tool: r.tool as string,
    status: r.status as "success" | "error",
    errorKind: (r.error_kind as string) ?? null,
    targetType: (r.target_type as string) ?? null,
    targetId: (r.target_id as string) ?? null,
    createdAt: new Date(r.created_at as number).toISOString(),
    agentName: (r.agent_name as string) ?? null,
    tokenName: r.token_name as string,
  }));
}

export class AuditLog {
  private pending: Pending[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private pruner: ReturnType<typeof setInterval>;
  private pruning: Promise<void> | null = null;
  private closed = false;
  private sincePrune = 0;

  constructor(private readonly db: Database) {
    void this.prune();
    this.pruner = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.pruner.unref?.();
  }

  /**
   * Background work: expired entries go in slices, each after the server has
   * been quiet for a moment (lib/offload/activity.ts), so that a tool call never
   * waits behind a year's worth of deletes. Resolves when nothing expired is left.
   */
  prune(): Promise<void> {
    this.pruning ??= (async () => {
      for (;;) {
        await whenQuiet();
        if (this.closed) return;
        let n = 0;
        this.safely(() => (n = pruneAuditSlice(this.db)));
        if (n < PRUNE_SLICE) return;
      }
    })().finally(() => (this.pruning = null));
    return this.pruning;
  }

  private safely(fn: () => unknown): void {
    try {
      fn();
    } catch (e) {
      // A busy or closed state.db must never fail the call being recorded.
      if (!this.closed) console.error("lettuce: audit log:", (e as Error).message);
    }
  }

  /** Note one call; written within FLUSH_MS. Costs an array push. */
  record(c: AuditCall): void {
    if (this.closed) return;
    const target = auditTarget(c.tool, c.args);
    this.pending.push([Date.now(), c.tool.slice(0, 200), c.ok ? "success" : "error", c.ok ? null : (c.kind ?? "error").slice(0, 100), target?.type ?? null, target?.id ?? null, c.agent?.slice(0, 200) ?? null, c.tokenName.slice(0, 200)]);
    if (this.pending.length >= FLUSH_AT) this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), FLUSH_MS);
      this.timer.unref?.();
    }
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.pending.length) return;
    const batch = this.pending;
    this.pending = [];
    this.safely(() => {
      const ins = this.db.query(
        "INSERT INTO audit_log(created_at, tool, status, error_kind, target_type, target_id, agent_name, token_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      );
      this.db.transaction(() => {
        for (const p of batch) ins.run(...p);
      })();
    });
    this.sincePrune += batch.length;
    if (this.sincePrune >= Math.min(PRUNE_AFTER_ROWS, Math.ceil(maxRows(this.db) / 10))) {
      this.sincePrune = 0;
      void this.prune();
    }
  }

  query(q: AuditQuery): AuditEntry[] {
    this.flush();
    return queryAudit(this.db, q);
  }

  close(): void {
    this.flush();
    this.closed = true;
    clearInterval(this.pruner);
  }
}

const logs = new WeakMap<object, AuditLog>();

/**
 * The vault's audit log, made on first use and flushed when the vault closes. It writes through the
 * connection that does not fsync each commit: a flush runs on the request thread, between calls.
 */
export function auditLog(vault: { stateDbNoSync: Database; onClose(fn: () => void): void }): AuditLog {
  let log = logs.get(vault);
  if (!log) {
    const l = new AuditLog(vault.stateDbNoSync);
    logs.set(vault, l);
    vault.onClose(() => l.close());
    log = l;
  }
  return log;
}
