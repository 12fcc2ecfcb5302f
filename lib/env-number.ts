// Numeric settings from the environment. `Number(x) || default` read "" and " " as 0 (a rate limit of 0 is
// "off"), let -1 through (a parse pool that never started, a pass that never ended) and read "1e309" as
// Infinity (workers started without end; a timer past setTimeout's 24.8-day limit, which fires every
// millisecond): the configuration audit of 2026-12-05. Every LETTUCE_* number goes through here.

const warned = new Set<string>();

export interface NumberRange {
  min: number;
  max: number;
  /** Whole numbers only (a count of workers, calls, items). */
  integer?: boolean;
}

/** Timers take at most this: 24 hours, well inside setTimeout's 2^31 - 1 ms. */
export const MAX_TIMER_MS = 86_400_000;

/**
 * The value of `name` when it is a plain decimal number within the range; otherwise `fallback`. A value
 * that is set but unusable is said once on stderr (a limit silently off is worse than one refused).
 */
export function envNumber(name: string, fallback: number, range: NumberRange, env: Record<string, string | undefined> = process.env): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const text = raw.trim();
  const n = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : Number.NaN;
  const ok = Number.isFinite(n) && n >= range.min && n <= range.max && (!range.integer || Number.isInteger(n));
  if (ok) return n;
  if (!warned.has(name)) {
    warned.add(name);
    console.error(
      `lettuce: ${name}=${JSON.stringify(raw.slice(0, 40))} is not ${range.integer ? "a whole number" : "a number"} from ${range.min} to ${range.max}; using ${fallback}`,
    );
  }
  return fallback;
}
