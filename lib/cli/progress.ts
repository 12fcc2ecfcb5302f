import cliProgress from "cli-progress";
import type { IndexStatus } from "../index/indexer";

/** A progress bar on a terminal; silence elsewhere (pipes, CI logs). */
export function indexProgress(label: string): { update: (s: IndexStatus) => void; stop: () => void } {
  if (!process.stderr.isTTY) return { update: () => {}, stop: () => {} };
  const bar = new cliProgress.SingleBar(
    { format: `${label} [{bar}] {value}/{total} notes`, stream: process.stderr, hideCursor: true, clearOnComplete: true },
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
