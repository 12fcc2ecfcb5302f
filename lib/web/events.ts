// Live updates for open pages: one Server-Sent Events stream per tab.
// "index" events come from the indexer (the watcher saw a note change, a
// write landed); "state" events when the review queue or the timeline moved
// (a proposal queued by an agent, an approval from the CLI in another
// process), found by a cheap look at state.db each second while a page listens.
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { pendingCount } from "../write/proposals";
import { latestEditId } from "../write/edits";
import type { VaultContext } from "../vault-context";

const MAX_STREAMS = 32;
const PING_MS = 20_000;
const STATE_POLL_MS = 1000;
/** Changed paths sent per event; past it the page is told to reload what it shows. */
const MAX_PATHS = 200;

type Send = (event: string, data: unknown) => void;

const live = new WeakMap<VaultContext, WebEvents>();

/**
 * End every open tab's stream now (a server about to stop). An open tab held its connection, and a SIGTERM
 * waited out the whole grace period for it (the review of 2026-12-05); the tab's EventSource reconnects.
 */
export function endWebStreams(vault: VaultContext): void {
  live.get(vault)?.end();
}

export class WebEvents {
  private streams = new Set<Send>();
  private ended = false;
  private endNow: () => void = () => {};
  private ending = new Promise<void>((resolve) => (this.endNow = resolve));
  private stateTimer: ReturnType<typeof setInterval> | null = null;
  private lastState = "";
  private offIndex: () => void;

  constructor(private vault: VaultContext) {
    this.offIndex = vault.indexer.onChange((c) => {
      const all = [...c.changed, ...c.deleted];
      this.broadcast("index", {
        changed: c.changed.slice(0, MAX_PATHS),
        deleted: c.deleted.slice(0, MAX_PATHS),
        attachments: c.attachments.length,
        more: all.length > MAX_PATHS,
      });
      this.checkState();
    });
    vault.onClose(() => this.close());
    live.set(vault, this);
  }

  end(): void {
    this.ended = true;
    this.endNow();
  }

  get listeners(): number {
    return this.streams.size;
  }

  private broadcast(event: string, data: unknown): void {
    for (const send of this.streams) send(event, data);
  }

  private stateNow(): { pendingProposals: number; lastEditId: number } {
    return { pendingProposals: pendingCount(this.vault.stateDb), lastEditId: latestEditId(this.vault.stateDb) };
  }

  /** Tell listeners when the proposals queue or the timeline changed since the last look. */
  checkState(): void {
    if (!this.streams.size) return;
    let s;
    try {
      s = this.stateNow();
    } catch {
      return; // state.db busy: the next tick looks again
    }
    const key = JSON.stringify(s);
    if (key !== this.lastState) {
      this.lastState = key;
      this.broadcast("state", s);
    }
  }

  /** Answer GET /api/events: a stream until the tab goes away. */
  stream(c: Context): Response {
    if (this.streams.size >= MAX_STREAMS) return c.json({ error: `Too many open live streams (${MAX_STREAMS}); close some tabs`, kind: "rate-limited" }, 429);
    return streamSSE(c, async (stream) => {
      let open = true;
      const send: Send = (event, data) => {
        if (open) void stream.writeSSE({ event, data: JSON.stringify(data) }).catch(() => (open = false));
      };
      this.streams.add(send);
      if (!this.stateTimer) {
        this.stateTimer = setInterval(() => this.checkState(), STATE_POLL_MS);
        (this.stateTimer as { unref?: () => void }).unref?.();
      }
      send("hello", this.stateNow());
      // One abort listener for the stream's life: a new one per ping piled up on the request's signal
      // (one every 20 s for as long as a tab stayed open; the soak audit).
      const gone = new Promise((r) => c.req.raw.signal.addEventListener("abort", r, { once: true }));
      try {
        while (open && !this.ended && !c.req.raw.signal.aborted) {
          await Promise.race([stream.sleep(PING_MS), gone, this.ending]);
          if (open && !this.ended && !c.req.raw.signal.aborted) await stream.writeSSE({ event: "ping", data: "{}" });
        }
      } catch {
        /* the tab went away mid-write */
      } finally {
        open = false;
        this.streams.delete(send);
        if (!this.streams.size && this.stateTimer) {
          clearInterval(this.stateTimer);
          this.stateTimer = null;
        }
      }
    });
  }

  close(): void {
    this.offIndex();
    if (this.stateTimer) clearInterval(this.stateTimer);
    this.stateTimer = null;
    this.streams.clear();
  }
}
