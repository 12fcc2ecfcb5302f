import type { Database } from "bun:sqlite";
import type { IndexChange } from "../index/indexer";
import type { VaultContext } from "../vault-context";
import { directiveKeys, queryDirectives, scopeCovers, type Directive, type DirectiveScope } from "./directives";
import { envNumber, MAX_TIMER_MS } from "../env-number";

// Leases run on the monotonic clock: on the wall clock a step forward gave a claimed directive to a second
// worker, a step back hid it for the length of the step, and a claim made while the clock ran 30 days ahead
// armed a timer past setTimeout's 24.8-day limit, which fires every millisecond (the clock audit of 2026-12-05).
const clock = () => performance.now();

// A worker that needs longer than two minutes per directive sets LETTUCE_DIRECTIVE_LEASE_MS.
export const LEASE_TTL_MS = envNumber("LETTUCE_DIRECTIVE_LEASE_MS", 120_000, { min: 1000, max: MAX_TIMER_MS });
export const MIN_TIMEOUT_MS = 1000;
export const MAX_TIMEOUT_MS = 55_000;
export const DEFAULT_TIMEOUT_MS = 25_000;
// Past this many changed notes one query over the whole table beats one per note.
const RELOAD_ALL_ABOVE = 200;

export interface AwaitOptions {
  cursor: number;
  timeoutMs: number;
  scope: DirectiveScope;
  worker?: string;
  claim: boolean;
  limit: number;
  signal?: AbortSignal;
}

export interface AwaitResult {
  cursor: number;
  timedOut: boolean;
  directives: Directive[];
}

interface Waiter {
  scope: DirectiveScope;
  worker?: string;
  wake: (why: "changed" | "timeout" | "aborted") => void;
}

interface Lease {
  worker: string;
  expires: number;
  path: string;
}

/**
 * The long-poll behind await_directives, one per open vault.
 *
 * It keeps, per note, a signature of that note's pending directives. The
 * indexer reports every pass (watcher, write tools, scans) through onChange;
 * only when a signature changes does the cursor advance and parked calls wake.
 * A parked call is a promise and one timeout in a set: nothing polls the
 * database or the disk while calls wait, so hundreds of them cost almost
 * nothing. Leases are in memory and cooperative, as the spec says.
 */
export class DirectiveHub {
  private revision: number;
  private signatures = new Map<string, string[]>(); // note path -> keys of its pending directives
  private waiters = new Set<Waiter>();
  private leases = new Map<string, Lease>(); // directive key -> lease
  private leaseTimer: ReturnType<typeof setTimeout> | null = null;
  private unsubscribe: () => void;
  private closed = false;

  constructor(
    private db: Database,
    subscribe: (fn: (c: IndexChange) => void) => () => void,
    private leaseTtlMs = LEASE_TTL_MS,
  ) {
    // Cursors start at the clock so that one from an earlier server run never
    // equals the current one: a stale cursor gets an immediate answer, not a wait.
    this.revision = Date.now();
    this.reloadAll();
    this.unsubscribe = subscribe((c) => this.onIndexChange(c));
  }

  get cursor(): number {
    return this.revision;
  }

  /** Live leases by directive key (directiveKeys), for the person's view of who is working on what. */
  liveLeases(): Map<string, { worker: string; remainingMs: number }> {
    const now = clock();
    const out = new Map<string, { worker: string; remainingMs: number }>();
    for (const [key, l] of this.leases) if (l.expires > now) out.set(key, { worker: l.worker, remainingMs: l.expires - now });
    return out;
  }

  /** Parked calls right now (tests and the bench watch it). */
  get parked(): number {
    return this.waiters.size;
  }

  private reloadAll(): Set<string> {
    const next = new Map<string, string[]>();
    const all = queryDirectives(this.db, { kind: "all" });
    const keys = directiveKeys(all);
    all.forEach((d, i) => {
      const list = next.get(d.path);
      if (list) list.push(keys[i]!);
      else next.set(d.path, [keys[i]!]);
    });
    const changed = new Set<string>();
    for (const [p, k] of next) if (!sameKeys(this.signatures.get(p), k)) changed.add(p);
    for (const p of this.signatures.keys()) if (!next.has(p)) changed.add(p);
    this.signatures = next;
    return changed;
  }

  private reloadNote(path: string): boolean {
    const ds = queryDirectives(this.db, { kind: "note", path });
    const keys = directiveKeys(ds);
    const before = this.signatures.get(path);
    if (keys.length) this.signatures.set(path, keys);
    else this.signatures.delete(path);
    return !sameKeys(before, keys);
  }

  private onIndexChange(c: IndexChange): void {
    if (this.closed) return;
    const paths = [...c.changed, ...c.deleted];
    if (!paths.length) return;
    let changed: Set<string>;
    if (paths.length > RELOAD_ALL_ABOVE) changed = this.reloadAll();
    else {
      changed = new Set();
      for (const p of paths) if (this.reloadNote(p)) changed.add(p);
    }
    if (!changed.size) return; // an unrelated edit: nobody wakes
    this.revision++;
    // A completed or removed directive frees its lease at once.
    for (const [key, lease] of this.leases) {
      if (changed.has(lease.path) && !(this.signatures.get(lease.path) ?? []).includes(key)) this.leases.delete(key);
    }
    for (const w of [...this.waiters]) {
      for (const p of changed) {
        if (scopeCovers(w.scope, p)) {
          w.wake("changed");
          break;
        }
      }
    }
  }

  /** The first `limit` pending directives in scope that this worker may see (not leased to someone else). */
  private visible(scope: DirectiveScope, worker: string | undefined, now: number, limit: number): { d: Directive; key: string; free: boolean }[] {
    // Each lease hides at most one directive: this many rows hold the first `limit` visible ones.
    const ds = queryDirectives(this.db, scope, { limit: limit + this.leases.size });
    const keys = directiveKeys(ds);
    const out: { d: Directive; key: string; free: boolean }[] = [];
    ds.forEach((d, i) => {
      const key = keys[i]!;
      const lease = this.leases.get(key);
      const live = lease && lease.expires > now ? lease : null;
      if (worker !== undefined && live && live.worker !== worker) return;
      out.push({ d, key, free: !live });
    });
    return out.slice(0, limit);
  }

  async await(o: AwaitOptions): Promise<AwaitResult> {
    const claiming = o.claim && o.worker !== undefined;
    let now = clock();
    let batch = this.visible(o.scope, o.worker, now, o.limit);
    // Wait only when the caller has seen the current set; a claiming worker is
    // also answered at once when there is unclaimed work it has not been given.
    const mustAnswer = o.cursor !== this.revision || (claiming && batch.some((b) => b.free));
    if (!mustAnswer && !this.closed) {
      const why = await this.park(o);
      if (why !== "changed") return { cursor: this.revision, timedOut: true, directives: [] };
      now = clock();
      batch = this.visible(o.scope, o.worker, now, o.limit);
    }
    if (claiming) {
      for (const b of batch) this.leases.set(b.key, { worker: o.worker!, expires: now + this.leaseTtlMs, path: b.d.path });
      this.scheduleLeaseExpiry();
    }
    return { cursor: this.revision, timedOut: false, directives: batch.map((b) => b.d) };
  }

  private park(o: AwaitOptions): Promise<"changed" | "timeout" | "aborted"> {
    return new Promise((resolve) => {
      if (o.signal?.aborted) return resolve("aborted");
      const onAbort = () => w.wake("aborted");
      const timer = setTimeout(() => w.wake("timeout"), o.timeoutMs);
      const w: Waiter = {
        scope: o.scope,
        worker: o.worker,
        wake: (why) => {
          if (!this.waiters.delete(w)) return;
          clearTimeout(timer);
          o.signal?.removeEventListener("abort", onAbort);
          resolve(why);
        },
      };
      this.waiters.add(w);
      o.signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** One timer for the earliest lease to lapse, however many leases there are. */
  private scheduleLeaseExpiry(): void {
    if (this.leaseTimer) clearTimeout(this.leaseTimer);
    this.leaseTimer = null;
    let next = Infinity;
    for (const l of this.leases.values()) next = Math.min(next, l.expires);
    if (next === Infinity || this.closed) return;
    this.leaseTimer = setTimeout(() => this.expireLeases(), Math.max(0, next - clock()) + 5);
    (this.leaseTimer as { unref?: () => void }).unref?.();
  }

  private expireLeases(): void {
    this.leaseTimer = null;
    const now = clock();
    const freed: string[] = [];
    for (const [key, l] of this.leases) {
      if (l.expires <= now) {
        this.leases.delete(key);
        freed.push(l.path);
      }
    }
    // Workers parked while a directive was held elsewhere may now take it.
    // The pending set itself did not change, so the cursor stays.
    if (freed.length) {
      for (const w of [...this.waiters]) {
        if (w.worker !== undefined && freed.some((p) => scopeCovers(w.scope, p))) w.wake("changed");
      }
    }
    this.scheduleLeaseExpiry();
  }

  close(): void {
    this.closed = true;
    this.unsubscribe();
    if (this.leaseTimer) clearTimeout(this.leaseTimer);
    for (const w of [...this.waiters]) w.wake("aborted");
  }
}

function sameKeys(a: string[] | undefined, b: string[]): boolean {
  if (!a) return b.length === 0;
  if (a.length !== b.length) return false;
  const sa = [...a].sort();
  const sb = [...b].sort();
  return sa.every((k, i) => k === sb[i]);
}

const hubs = new WeakMap<VaultContext, DirectiveHub>();

/** Answer every parked await_directives now (a server about to stop: they would hold its graceful close). */
export function endDirectiveWaits(vault: VaultContext): void {
  hubs.get(vault)?.close();
}

/** The vault's hub, created on first use and closed with the vault. `leaseTtlMs` only applies at creation. */
export function directiveHub(vault: VaultContext, opts: { leaseTtlMs?: number } = {}): DirectiveHub {
  let hub = hubs.get(vault);
  if (!hub) {
    const h = new DirectiveHub(vault.indexDb, (fn) => vault.indexer.onChange(fn), opts.leaseTtlMs);
    hubs.set(vault, h);
    vault.onClose(() => h.close());
    hub = h;
  }
  return hub;
}

export function clampTimeout(ms: number | undefined): number {
  if (ms === undefined || !Number.isFinite(ms)) return DEFAULT_TIMEOUT_MS;
  return Math.min(MAX_TIMEOUT_MS, Math.max(MIN_TIMEOUT_MS, Math.round(ms)));
}
