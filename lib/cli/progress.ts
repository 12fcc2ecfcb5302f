import cliProgress from "cli-progress";
import type { IndexStatus } from "../index/indexer";

export interface ProgressOptions {
  /** What is counted ("notes"). */
  unit?: string;
  /**
   * Off a terminal (a pipe, a log), print a plain progress line at most this
   * often instead of staying silent: for passes that can take minutes, where
   * silence looks like a hang. Default: silent off a terminal.
   */
  plainEveryMs?: number;
}

/** A progress bar on a terminal; silence (or sparse plain lines) elsewhere. */
export function indexProgress(label: string, opts: ProgressOptions = {}): { update: (s: IndexStatus) => void; stop: () => void } {
  const unit = opts.unit ?? "notes";
  if (!process.stderr.isTTY) {
    const every = opts.plainEveryMs;
    if (!every) return { update: () => {}, stop: () => {} };
    let last = 0;
    let shown = false;
    const t0 = performance.now();
    return {
      update(s) {
        const now = performance.now();
        if (s.total <= 0 || (shown && now - last < every)) return;
        last = now;
        const rate = s.done / Math.max((now - t0) / 1000, 0.001);
        const eta = shown && rate > 0 ? `, about ${Math.ceil((s.total - s.done) / rate)} s to go` : "";
        process.stderr.write(`${label}: ${s.done}/${s.total} ${unit}${eta}\n`);
        shown = true;
      },
      stop() {},
    };
  }
  const bar = new cliProgress.SingleBar(
    { format: `${label} [{bar}] {value}/{total} ${unit} | ETA {eta_formatted}`, stream: process.stderr, hideCursor: true, clearOnComplete: true },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(s) {
      if (!started && s.total > 0) {
        bar.start(s.total, s.done);
        started = true;
      } else if (started) bar.update(s.done);
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
