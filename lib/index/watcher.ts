import { watch, type FSWatcher } from "node:fs";
import { isIgnoredPath } from "../vault/paths";
import { nativeToVault } from "../platform/paths";
import type { Indexer } from "./indexer";

// Editors save in bursts (temp file, rename, chmod); wait this long after the
// last event before re-indexing so one save costs one pass.
const DEBOUNCE_MS = 60;

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

  constructor(
    private root: string,
    private indexer: Indexer,
    private onError: (e: unknown) => void = (e) => console.error("watcher:", e),
  ) {}

  start(): void {
    if (this.watcher) return;
    this.watcher = watch(this.root, { recursive: true }, (_event, filename) => {
      if (!filename) {
        // The platform dropped the name (overflow): fall back to a full reconcile.
        this.running = this.running.then(() => this.indexer.fullScan()).catch(this.onError);
        return;
      }
      const rel = nativeToVault(String(filename));
      if (isIgnoredPath(rel)) return;
      this.pending.add(rel);
      if (this.timer) clearTimeout(this.timer);
      this.timer = setTimeout(() => this.flush(), DEBOUNCE_MS);
    });
    this.watcher.on("error", this.onError);
  }

  private flush(): void {
    this.timer = null;
    const paths = [...this.pending];
    this.pending.clear();
    this.running = this.running.then(() => this.indexer.update(paths)).catch(this.onError);
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
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.watcher?.close();
    this.watcher = null;
  }
}
