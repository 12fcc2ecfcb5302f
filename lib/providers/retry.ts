import { ProviderError, type ProviderErrorKind } from "./types";
import { envNumber, MAX_TIMER_MS } from "../env-number";
import { deadline } from "./deadline";

export interface RetryPolicy {
  /** Tries in all, the first included. */
  attempts: number;
  /** Each try gets this long before it is abandoned. */
  timeoutMs: number;
  /** First back-off; doubled each time, with jitter, capped at maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
}

export function defaultPolicy(kind: "embed" | "chat"): RetryPolicy {
  return {
    // 0 is a valid number of retries: try once.
    attempts: envNumber("LETTUCE_PROVIDER_RETRIES", 2, { min: 0, max: 10, integer: true }) + 1,
    timeoutMs: envNumber("LETTUCE_PROVIDER_TIMEOUT_MS", kind === "chat" ? 120_000 : 60_000, { min: 100, max: MAX_TIMER_MS }),
    baseDelayMs: 500,
    maxDelayMs: 8_000,
  };
}

/** A failed try, classified: whether another try could help, and what to tell the caller if not. */
export class AttemptError extends Error {
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** Classify an HTTP status from a provider. */
export function statusError(label: string, status: number, detail: string, retryAfter: string | null): AttemptError {
  const what = detail ? `: ${detail.slice(0, 300)}` : "";
  if (status === 429) {
    return new AttemptError("rate-limited", `${label} is rate-limiting requests (HTTP 429)${what}`, true, parseRetryAfter(retryAfter));
  }
  if (status >= 500 || status === 408) return new AttemptError("provider-unavailable", `${label} failed with HTTP ${status}${what}`, true);
  if (status === 401 || status === 403) {
    return new AttemptError("provider-error", `${label} refused the credentials (HTTP ${status}); check LETTUCE_API_KEY${what}`, false);
  }
  return new AttemptError("provider-error", `${label} rejected the request (HTTP ${status})${what}`, false);
}

/** Retry-After is seconds or an HTTP date. */
export function parseRetryAfter(v: string | null): number | undefined {
  if (!v) return undefined;
  const secs = Number(v);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : undefined;
}

/** Classify a thrown network or timeout error. */
export function networkError(label: string, url: string, e: unknown, timedOut: boolean, timeoutMs: number): AttemptError {
  if (e instanceof AttemptError) return e;
  if (timedOut) return new AttemptError("provider-unavailable", `${label} did not answer within ${timeoutMs} ms (${url})`, true);
  const msg = (e as Error)?.message ?? String(e);
  return new AttemptError("provider-unavailable", `${label} cannot be reached at ${url}: ${msg}`, true);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ProviderError("provider-unavailable", "The request was cancelled"));
    // The signal may be long-lived (a vault's background embedding): leave no listener behind.
    const onAbort = () => {
      clearTimeout(t);
      reject(new ProviderError("provider-unavailable", "The request was cancelled"));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Run `attempt` with a per-try timeout (its AbortSignal fires at the deadline or
 * when the caller's signal does), retrying retryable failures with exponential
 * back-off (honouring Retry-After). Throws ProviderError.
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  attempt: (signal: AbortSignal, timedOut: () => boolean) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  let last: AttemptError | null = null;
  let tried = 0;
  for (let i = 0; i < policy.attempts; i++) {
    if (i > 0) {
      const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (i - 1)) * (0.75 + Math.random() * 0.5);
      const wait = last?.retryAfterMs !== undefined ? Math.min(last.retryAfterMs, policy.maxDelayMs * 2) : backoff;
      // A Retry-After longer than we are willing to wait is the caller's to honour.
      if (last?.retryAfterMs !== undefined && last.retryAfterMs > policy.maxDelayMs * 2) break;
      await sleep(wait, signal);
    }
    tried++;
    const limit = deadline(policy.timeoutMs);
    const ctl = new AbortController();
    const onAbort = () => ctl.abort();
    signal?.addEventListener("abort", onAbort);
    limit.signal.addEventListener("abort", onAbort);
    try {
      return await attempt(ctl.signal, limit.expired);
    } catch (e) {
      if (signal?.aborted) throw new ProviderError("provider-unavailable", "The request was cancelled");
      if (!(e instanceof AttemptError)) throw e;
      last = e;
      if (!e.retryable) break;
    } finally {
      limit.clear();
      signal?.removeEventListener("abort", onAbort);
    }
  }
  const tries = tried > 1 ? ` (after ${tried} tries)` : "";
  throw new ProviderError(last!.kind, `${last!.message}${tries}`, last!.retryAfterMs);
}
