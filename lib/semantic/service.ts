// The semantic layer of one open vault: its providers, its vector cache, the
// in-memory search indexes, freshness (a changed note is embedded before the
// next semantic call; `serve` embeds changes in the background), and the rate
// limit of the model-spending tools. One per VaultContext, made on first use.
import { ToolError } from "../errors";
import { backgroundWaiting, holdForeground, whenQuiet } from "../offload/activity";
import { asCaller } from "../offload/caller";
import { offloaded } from "../offload/offloaded";
import { readPool } from "../offload/pool";
import { embedderReachable } from "../providers/probe";
import { getMeta, indexDbPath } from "../store/index-db";
import { describeEmbedder, selectChat, selectEmbedder } from "../providers/select";
import type { ChatProvider, EmbeddingProvider } from "../providers/types";
import type { VaultContext } from "../vault-context";
import { EmbeddingCache } from "./cache";
import { chunkLayout, passageCharsFor } from "./passages";
import { KeywordSync } from "./keyword-sync";
import { RateLimiter } from "./rate-limit";
import { addResults, progressLine, RateMeter, type EmbeddingProgress } from "./progress";
import { reconcile, whenIdle, type ReconcileProgress, type ReconcileResult } from "./reconcile";
import { countEmbedded, embeddedModel, goneNoteIds, passageHashes, resetForModel, staleNoteIds } from "./store";
import { toToolError } from "./tool-error";
import { LoadedIndexes, QueryVectorCache } from "./loaded-indexes";
import type { VectorIndex } from "./vector-index";
import { envNumber, MAX_TIMER_MS } from "../env-number";

export type { EmbeddingProgress } from "./progress";

const services = new WeakMap<VaultContext, SemanticService>();
const PROGRESS_LOG_MS = envNumber("LETTUCE_EMBED_LOG_MS", 30_000, { min: 100, max: MAX_TIMER_MS });
const QUERY_CACHE = 256;
// Changes whose embedding fits in this many passages are embedded inside the
// semantic call that needs them; a bigger backlog (the first build, a model
// change) runs in the background while the call answers from what is ready
// (partial: true, with the progress).
const SYNC_PASSAGES = { builtin: 300, remote: 3000 };
const BACKGROUND_DEBOUNCE_MS = 750;
// A semantic call waits for a running background pass only when it has at most this many passages left.
const JOIN_PASSAGES = 32;

/** A semantic call's view of the vectors: the provider, and the progress when a background build is running. */
export interface Freshness {
  provider: EmbeddingProvider;
  /** Set while a large backlog is embedded in the background: answers come from what is ready. */
  building: EmbeddingProgress | null;
}

export class SemanticService {
  readonly limiter = new RateLimiter();
  private cacheDb: EmbeddingCache | null = null;
  private loaded = new LoadedIndexes(() => this.db);
  private running: Promise<ReconcileResult> | null = null;
  private progress = { done: 0, total: 0, passagesLeft: null as number | null };
  private backgroundRunning = false;
  private meter = new RateMeter();
  private changeSeq = 0;
  private cleanSeq = -1;
  private cleanDataVersion = -1;
  private keywords = new KeywordSync({ db: () => this.db, changeSeq: () => this.changeSeq, dataVersion: () => this.dataVersion(), closed: () => this.closed });
  private queryVectors = new QueryVectorCache(QUERY_CACHE);
  private abort = new AbortController();
  private background = false;
  private debounce: ReturnType<typeof setTimeout> | null = null;
  private lastError: string | null = null;
  private closed = false;

  private constructor(readonly vault: VaultContext) {
    const off = vault.indexer.onChange(() => {
      this.changeSeq++;
      if (this.background) this.scheduleBackground();
    });
    vault.onClose(() => {
      off();
      this.close();
    });
  }

  static for(vault: VaultContext): SemanticService {
    let s = services.get(vault);
    if (!s) {
      s = new SemanticService(vault);
      services.set(vault, s);
    }
    return s;
  }

  private get db() {
    return this.vault.indexDb;
  }

  get cache(): EmbeddingCache {
    this.cacheDb ??= EmbeddingCache.open(this.vault.root);
    return this.cacheDb;
  }

  /** The embedding provider, or a not-configured ToolError saying why there is none (or why it cannot be reached now). */
  async embedder(): Promise<EmbeddingProvider> {
    const sel = await selectEmbedder();
    if (!sel.provider) throw new ToolError("not-configured", `No embeddings provider: ${sel.reason}. semantic_search, related_notes, find_duplicates and topic_map need one (see docs/semantic.md)`);
    const unreachable = await embedderReachable(sel.provider);
    if (unreachable) throw new ToolError("not-configured", `No embeddings provider reachable: ${unreachable}. semantic_search, related_notes, find_duplicates and topic_map need one (see docs/semantic.md)`);
    return sel.provider;
  }

  async chat(): Promise<ChatProvider> {
    const sel = await selectChat();
    if (!sel.provider) throw new ToolError("not-configured", sel.reason);
    return sel.provider;
  }

  /** An embeddings provider is configured and answers now (probed, cached briefly). */
  async hasEmbedder(): Promise<boolean> {
    const sel = await selectEmbedder();
    return sel.provider !== null && (await embedderReachable(sel.provider)) === null;
  }

  async hasChat(): Promise<boolean> {
    return (await selectChat()).provider !== null;
  }

  private dataVersion(): number {
    return (this.db.query("PRAGMA data_version").get() as { data_version: number }).data_version;
  }

  /** Are the stored vectors this provider's, of passages split as it splits them now? If not, every note is to embed again. */
  private storedMatches(provider: EmbeddingProvider): boolean {
    const m = embeddedModel(this.db);
    return m !== null && m.id === provider.id && getMeta(this.db, "embed_chunker") === chunkLayout(passageCharsFor(provider));
  }

  /** True when some note's current content is not what is embedded (as get_vault_info reports it). */
  isStale(provider: EmbeddingProvider): boolean {
    const hasNotes = this.db.query("SELECT 1 FROM notes LIMIT 1").get() !== null;
    if (!this.storedMatches(provider)) return hasNotes;
    const stale = this.db.query("SELECT 1 FROM notes n LEFT JOIN embed_notes e ON e.note_id = n.id WHERE e.hash IS NULL OR e.hash <> n.hash LIMIT 1").get();
    return stale !== null || goneNoteIds(this.db).length > 0;
  }

  /**
   * Run (or join) a reconcile pass; passes never overlap. A caller that joins a
   * running pass gets what that pass embedded plus what its own pass added.
   * A background pass yields to requests in flight (lib/offload/activity.ts);
   * a foreground one (a request waits for it) runs at once, and makes any pass
   * it waits behind run at once too.
   */
  reconcileNow(
    onProgress?: (done: number, total: number, detail: ReconcileProgress) => void,
    opts: { background?: boolean; /** Filled with a function that turns this foreground pass into a background one. */ demotable?: { demote?: () => void } } = {},
  ): Promise<ReconcileResult> {
    const background = opts.background === true;
    // A foreground pass nobody waits for any more (reindex_embeddings answered partial) yields to requests from then on.
    const mode = { background };
    const run = async (): Promise<ReconcileResult> => {
      const provider = await this.embedder();
      this.meter = new RateMeter();
      this.backgroundRunning = background;
      try {
        const r = await reconcile(this.db, provider, this.cache, {
          signal: this.abort.signal,
          yield: background ? whenQuiet : opts.demotable ? () => (mode.background ? whenQuiet() : Promise.resolve()) : undefined,
          // A background pass splits notes in the read pool's niced worker: the request thread only writes vectors.
          // Without worker threads the pool would split a whole job at once here: the pass's own paced split does better.
          split: background && readPool(this.vault).threaded ? (job) => offloaded.splitNotes(this.vault, job, this.abort.signal) : undefined,
          onReset: () => this.loaded.drop(),
          onProgress: (done, total, detail) => this.noteProgress(done, total, detail, onProgress),
          onWrite: (added, removed, notes, removedNotes) => this.loaded.apply(added, removed, notes, removedNotes),
        });
        this.lastError = null;
        if (background) this.cache.pruneNowAndThen(provider.id, indexDbPath(this.vault.root));
        return r;
      } catch (e) {
        throw toToolError(e);
      } finally {
        this.backgroundRunning = false;
        this.progress.passagesLeft = null;
      }
    };
    const prev = this.running;
    const next = (prev ? prev.catch(() => null).then((first) => run().then((r) => (first ? addResults(first, r) : r))) : run()).finally(() => {
      if (this.running === next) this.running = null;
    });
    this.running = next;
    if (background) return next;
    // A request waits for this: nothing it waits behind may pause for requests (it is one).
    const release = holdForeground();
    if (opts.demotable) {
      opts.demotable.demote = () => {
        mode.background = true;
        if (this.running === next) this.backgroundRunning = true; // not for a pass that has just ended
        release();
      };
    }
    return next.finally(release);
  }

  private noteProgress(done: number, total: number, detail: ReconcileProgress, onProgress?: (done: number, total: number, detail: ReconcileProgress) => void): void {
    this.progress = { done, total, passagesLeft: detail.passagesLeft };
    this.meter.note(detail.embedded);
    onProgress?.(done, total, detail);
  }

  /** The embedding's progress now: from the running pass, or from the stored vectors when none runs. */
  progressNow(): EmbeddingProgress {
    const notesTotal = (this.db.query("SELECT count(*) AS n FROM notes").get() as { n: number }).n;
    const notesEmbedded = Math.min(notesTotal, countEmbedded(this.db));
    if (!this.running) return { state: notesEmbedded >= notesTotal ? "current" : "pending", notesEmbedded, notesTotal, passagesLeft: notesEmbedded >= notesTotal ? 0 : null, passagesPerSecond: null, etaSeconds: null };
    const rate = this.meter.rate();
    const left = this.progress.passagesLeft;
    return {
      state: "building",
      notesEmbedded,
      notesTotal,
      passagesLeft: left,
      passagesPerSecond: rate === null ? null : Math.round(rate * 10) / 10,
      etaSeconds: rate && left !== null ? Math.ceil(left / rate) : null,
      ...(backgroundWaiting() ? { paused: true } : {}),
    };
  }

  /** A full reconcile on request (reindex_embeddings, `lettuce embed`): also forgets cached vectors nothing uses. */
  async reindex(
    onProgress?: (done: number, total: number, detail: ReconcileProgress) => void,
    demotable?: { demote?: () => void },
  ): Promise<ReconcileResult & { cachePruned: number }> {
    const r = await this.reconcileNow(onProgress, { demotable });
    const provider = await this.embedder();
    const cachePruned = this.cache.prune(provider.id, passageHashes(this.db));
    return { ...r, cachePruned };
  }

  /** Wipe this vault's vectors of the current model, cached ones included, and embed again. */
  async rebuild(onProgress?: (done: number, total: number) => void): Promise<ReconcileResult> {
    const provider = await this.embedder();
    await this.idle();
    this.cache.dropModel(provider.id);
    // A remote model learns its dimension from its first answer; forget it, the weights may differ now.
    if (provider.kind !== "builtin") (provider as { dimension: number | null }).dimension = null;
    await whenIdle(this.db);
    resetForModel(this.db, provider.id);
    this.loaded.drop();
    return this.reconcileNow(onProgress);
  }

  /** The provider, with the vectors brought up to date first (or the build's progress; see freshness()). */
  async ensureFresh(): Promise<EmbeddingProvider> {
    return (await this.freshness()).provider;
  }

  /**
   * Make the vectors reflect the notes before a semantic call. Small changes
   * are embedded now; a large backlog is embedded in the background, and the
   * call answers from what is ready: `building` holds the progress then.
   */
  async freshness(): Promise<Freshness> {
    const provider = await this.embedder();
    await this.vault.settle();
    for (let round = 0; round < 3; round++) {
      const dv = this.dataVersion();
      if (!this.running && this.cleanSeq === this.changeSeq && this.cleanDataVersion === dv) return { provider, building: null };
      const seq = this.changeSeq;
      const pending = this.pendingPassages(provider);
      if (pending === 0 && !this.running) {
        this.cleanSeq = seq;
        this.cleanDataVersion = dv;
        return { provider, building: null };
      }
      const limit = envNumber("LETTUCE_EMBED_SYNC_LIMIT", provider.kind === "builtin" ? SYNC_PASSAGES.builtin : SYNC_PASSAGES.remote, { min: 1, max: 10_000_000, integer: true });
      // A background build in progress, or a backlog too big to wait for: answer from what is ready.
      // Joining a running background pass means waiting for all it has left: only worth it when that is little.
      if (pending > limit || (this.backgroundRunning && pending > JOIN_PASSAGES)) {
        this.startBackground();
        return { provider, building: this.progressNow() };
      }
      await this.reconcileNow();
      this.cleanSeq = seq;
      this.cleanDataVersion = this.dataVersion();
    }
    return { provider, building: null };
  }

  /** Estimated passages still to embed (every note's, after a model change). */
  private pendingPassages(provider: EmbeddingProvider): number {
    const size = passageCharsFor(provider);
    const rows = this.storedMatches(provider) ? staleNoteIds(this.db) : (this.db.query("SELECT id, size FROM notes").all() as { size: number }[]);
    const gone = embeddedModel(this.db) ? goneNoteIds(this.db).length : 0;
    return rows.reduce((n, r) => n + Math.max(1, Math.ceil(r.size / size)), 0) + (gone ? 1 : 0);
  }

  /** Notes whose vectors are not this provider's for their current text, and deleted notes' vectors still stored. */
  pendingNotes(provider: EmbeddingProvider): number {
    if (!this.storedMatches(provider)) return (this.db.query("SELECT count(*) AS n FROM notes").get() as { n: number }).n;
    return staleNoteIds(this.db).length + goneNoteIds(this.db).length;
  }

  /**
   * Embed in the background from now on (serve): the current backlog, then
   * whatever the watcher reports. Does nothing without an embeddings provider.
   * Returns the provider's id when it does.
   */
  async enableBackground(log: (line: string) => void = () => {}): Promise<string | null> {
    if (process.env.LETTUCE_EMBED_BACKGROUND === "0") return null;
    const sel = await selectEmbedder();
    if (!sel.provider || this.closed) return null;
    this.background = true;
    this.keywords.warm(log);
    const pending = this.pendingPassages(sel.provider);
    if (pending > 0) {
      // No passage estimate here: the pass counts them first, and the progress lines say how many (issue 14: a size-based guess was 3× off).
      const notes = this.storedMatches(sel.provider) ? staleNoteIds(this.db).length : (this.db.query("SELECT count(*) AS n FROM notes").get() as { n: number }).n;
      log(`Semantic index: embedding ${notes} new or changed notes in the background with the ${describeEmbedder(sel.provider)} (${sel.reason}); progress every ${Math.round(PROGRESS_LOG_MS / 1000)} s.`);
      const t0 = performance.now();
      // A progress line every PROGRESS_LOG_MS, from the counted passages and the measured rate.
      const ticker = setInterval(() => {
        if (this.running) log(`Semantic index: ${progressLine(this.progressNow())}`);
      }, PROGRESS_LOG_MS);
      ticker.unref?.();
      this.reconcileNow(undefined, { background: true })
        .then((r) => log(`Semantic index current: ${r.notes} notes embedded (${r.embedded} passages by the model) in ${Math.round((performance.now() - t0) / 1000)} s.`))
        .catch((e) => {
          if (!this.closed) log(`Semantic index: background embedding stopped: ${(e as Error).message}`);
        })
        .finally(() => clearInterval(ticker));
    }
    return sel.provider.id;
  }

  private scheduleBackground(delay = BACKGROUND_DEBOUNCE_MS): void {
    if (this.closed) return;
    if (this.debounce) clearTimeout(this.debounce);
    this.debounce = setTimeout(() => {
      this.debounce = null;
      this.startBackground();
    }, delay);
    this.debounce.unref?.();
  }

  private startBackground(): void {
    if (this.running || this.closed) return;
    // A pass a tool call happens to start is still background work, not that token's (lib/offload/caller.ts).
    asCaller("background", () => this.reconcileNow(undefined, { background: true })).catch((e) => {
      const msg = (e as Error).message;
      if (msg !== this.lastError && !this.closed) console.error(`lettuce: background embedding stopped: ${msg}`);
      this.lastError = msg;
    });
  }

  /** Wait for any reconcile in flight (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running.catch(() => undefined);
  }

  /** Bring the stemmed keyword index and the anchor text in step with the notes (keyword-sync.ts). Returns the notes synced. */
  syncKeywords(opts: { background?: boolean } = {}): Promise<number> {
    return this.keywords.sync(opts);
  }

  /** The in-memory passage and note indexes, loaded from the vector tables (again, if another process changed them). */
  indexes(): Promise<{ passages: VectorIndex; notes: VectorIndex } | null> {
    return this.loaded.get();
  }

  /** The query's vector, from a small cache (agents repeat and page through queries). */
  queryVector(provider: EmbeddingProvider, text: string, signal?: AbortSignal): Promise<Float32Array> {
    return this.queryVectors.get(provider, text, signal);
  }

  close(): void {
    this.closed = true;
    this.abort.abort();
    if (this.debounce) clearTimeout(this.debounce);
    const finish = () => {
      this.cacheDb?.close();
      this.cacheDb = null;
    };
    if (this.running) this.running.catch(() => undefined).finally(finish);
    else finish();
  }
}

