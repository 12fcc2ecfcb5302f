// Work that a request waits for and that runs on the event loop in small steps (resolving a batch of ids)
// shares the loop's turns with every other caller through this one scheduler. A slice boundary that each
// request marks on its own (an await of setImmediate) bounds one request's stretch, not the loop's: 32
// concurrent get_pages of 50 ids each resolved ~8 ms of ids per turn apiece, so a turn ran them back to back
// and a ping from another token waited 160-240 ms. Here all callers together get TURN_BUDGET_MS of a turn,
// one step each in turn (a get_page of one id is not queued behind a batch of 50); then the loop takes in new
// connections and due timers before the next turn.

/** How much of one turn of the event loop the steps of all callers may take together. */
export const TURN_BUDGET_MS = 4;

interface Job {
  /** Runs the next step; true when there is none left (the job has settled its promise). */
  step(): boolean;
}

const jobs: Job[] = [];
let turnQueued = false;

/**
 * Resolves once the event loop has turned and taken in what arrived meanwhile (new connections, requests,
 * due timers). Long work that a request waits for pauses here between slices.
 */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => setTimeout(resolve, 0));
}

/**
 * For a long stretch of work that a request waits for, in steps: the returned function, awaited before each
 * step, gives the event loop a turn (nextTurn) once `ms` have passed since the last one, and costs nothing
 * otherwise.
 */
export function turnEvery(ms: number): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < ms) return;
    await nextTurn();
    since = performance.now();
  };
}

function queueTurn(): void {
  if (turnQueued) return;
  turnQueued = true;
  setTimeout(() => {
    turnQueued = false;
    if (jobs.length) runTurn();
  }, 0);
}

function runTurn(): void {
  const start = performance.now();
  while (jobs.length) {
    if (performance.now() - start >= TURN_BUDGET_MS) return queueTurn();
    const job = jobs.shift()!;
    if (!job.step()) jobs.push(job);
  }
}

/**
 * `step(0)`, …, `step(n - 1)` in order, on the event loop, sharing its turns with every other caller of this
 * function; resolves with their results, or rejects with the first step's error. Each step should be short
 * (well under TURN_BUDGET_MS): the budget is checked between steps. When nothing else waits, the first
 * steps run at once, before this returns.
 */
export function inTurns<T>(n: number, step: (i: number) => T): Promise<T[]> {
  return new Promise<T[]>((resolve, reject) => {
    const out: T[] = [];
    jobs.push({
      step() {
        if (out.length === n) return (resolve(out), true);
        try {
          out.push(step(out.length));
        } catch (e) {
          reject(e);
          return true;
        }
        if (out.length === n) return (resolve(out), true);
        return false;
      },
    });
    // At once only when no turn is queued: a sync run queues one, so that a second caller in the same turn
    // of the loop waits for the next rather than adding its steps to this one.
    if (jobs.length === 1 && !turnQueued) runTurn();
    queueTurn();
  });
}
