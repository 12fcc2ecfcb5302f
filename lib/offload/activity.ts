// Are requests being served right now? Background passes (the embedding of a
// vault, above all) ask before each step and wait while the answer is yes, so
// that a tool call never queues behind them for a core: they pause while any
// request is in flight and resume once the server has been idle for QUIET_MS.
// Work that a request itself waits for (a tool call that embeds a few changed
// notes, reindex_embeddings joining a background pass) is marked foreground
// and never waits for itself. A request in flight for longer than
// LONG_REQUEST_MS (a long-poll such as await_directives, an `answer` waiting on
// its model) stops holding the background back: it is waiting, not working, and
// an agent parked in a long-poll must not stall the embedding for good.
// Nor must a client that never lets the server be quiet (a dashboard polling
// every 100 ms, an agent calling tools back to back): once background work has
// waited STARVE_MS, it gets GRANT_MS of running time as if the server were
// quiet, then waits again (a share of ~1/11 under unbroken traffic; requests
// are still answered meanwhile, on the other core).
// Process-wide: one server, one set of workers.

import { envNumber, MAX_TIMER_MS } from "../env-number";
import { nextTurn } from "../platform/turns";

const LONG_REQUEST_MS = 2_000;
const started = new Set<{ at: number }>();
let inFlight = 0;
let lastEnd = 0;
let foreground = 0;
let waiters: (() => void)[] = [];
let timer: ReturnType<typeof setTimeout> | null = null;
// Since when background work has been kept waiting (null: it is not waiting), and the end of its current grant.
let waitingSince: number | null = null;
let grantUntil = 0;

/** How long background work may be kept waiting before it runs for a while anyway (LETTUCE_BACKGROUND_STARVE_MS). */
function starveMs(): number {
  return envNumber("LETTUCE_BACKGROUND_STARVE_MS", 10_000, { min: 1, max: MAX_TIMER_MS });
}
const grantMs = () => Math.max(1, starveMs() / 10);

/** In a grant now (and open one if background work has waited long enough). */
function granted(now: number): boolean {
  if (now < grantUntil) return true;
  if (waitingSince !== null && now - waitingSince >= starveMs()) {
    grantUntil = now + grantMs();
    waitingSince = null;
    return true;
  }
  return false;
}

/** Background work has been waiting for a quiet moment for a while now (requests keep arriving). */
export function backgroundWaiting(): boolean {
  return waitingSince !== null && performance.now() - waitingSince > quietMs();
}

/** How long the server must be idle before background work resumes (LETTUCE_BACKGROUND_IDLE_MS). */
export function quietMs(): number {
  return envNumber("LETTUCE_BACKGROUND_IDLE_MS", 150, { min: 0, max: MAX_TIMER_MS });
}

const startListeners = new Set<() => void>();
/** Call `fn` as each request begins, before it is worked on (a model host stops then); returns the unsubscribe. */
export function onRequestStart(fn: () => void): () => void {
  startListeners.add(fn);
  return () => startListeners.delete(fn);
}

/** A request began; call the returned function (once) when it ends. */
export function requestStarted(): () => void {
  inFlight++;
  const me = { at: performance.now() };
  started.add(me);
  for (const fn of startListeners) fn();
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    inFlight--;
    started.delete(me);
    lastEnd = performance.now();
    wake();
  };
}

/** Work a request is waiting for runs now, whatever else is in flight; call the returned function when it is done. */
export function holdForeground(): () => void {
  foreground++;
  wake();
  let released = false;
  return () => {
    if (released) return;
    released = true;
    foreground--;
    wake();
  };
}

/** The start of the youngest request in flight that still holds the background back, or null. */
function youngestWorking(now: number): number | null {
  let young: number | null = null;
  for (const r of started) if (now - r.at < LONG_REQUEST_MS && (young === null || r.at > young)) young = r.at;
  return young;
}

/** True when background work should wait: a request is being worked on or just ended, and none waits for the background. */
export function shouldYield(): boolean {
  if (foreground > 0) return false;
  const now = performance.now();
  if (youngestWorking(now) === null && now - lastEnd >= quietMs()) return false;
  return !granted(now);
}

/**
 * Resolves once background work may go on. Background passes call it before each step, so it is their step
 * boundary. The first step since the event loop last turned goes at once when the server is quiet (a pass
 * that starts with the server runs before the first request); a later one waits for the loop to turn first,
 * taking in what has arrived meanwhile, unless a request waits for the work (foreground). Resolving at once
 * every time let a pass run its steps back to back in one turn: an embedding batch's cache write, note
 * writes and next split held the thread 40-90 ms (measured), the audit log's delete slices a year's worth
 * at once. A timer, not setImmediate: Bun runs immediates before timers that are due and before new
 * connections.
 */
export async function whenQuiet(): Promise<void> {
  for (;;) {
    if (foreground > 0) return;
    if (steppedThisTurn) await nextTurn();
    if (!shouldYield()) {
      markStep();
      return;
    }
    waitingSince ??= performance.now();
    await new Promise<void>((resolve) => {
      waiters.push(resolve);
      wake();
    });
  }
}

let steppedThisTurn = false;
function markStep(): void {
  if (steppedThisTurn) return;
  steppedThisTurn = true;
  setTimeout(() => (steppedThisTurn = false), 0).unref?.();
}

/** Release the waiters if the server is quiet now, or check again when it may be. */
function wake(): void {
  if (!waiters.length) return;
  if (!shouldYield()) {
    // Released by a quiet server (not a grant): the wait is over.
    if (performance.now() >= grantUntil) waitingSince = null;
    const ready = waiters;
    waiters = [];
    for (const w of ready) w();
    return;
  }
  // Check again when the quiet period runs out or the youngest request turns long (its end wakes us sooner),
  // or when the wait has gone on long enough for a grant.
  if (timer) clearTimeout(timer);
  const now = performance.now();
  const young = youngestWorking(now);
  const untilQuiet = quietMs() - (now - lastEnd);
  const untilLong = young === null ? 0 : LONG_REQUEST_MS - (now - young);
  const untilGrant = waitingSince === null ? Infinity : starveMs() - (now - waitingSince);
  timer = setTimeout(() => {
    timer = null;
    wake();
  }, Math.max(1, Math.min(Math.max(untilQuiet, untilLong), untilGrant)));
  timer.unref?.();
}

/** Requests in flight now (get_vault_info, tests). */
export function requestsInFlight(): number {
  return inFlight;
}

let serving = false;
/** This process serves requests (lettuce serve): background work keeps a core free for them. */
export function markServing(on = true): void {
  serving = on;
}
export function isServing(): boolean {
  return serving;
}

/** Milliseconds since a request last ended (or Infinity if none has been served); 0 while one is being worked on. */
export function msSinceRequest(): number {
  if (youngestWorking(performance.now()) !== null) return 0;
  return lastEnd === 0 ? Infinity : performance.now() - lastEnd;
}
