// A time an agent or a person gives as an ISO 8601 string (`since`, `from`, `--since`). Date.parse rolls an
// impossible calendar day over: "2026-02-30" was read as March 2nd and answered from there (the clock audit
// of 2026-12-05), where a mistyped date should be said to be one.

/** Milliseconds since the epoch, or null when `s` is no ISO 8601 time or names a day the calendar lacks. */
export function parseIsoTime(s: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(s);
  if (!m) return null;
  const ms = Date.parse(s);
  if (Number.isNaN(ms)) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1];
  return days !== undefined && d >= 1 && d <= days ? ms : null;
}
