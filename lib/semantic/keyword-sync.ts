// When the stemmed keyword index and the anchor text (keyword.ts, anchors.ts) are brought in step
// with the notes: on a hybrid call that needs them, and under `serve` once at start-up in the
// background, so that the first hybrid query does not wait seconds for them (obsidian-hub ~2.9 s,
// 10k notes ~4.3 s on a fresh index). One sync at a time; a second caller waits for it.
import type { Database } from "bun:sqlite";
import { msSinceRequest } from "../offload/activity";
import { nextTurn } from "../platform/turns";
import { syncStemmed } from "./keyword";
import { whenIdle } from "./reconcile";

// The background warm-up is optional work: the first semantic call does it if it has not run. Its
// slices are short (a request that arrives meanwhile waits for the slice and its commit: on the 10k
// vault 4 ms slices held the thread 4.6 ms at the median, 17 ms at p90, ~40 ms at most, FTS5 merging
// segments; 8 ms slices 9, 25 and ~45 ms), and it runs only after WARMUP_IDLE_MS without a request,
// so that a steady stream of requests never meets it (docs/semantic.md, "Freshness").
const BACKGROUND_SLICE_MS = 4;
const WARMUP_IDLE_MS = 1000;
const WARMUP_POLL_MS = 50;

/** What the sync needs from its vault's semantic layer. */
export interface KeywordSyncHost {
  db(): Database;
  /** Bumped by every change the indexer reports. */
  changeSeq(): number;
  /** SQLite's data_version: moves when another connection (a CLI run) changed the index. */
  dataVersion(): number;
  closed(): boolean;
}

export class KeywordSync {
  private syncedSeq = -1;
  private syncedDataVersion = -1;
  /** The sync under way, which other callers wait for. */
  private running: Promise<number> | null = null;
  /** Requests waiting for the sync under way (a background one then stops pausing for requests). */
  private waiters = 0;

  constructor(private readonly host: KeywordSyncHost) {}

  /**
   * Bring the stemmed keyword index and the anchor text in step with the notes (cheap when nothing
   * changed); it yields between slices. `background` (serve's warm-up): a sync no request waits for,
   * which pauses while requests are served; once a request does wait for it, it goes on at a
   * request's pace. Returns the notes synced.
   */
  async sync(opts: { background?: boolean } = {}): Promise<number> {
    const background = opts.background === true;
    for (let running = this.running; running; running = this.running) {
      if (background) return 0;
      // A background sync waiting for the server to fall quiet would wait for this very request: it sees this and goes on.
      this.waiters++;
      try {
        await running.catch(() => undefined);
      } finally {
        this.waiters--;
      }
    }
    const h = this.host;
    if (this.syncedSeq === h.changeSeq() && this.syncedDataVersion === h.dataVersion()) return 0;
    const seq = h.changeSeq();
    const pause = async () => {
      // A background sync goes on only once no request has come for WARMUP_IDLE_MS, or as soon as a
      // request waits for it (polled: holdForeground would let the embedding go on too).
      for (;;) {
        await nextTurn();
        if (h.closed()) throw new Error("the vault was closed");
        if (!background || this.waiters > 0 || msSinceRequest() >= WARMUP_IDLE_MS) return;
        await new Promise((r) => setTimeout(r, WARMUP_POLL_MS));
      }
    };
    const run = (async () => {
      await whenIdle(h.db());
      const n = await syncStemmed(h.db(), pause, background ? BACKGROUND_SLICE_MS : undefined);
      this.syncedSeq = seq;
      this.syncedDataVersion = h.dataVersion();
      return n;
    })();
    this.running = run;
    try {
      return await run;
    } finally {
      if (this.running === run) this.running = null;
    }
  }

  /** Start the background warm-up; logs when it is done, or why it stopped. */
  warm(log: (line: string) => void): void {
    const t0 = performance.now();
    this.sync({ background: true })
      .then((n) => n > 0 && log(`Keyword ranking ready: ${n} notes stemmed, with their anchor text, in ${((performance.now() - t0) / 1000).toFixed(1)} s.`))
      .catch((e) => {
        if (!this.host.closed()) log(`Keyword ranking: warm-up stopped (the first semantic query does it): ${(e as Error).message}`);
      });
  }
}
