// A time limit for a call to a model server that counts the time this thread could wait, not the time it
// was busy. A timer that fires late fired because the thread was held (a long synchronous step, a loaded
// machine), and the server's answer may already be in the socket, unread: aborting then blames the server
// for our own delay. A probe's verdict is kept for a while (./probe.ts), so one busy second made a running
// Ollama "not answer" for the next ten, and every semantic tool said not-configured meanwhile (seen in the
// test suite at load 8). Such a late timer gives the call its time again instead, a few times at most: a
// server that never answers is still given up on.

/** How late a timer must fire to count as held up rather than due: timers run a few ms late when all is well. */
const LATE_MS = 100;
const MAX_GRACES = 3;

export interface Deadline {
  signal: AbortSignal;
  /** True once the limit has passed (the signal is then aborted). */
  expired(): boolean;
  clear(): void;
}

export function deadline(ms: number): Deadline {
  const ctl = new AbortController();
  let expired = false;
  let graces = 0;
  let due = performance.now() + ms;
  let timer: ReturnType<typeof setTimeout>;
  const fire = () => {
    const now = performance.now();
    if (now - due > LATE_MS && graces < MAX_GRACES) {
      graces++;
      due = now + ms;
      timer = setTimeout(fire, ms);
      return;
    }
    expired = true;
    ctl.abort();
  };
  timer = setTimeout(fire, ms);
  return {
    signal: ctl.signal,
    expired: () => expired,
    clear: () => clearTimeout(timer),
  };
}
