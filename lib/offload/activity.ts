// Are requests being served right now? Background passes (the embedding of a
// vault, above all) ask before each step and wait while the answer is yes, so
// that a tool call never queues behind them for a core: they pause while any
// request is in flight and resume once the server has been idle for QUIET_MS.
// Work that a request itself waits for (a tool call that embeds a few changed
// notes, reindex_embeddings joining a background pass) is marked foreground
// and never waits for itself. Process-wide: one server, one set of workers.

let inFlight = 0;
let lastEnd = 0;
let foreground = 0;
let waiters: (() => void)[] = [];
let timer: ReturnType<typeof setTimeout> | null = null;

/** How long the server must be idle before background work resumes (LETTUCE_BACKGROUND_IDLE_MS). */
export function quietMs(): number {
  const v = Number(process.env.LETTUCE_BACKGROUND_IDLE_MS);
  return Number.isFinite(v) && v >= 0 && process.env.LETTUCE_BACKGROUND_IDLE_MS !== "" ? v : 150;
}

/** A request began; call the returned function (once) when it ends. */
export function requestStarted(): () => void {
  inFlight++;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    inFlight--;
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

/** True when background work should wait: a request is in flight or just ended, and none waits for the background. */
export function shouldYield(): boolean {
  if (foreground > 0) return false;
  return inFlight > 0 || performance.now() - lastEnd < quietMs();
}

/** Resolves once background work may go on (at once when the server is quiet). */
export function whenQuiet(): Promise<void> {
  if (!shouldYield()) return Promise.resolve();
  return new Promise((resolve) => {
    waiters.push(resolve);
    wake();
  });
}

/** Release the waiters if the server is quiet now, or check again when it may be. */
function wake(): void {
  if (!waiters.length) return;
  if (!shouldYield()) {
    const ready = waiters;
    waiters = [];
    for (const w of ready) w();
    return;
  }
  // A request in flight wakes us when it ends; otherwise the quiet period is running out.
  if (inFlight > 0 || timer) return;
  timer = setTimeout(() => {
    timer = null;
    wake();
  }, Math.max(1, quietMs() - (performance.now() - lastEnd)));
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

/** Milliseconds since a request last ended (or Infinity if none has been served); 0 while one is in flight. */
export function msSinceRequest(): number {
  if (inFlight > 0) return 0;
  return lastEnd === 0 ? Infinity : performance.now() - lastEnd;
}
