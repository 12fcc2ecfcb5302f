/**
 * Wait in a FIFO `queue` until whoever hands out turns calls the entry's `go`. If `signal` aborts first, the
 * entry leaves the queue, `left` runs (to drop an empty queue, or let the next one in) and the wait rejects
 * with the signal's reason. `entry` makes the queue's entry around `go`. Used by the per-token call gate
 * (offload/caller.ts) and the answer budget (server/answer-budget.ts).
 */
export function waitInQueue<E>(queue: E[], entry: (go: () => void) => E, signal: AbortSignal | undefined, left: () => void): Promise<void> {
  if (signal?.aborted) {
    left();
    return Promise.reject(signal.reason);
  }
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      const i = queue.indexOf(waiter);
      if (i !== -1) queue.splice(i, 1);
      left();
      reject(signal!.reason);
    };
    const waiter = entry(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    });
    signal?.addEventListener("abort", onAbort, { once: true });
    queue.push(waiter);
  });
}
