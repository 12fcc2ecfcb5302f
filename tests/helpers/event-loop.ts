// How long the test process's event loop (the in-process server's too) went without a turn.

/** The longest the event loop went without a turn while `work` ran, and what `work` gave. */
export async function longestStall<T>(work: () => Promise<T>): Promise<{ result: T; stall: number }> {
  let last = performance.now();
  let stall = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last);
    last = now;
  }, 5);
  try {
    const result = await work();
    stall = Math.max(stall, performance.now() - last);
    return { result, stall };
  } finally {
    clearInterval(tick);
  }
}
