// The embedding's progress as agents and logs see it: counted passages (the
// reconcile pass counts them before it starts), a rate measured over the last
// minute, and the time left at that rate (docs/semantic.md, "Background embedding").
import type { ReconcileResult } from "./reconcile";

// The embedding rate is measured over this much recent time (it changes with load and passage length).
const RATE_WINDOW_MS = 60_000;

/** How far the embedding of the vault has got, from counted passages and the measured rate. */
export interface EmbeddingProgress {
  /** building: a pass is embedding now; current: every note is embedded; pending: some are not, and no pass runs yet. */
  state: "building" | "current" | "pending";
  notesEmbedded: number;
  notesTotal: number;
  /** Distinct passages the model still has to embed (counted when the pass began; cached vectors excluded). */
  passagesLeft: number | null;
  /** Passages per second over the last minute of this pass (null until it has embedded some). */
  passagesPerSecond: number | null;
  /** passagesLeft at the measured rate (null until there is a rate). */
  etaSeconds: number | null;
  /** The pass is waiting for the server to be quiet (requests keep arriving): the time left is longer than etaSeconds says. */
  paused?: boolean;
}

/** Passages embedded per second over the recent window of one pass. */
export class RateMeter {
  /** (time, passages embedded so far) samples. */
  private samples: { at: number; embedded: number }[] = [];

  note(embedded: number, now = performance.now()): void {
    this.samples.push({ at: now, embedded });
    while (this.samples.length > 2 && now - this.samples[1]!.at > RATE_WINDOW_MS) this.samples.shift();
  }

  /** Passages per second, or null before there is a measure (half a second and one embedded batch at least). */
  rate(): number | null {
    const a = this.samples[0];
    const b = this.samples[this.samples.length - 1];
    if (!a || !b || b.embedded <= a.embedded || b.at - a.at < 500) return null;
    return ((b.embedded - a.embedded) * 1000) / (b.at - a.at);
  }
}

export function addResults(a: ReconcileResult, b: ReconcileResult): ReconcileResult {
  return { notes: a.notes + b.notes, passages: a.passages + b.passages, embedded: a.embedded + b.embedded, pruned: a.pruned + b.pruned };
}

/** "1,200/6,571 notes embedded, 3,400 passages to go at 38/s: about 90 s" (for logs and messages). */
export function progressLine(p: EmbeddingProgress): string {
  const n = (x: number) => x.toLocaleString("en-US");
  const head = `${n(p.notesEmbedded)}/${n(p.notesTotal)} notes embedded`;
  if (p.state === "current") return `${head}, current`;
  const left = p.passagesLeft === null ? "" : `, ${n(p.passagesLeft)} passages to go`;
  const eta = p.paused
    ? "; paused while requests keep arriving (it runs a tenth of the time until they stop)"
    : p.etaSeconds === null || p.passagesPerSecond === null
      ? p.passagesLeft
        ? " (rate not measured yet)"
        : ""
      : ` at ${p.passagesPerSecond}/s: about ${p.etaSeconds} s`;
  return `${head}${left}${eta}`;
}
