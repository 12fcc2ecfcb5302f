import { watch, type FSWatcher } from "node:fs";
import { isIgnoredPath } from "../vault/paths";
import { nativeToVault } from "../platform/paths";
import type { Indexer } from "./indexer";
import { envNumber, MAX_TIMER_MS } from "../env-number";

// Editors save in bursts (temp file, rename, chmod); wait this long after the
// last event before re-indexing so one save costs one pass.
const DEBOUNCE_MS = 60;
// But never wait longer than this after the first event of a burst: a file written more often than
// every 60 ms (an app's log, a download, an autosave loop) re-armed the wait for as long as it went on,
// and no edit anywhere in the vault reached the index meanwhile.
const MAX_WAIT_MS = 1000;
// When the system refuses part of the watch (inotify's limit on watches or instances reached: a vault with
// many folders, .git's included, on a machine whose other programs watch too), edits in unwatched folders
// reached the index never. A full reconcile then runs every so often: at least this long apart, and at
// least POLL_COST_FACTOR times as long as the last one took, so that a big vault's scan stays a small share.
const POLL_MIN_MS = envNumber("LETTUCE_WATCH_POLL_MS", 15_000, { min: 100, max: MAX_TIMER_MS });
const POLL_COST_FACTOR = 20;

/**
 * Keep the index current while the server runs, using Bun's recursive
 * fs.watch (inotify on Linux, FSEvents on macOS). Events only name paths;
 * the indexer stats each one, so creates, edits, renames and deletes are all
 * handled the same way.
 */
export class VaultWatcher {
  private watcher: FSWatcher | null = null;
  private pending = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running: Promise<unknown> = Promise.resolve();
  // A pass that failed (a database another process holds locked, a vault folder that could
  // not be listed for a moment) is tried again after this long, doubling up to 30 s. Dropped,
  // its paths stayed out of the index until a restart.
  private retryMs = 0;
  private rescan = false;
  /** When the first event not yet flushed arrived (null: none is pending). */
  private firstAt: number | null = null;
  private started = false;
  private pollTimer: ReturnType<typeof setTimeout> | null = null;
  /** Why the watch may miss changes (the system refused a watch), while a periodic full scan stands in; null when whole. */
  problem: string | null = null;
  private unreadableSaid = false;

  constructor(
    private root: string,
    private indexer: Indexer,
    // One line, not the Error object (Bun prints that with a frame of source code, at every start).
    private onError: (e: unknown) => void = (e) => console.error(`lettuce: watcher: ${(e as Error)?.message ?? e}`),
  ) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    try {
      this.watcher = this.watch();
    } catch (e) {
      this.degrade(e); // not even the vault folder: every change is found by the scan
      return;
    }
    this.watcher.on("error", (e) => this.degrade(e));
  }

  private watch(): FSWatcher {
    return watch(this.root, { recursive: true }, (_event, filename) => {
      if (!filename) {
        // The platform dropped the name (overflow): fall back to a full reconcile.
        this.rescan = true;
      } else {
        const rel = nativeToVault(String(filename));
        if (isIgnoredPath(rel)) return;
        this.pending.add(rel);
      }
      const now = performance.now();
      this.firstAt ??= now;
      if (this.timer) clearTimeout(this.timer);
      this.timer = setTimeout(() => this.flush(), Math.max(0, Math.min(DEBOUNCE_MS, this.firstAt + MAX_WAIT_MS - now)));
    });
  }

  /** The system refused (part of) the watch: say so once, and reconcile the whole vault now and then. */
  private degrade(e: unknown): void {
    if (this.problem || !this.started) return;
    const code = (e as { code?: string }).code;
    // A folder this user may not read (a root-owned lost+found on a mounted drive) is not indexed by the scan
    // either: nothing there to miss. It turned on a full scan every 15 s (idle CPU ×5) and a logged stack at
    // every start (the lifecycle audit). Said once; made readable, it is watched from the next start.
    if (code === "EACCES" || code === "EPERM") {
      if (!this.unreadableSaid) console.error(`lettuce: not watching ${(e as { path?: string }).path ?? "a folder"}: permission denied (its notes are not indexed either)`);
      this.unreadableSaid = true;
      return;
    }
    const why =
      code === "ENOSPC" || code === "EMFILE"
        ? `the system's limit on file watches was reached (${code}; on Linux raise fs.inotify.max_user_watches and max_user_instances)`
        : `the file watch failed (${(e as Error).message})`;
    this.problem = `${why}: changes in some folders are found by a full scan every ${Math.round(POLL_MIN_MS / 1000)} s or more`;
    this.onError(new Error(this.problem));
    const poll = () => {
      this.pollTimer = null;
      if (this.timer) clearTimeout(this.timer);
      const t0 = performance.now();
      this.rescan = true;
      this.flush();
      void this.running.then(() => {
        if (!this.started) return;
        this.pollTimer = setTimeout(poll, Math.max(POLL_MIN_MS, (performance.now() - t0) * POLL_COST_FACTOR));
        this.pollTimer.unref?.();
      });
    };
    this.pollTimer = setTimeout(poll, POLL_MIN_MS);
    this.pollTimer.unref?.();
  }

  /** Index these paths with the next pass (a write whose own re-index failed hands them here). */
  later(paths: string[]): void {
    for (const p of paths) this.pending.add(p);
    if (!this.timer && this.started) this.timer = setTimeout(() => this.flush(), Math.max(this.retryMs, DEBOUNCE_MS));
  }

  private flush(): void {
    this.timer = null;
    this.firstAt = null;
    const paths = [...this.pending];
    const rescan = this.rescan;
    this.pending.clear();
    this.rescan = false;
    this.running = this.running
      .then(() => (rescan ? this.indexer.fullScan() : this.indexer.update(paths)))
      .then(
        () => {
          this.retryMs = 0;
        },
        (e) => {
          this.onError(e);
          if (rescan) this.rescan = true;
          for (const p of paths) this.pending.add(p);
          this.retryMs = Math.min(Math.max(this.retryMs * 2, 500), 30_000);
          if (this.started && !this.timer) this.timer = setTimeout(() => this.flush(), this.retryMs);
        },
      );
  }

  /** Resolves when every event seen so far has reached the index (tests and shutdown use it). */
  async idle(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.flush();
    }
    await this.running;
  }

  stop(): void {
    this.started = false;
    if (this.timer) clearTimeout(this.timer);
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.timer = null;
    this.pollTimer = null;
    this.watcher?.close();
    this.watcher = null;
  }
}
