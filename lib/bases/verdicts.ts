// "Too costly" verdicts on a base's filter or on one of its formula columns. One is kept across index
// generations while the base's file is unchanged (else every write paid the whole budget again on the
// request thread, a second a base): 30 s, then twice as long at each overrun in a row, up to ten
// minutes. Then it is evaluated again: a loaded machine overruns once, and a note that made it costly
// may have been fixed.
const FIRST_MS = 30_000;
const KEEP_MS = 10 * 60_000;
const MAX_ENTRIES = 500;

export class CostlyVerdicts<E> {
  private readonly byKey = new Map<string, { stamp: string; strikes: number; until: number; error: E }>();

  /** The verdict standing for `key` on this version (`stamp`) of the base, or null. */
  standing(key: string, stamp: string): E | null {
    const v = this.byKey.get(key);
    return v && v.stamp === stamp && performance.now() < v.until ? v.error : null;
  }

  /** Another overrun: on the same version, the verdict stands twice as long as the last one did. */
  overran(key: string, stamp: string, error: E): void {
    const prev = this.byKey.get(key);
    const strikes = prev?.stamp === stamp ? prev.strikes + 1 : 1;
    this.byKey.delete(key);
    this.byKey.set(key, { stamp, strikes, until: performance.now() + Math.min(KEEP_MS, FIRST_MS * 2 ** (strikes - 1)), error });
    if (this.byKey.size > MAX_ENTRIES) this.byKey.delete(this.byKey.keys().next().value!);
  }

  /** Within budget again: a later overrun starts from the first term. */
  clear(key: string): void {
    this.byKey.delete(key);
  }
}
