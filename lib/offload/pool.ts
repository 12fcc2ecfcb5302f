// A small pool of read workers per open vault. Search, the link graph and
// lint run there on their own read-only connections; the main thread only
// parses requests and writes answers, so a `ping` (or any cheap call) is
// answered while a heavy read is under way. A read that outlives its
// caller's budget is abandoned: its worker is retired (a running SQLite
// statement cannot be stopped, but its answer is no longer waited for) and a
// fresh one takes the next job.
import { keepAlive, workerEntry } from "../platform/embedded";
import type { Database } from "bun:sqlite";
import { ToolError } from "../errors";
import type { VaultContext } from "../vault-context";
import { callerKey } from "./caller";
import { runJob, type ReadJob } from "./jobs";
import type { WorkerReply, WorkerRequest } from "./worker";
import { startWorker } from "../platform/descriptors";
import { envNumber } from "../env-number";

// The jobs that read the lint plan (lib/hygiene/lint.ts keeps one per connection).
const PLANNED = new Set<ReadJob["kind"]>(["lint", "health", "hygieneReport"]);
// Whole-vault passes that may take seconds: run at a lower CPU priority than requests (see slotFor).
const HEAVY = new Set<ReadJob["kind"]>([...PLANNED, "queryDatabase", "databaseSchema", "suggestLinks", "splitNotes", "duplicatePairs", "topicGroups", "journalDiff", "digest", "drawGraph"]);

const poolSize = () => {
  return envNumber("LETTUCE_READ_WORKERS", 2, { min: 0, max: 8, integer: true });
};

interface Pending {
  id: number;
  /** Who it is for (lib/offload/caller.ts): workers are handed out in turn between callers. */
  key: string;
  job: ReadJob;
  resolve(v: unknown): void;
  reject(e: unknown): void;
  signal?: AbortSignal;
  onAbort?: () => void;
  /** Buffers of the job handed to the worker, not copied (the caller no longer uses them). */
  transfer?: ArrayBuffer[];
}

interface Slot {
  worker: Worker;
  current: Pending | null;
  /** Runs heavy jobs, at a lower CPU priority (told with its first heavy job). */
  niced: boolean;
}

function spawnWorker(): Worker {
  // In a compiled binary every module's import.meta.url is the binary's own; compile.sh embeds the worker under its source path.
  return startWorker(workerEntry("lib/offload/worker.ts", import.meta.url, "./worker.ts"));
}

function cancelled(): ToolError {
  return new ToolError("timeout", "The request ran out of its time budget or was cancelled before the read finished");
}

export class ReadPool {
  private slots: Slot[] = [];
  private planSlot: Slot | null = null;
  private ranOn = new Map<ReadJob["kind"], number>();
  private queue: Pending[] = [];
  /** Jobs in the workers now, per caller. */
  private busy = new Map<string, number>();
  private nextId = 1;
  private closed = false;
  private inline: boolean;

  constructor(
    private readonly root: string,
    /** The main connection, for the inline fallback (no worker support, or LETTUCE_READ_WORKERS=0). */
    private readonly db: Database,
    private readonly size = poolSize(),
  ) {
    this.inline = size === 0;
  }

  /** False when jobs run in-line on the caller's thread (LETTUCE_READ_WORKERS=0, or no worker threads here). */
  get threaded(): boolean {
    return !this.inline && !this.closed;
  }

  /** The thread id of the worker that last took a job of this kind (diagnostics and tests). */
  lastWorker(kind: ReadJob["kind"]): number | undefined {
    return this.ranOn.get(kind);
  }

  /** Run a read job in a worker; rejects with kind "timeout" when `signal` fires first. */
  run<T>(job: ReadJob, signal?: AbortSignal, transfer?: ArrayBuffer[]): Promise<T> {
    if (signal?.aborted) return Promise.reject(cancelled());
    if (this.inline || this.closed) return new Promise<T>((resolve) => resolve(runJob(this.db, job) as T));
    return new Promise<T>((resolve, reject) => {
      const p: Pending = { id: this.nextId++, key: callerKey(), job, resolve: resolve as (v: unknown) => void, reject, signal, transfer };
      if (signal) {
        p.onAbort = () => this.abandon(p);
        signal.addEventListener("abort", p.onAbort, { once: true });
      }
      this.queue.push(p);
      this.dispatch();
    });
  }

  private settle(p: Pending): void {
    if (p.onAbort) p.signal?.removeEventListener("abort", p.onAbort);
  }

  private abandon(p: Pending): void {
    const q = this.queue.indexOf(p);
    if (q !== -1) this.queue.splice(q, 1);
    const slot = this.slots.find((s) => s.current === p);
    if (slot) this.retire(slot);
    this.settle(p);
    p.reject(cancelled());
    this.dispatch();
  }

  /** A job left its worker (answered, abandoned or failed). */
  private left(p: Pending): void {
    const n = (this.busy.get(p.key) ?? 1) - 1;
    if (n > 0) this.busy.set(p.key, n);
    else this.busy.delete(p.key);
  }

  private retire(slot: Slot): void {
    this.slots = this.slots.filter((s) => s !== slot);
    if (this.planSlot === slot) this.planSlot = null;
    if (slot.current) this.left(slot.current);
    slot.current = null;
    // Unref'd first: a worker still inside a long statement finishes it before it ends, and must not hold the process.
    keepAlive(slot.worker, false);
    slot.worker.terminate();
  }

  /**
   * The worker a job goes to, or null to wait.
   *
   * Heavy jobs (whole-vault passes) run in a worker at a lower CPU priority, so that a ping is not kept
   * waiting behind them; search and the link graph run in one at normal priority: niced, a search's hop
   * through the worker cost ~10 ms more at p50 on a loaded machine (100k notes, load ~13), since other
   * processes' threads outweigh a nice-10 thread about ten to one. A thread's niceness only goes up, so a
   * worker, once niced, stays the heavy one; light jobs use it only when it is idle and no other is.
   *
   * Lint, wiki_health and the Health page also keep a whole-vault plan in the worker that made it (~100 MB at
   * 100k notes): they all go to that one worker, so the plan exists once.
   */
  private slotFor(job: ReadJob): Slot | null {
    const idle = (s: Slot) => s.current === null;
    if (HEAVY.has(job.kind)) {
      const plan = this.planSlot && this.slots.includes(this.planSlot) ? this.planSlot : null;
      let slot: Slot | null;
      if (PLANNED.has(job.kind) && plan) slot = plan;
      else slot = this.slots.find((s) => s.niced) ?? (this.slots.length < this.size ? this.grow() : null) ?? this.slots.find(idle) ?? null;
      if (!slot || !idle(slot)) return null;
      slot.niced = true;
      if (PLANNED.has(job.kind)) this.planSlot = slot;
      return slot;
    }
    return (
      this.slots.find((s) => idle(s) && !s.niced) ?? (this.slots.length < this.size ? this.grow() : null) ?? this.slots.find(idle) ?? null
    );
  }

  /** Why the last worker could not be started (no descriptors to spare: startWorker), until one is. */
  private refused: ToolError | null = null;

  /** A new worker, or null when the system has no descriptors to spare for one (the job uses another, or waits). */
  private grow(): Slot | null {
    try {
      const slot = this.addSlot();
      this.refused = null;
      return slot;
    } catch (e) {
      if (!(e instanceof ToolError)) throw e;
      this.refused = e;
      return null;
    }
  }

  /**
   * The queue in the order jobs are offered a worker: the callers with the fewest jobs in the workers first,
   * each caller's jobs in arrival order. A first-come queue let one token's 300 heavy searches stand in front
   * of everyone's (the person's web search included) until those timed out.
   */
  private fairOrder(): Pending[] {
    if (this.queue.length < 2) return this.queue.slice();
    const taken = new Map(this.busy);
    const byKey = new Map<string, Pending[]>();
    for (const p of this.queue) {
      const l = byKey.get(p.key);
      if (l) l.push(p);
      else byKey.set(p.key, [p]);
    }
    const out: Pending[] = [];
    while (byKey.size) {
      let best: string | null = null;
      for (const [k, l] of byKey) {
        const t = taken.get(k) ?? 0;
        const bt = best === null ? Infinity : (taken.get(best) ?? 0);
        if (t < bt || (t === bt && l[0]!.id < byKey.get(best!)![0]!.id)) best = k;
      }
      const l = byKey.get(best!)!;
      out.push(l.shift()!);
      taken.set(best!, (taken.get(best!) ?? 0) + 1);
      if (!l.length) byKey.delete(best!);
    }
    return out;
  }

  private dispatch(): void {
    const order = this.fairOrder();
    for (const p of order) {
      if (this.closed) return;
      let slot: Slot | null;
      try {
        slot = this.slotFor(p.job);
      } catch {
        // No worker threads here: run everything inline from now on.
        this.inline = true;
        for (const q of this.queue.splice(0)) {
          this.settle(q);
          try {
            q.resolve(runJob(this.db, q.job));
          } catch (e) {
            q.reject(e);
          }
        }
        return;
      }
      if (!slot) {
        // No worker could be started (no descriptors to spare) and none is at work to free one: nothing would
        // call dispatch again, so the call is refused, to be retried (running inline would put every read on
        // the request thread for good).
        if (this.refused && !this.slots.some((s) => s.current)) {
          this.queue.splice(this.queue.indexOf(p), 1);
          this.settle(p);
          p.reject(this.refused);
        }
        continue;
      }
      this.queue.splice(this.queue.indexOf(p), 1);
      this.busy.set(p.key, (this.busy.get(p.key) ?? 0) + 1);
      slot.current = p;
      keepAlive(slot.worker, true);
      this.ranOn.set(p.job.kind, slot.worker.threadId);
      const msg: WorkerRequest = { id: p.id, root: this.root, job: p.job, lowPriority: slot.niced };
      slot.worker.postMessage(msg, p.transfer ?? []);
    }
  }

  private addSlot(): Slot {
    const worker = spawnWorker();
    keepAlive(worker, false);
    const slot: Slot = { worker, current: null, niced: false };
    worker.onmessage = (ev: MessageEvent<WorkerReply>) => {
      const p = slot.current;
      if (!p || p.id !== ev.data.id) return;
      slot.current = null;
      this.left(p);
      keepAlive(worker, false);
      this.settle(p);
      const r = ev.data;
      if (r.ok) p.resolve(r.value);
      else if (r.kind === "internal") p.reject(new Error(`read worker: ${r.message}`));
      else p.reject(new ToolError(r.kind, r.message, r.data));
      this.dispatch();
    };
    worker.onerror = (e) => {
      const p = slot.current;
      this.retire(slot);
      if (p) {
        this.settle(p);
        p.reject(new Error(`read worker failed: ${e.message}`));
      }
      this.dispatch();
    };
    this.slots.push(slot);
    return slot;
  }

  close(): void {
    this.closed = true;
    this.busy.clear();
    for (const p of this.queue.splice(0)) {
      this.settle(p);
      p.reject(cancelled());
    }
    for (const s of this.slots.splice(0)) {
      if (s.current) {
        this.settle(s.current);
        s.current.reject(cancelled());
      }
      s.worker.terminate();
    }
  }
}

const pools = new WeakMap<VaultContext, ReadPool>();

/** The vault's read pool, created on first use and closed with the vault. */
export function readPool(vault: VaultContext): ReadPool {
  let p = pools.get(vault);
  if (!p) {
    const pool = new ReadPool(vault.root, vault.indexDb);
    vault.onClose(() => pool.close());
    pools.set(vault, pool);
    p = pool;
  }
  return p;
}
