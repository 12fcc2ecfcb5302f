// Who a piece of work is for: a token's name for tool calls, "web" for the person's page, none for background
// passes. Shared things that queue work (the read workers, the per-token gate) use it to take turns between
// callers, so that one token sending hundreds of heavy calls cannot make another caller's search wait out its
// time budget behind them (an audit measured 25-30 s, every victim call a timeout). Carried by AsyncLocalStorage:
// the key follows the call through every await without being passed down each function.
import { AsyncLocalStorage } from "node:async_hooks";
import { waitInQueue } from "../wait-in-queue";

const scope = new AsyncLocalStorage<string>();

/** Run `fn` (and everything it awaits) on behalf of `key`. */
export function asCaller<T>(key: string, fn: () => T): T {
  return scope.run(key, fn);
}

/** The caller the current work is for ("background" outside any call). */
export function callerKey(): string {
  return scope.getStore() ?? "background";
}

/**
 * At most `limit` calls per caller are worked on at once; a caller's further calls wait their turn (in order)
 * rather than being refused: the spec leaves calls other than the model-backed ones unlimited, so nobody is
 * turned away, but one caller's flood queues behind itself instead of in front of everyone.
 */
export class CallerGate {
  private running = new Map<string, number>();
  private waiting = new Map<string, (() => void)[]>();

  constructor(private readonly limit: () => number) {}

  /** Resolves when `key` may start one more call; call the returned function once that call ends. */
  async enter(key: string, signal?: AbortSignal): Promise<() => void> {
    const n = this.running.get(key) ?? 0;
    if (n < this.limit()) this.running.set(key, n + 1);
    else {
      const q = this.waiting.get(key) ?? [];
      this.waiting.set(key, q);
      await waitInQueue(q, (go) => go, signal, () => {
        if (!q.length) this.waiting.delete(key);
      });
    }
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const q = this.waiting.get(key);
      const next = q?.shift();
      if (q && !q.length) this.waiting.delete(key);
      // The slot passes straight to the next waiting call of the same caller; the count stays.
      if (next) next();
      else {
        const m = (this.running.get(key) ?? 1) - 1;
        if (m > 0) this.running.set(key, m);
        else this.running.delete(key);
      }
    };
  }

  /** Calls of `key` being worked on now (tests). */
  runningFor(key: string): number {
    return this.running.get(key) ?? 0;
  }
}
