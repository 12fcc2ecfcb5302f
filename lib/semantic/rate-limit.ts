// A runaway backstop for the tools that spend model time (spec, "Rate limits"):
// a token bucket per caller token, generous enough that no honest agent loop
// meets it. LETTUCE_MODEL_RATE_LIMIT sets the calls per minute (default 120,
// bursts of up to that many); 0 turns it off.
import { ToolError } from "../errors";
import { envNumber } from "../env-number";

const DEFAULT_PER_MINUTE = 120;

export class RateLimiter {
  private buckets = new Map<string, { tokens: number; at: number }>();

  readonly perMinute: number;

  constructor(
    perMinute: number = envNumber("LETTUCE_MODEL_RATE_LIMIT", DEFAULT_PER_MINUTE, { min: 0, max: 1e6 }),
    // Monotonic: on the wall clock, a step back of a day left every token rate-limited for that day.
    private now: () => number = () => performance.now(),
  ) {
    this.perMinute = Number.isFinite(perMinute) && perMinute >= 0 ? perMinute : DEFAULT_PER_MINUTE;
  }

  /** Take one call for `key`, or throw rate-limited with retry_after_ms. */
  take(key: string, tool: string): void {
    if (!(this.perMinute > 0)) return;
    const rate = this.perMinute / 60_000; // tokens per ms
    const t = this.now();
    const b = this.buckets.get(key) ?? { tokens: this.perMinute, at: t };
    b.tokens = Math.min(this.perMinute, b.tokens + (t - b.at) * rate);
    b.at = t;
    if (b.tokens < 1) {
      this.buckets.set(key, b);
      const retryAfterMs = Math.ceil((1 - b.tokens) / rate);
      throw new ToolError(
        "rate-limited",
        `Too many model-backed calls: ${tool} is limited to ${this.perMinute} calls a minute per token; retry in ${Math.ceil(retryAfterMs / 1000)} s`,
        { retry_after_ms: retryAfterMs },
      );
    }
    b.tokens -= 1;
    this.buckets.set(key, b);
  }
}
