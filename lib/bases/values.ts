// Values of the Bases expression language and how they compare: dates
// (from frontmatter strings or date()), durations ("1w", "2 days"), lists,
// objects, and a note's file object. JavaScript's rules where Obsidian follows
// them; a date and a date-like string compare as dates.

/** One note as the expression language sees it (`file.*`, `note.*`, bare property names). */
export interface RowFile {
  path: string;
  folder: string;
  size: number;
  mtime: number;
  ctime: number;
  /** Lower-cased, without '#'. */
  tags: string[];
  frontmatter: Record<string, unknown>;
  /** Where the note's links point: resolved vault paths, or the link text when unresolved. Loaded on first use. */
  links(): string[];
  /** The notes that link to this one, by path (itself left out). Loaded on first use. */
  backlinks(): string[];
  /** What the note embeds (`![[…]]`): resolved vault paths, or the link text when unresolved. Loaded on first use. */
  embeds(): string[];
}

// Dates are the local calendar's, as in Obsidian: a date without a time is local midnight, today() is
// today here, `.date()` the local day. The UTC day was used for some of these and the local one for others:
// east or west of UTC, "edited today" and "due today" were wrong for hours each day (the clock audit of
// 2026-12-05). A date-time with an offset is that instant; one without, local time (as Date.parse reads it).
export class DateV {
  constructor(
    readonly ms: number,
    readonly hasTime: boolean,
    /** The frontmatter text it was read from: what it prints as, and what string methods see. */
    readonly text?: string,
  ) {}
  /** Past ±8.64e15 ms (`now() + "999999999y"`) there is no date: printing one threw RangeError (a tool answered internal). */
  get valid(): boolean {
    return !Number.isNaN(new Date(this.ms).getTime());
  }
  toString(): string {
    if (this.text !== undefined) return this.text;
    if (!this.valid) return "Invalid Date";
    if (this.hasTime) return new Date(this.ms).toISOString();
    const d = new Date(this.ms);
    const two = (n: number) => String(n).padStart(2, "0");
    return `${String(d.getFullYear()).padStart(4, "0")}-${two(d.getMonth() + 1)}-${two(d.getDate())}`;
  }
}

/** Local midnight of the day `ms` falls on. */
export function localDay(ms: number): number {
  const d = new Date(ms);
  return new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
}

export class DurationV {
  constructor(
    readonly months: number,
    readonly ms: number,
  ) {}
}

export const FILE = Symbol("file");
export const FORMULA = Symbol("formula");
export type FileRef = { [FILE]: RowFile };
export type FormulaNs = { [FORMULA]: true };
export type Value = string | number | boolean | null | DateV | DurationV | Value[] | { [k: string]: unknown } | FileRef | FormulaNs;


const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** A date from a frontmatter string ("2026-03-02", "2026-03-02T10:00", "2026-03-02 10:00:00"), or null. */
export function parseDate(s: string): DateV | null {
  const m = DATE_RE.exec(s.trim());
  if (!m) return null;
  // A day the calendar lacks (2026-02-30) is no date: read as one it rolled over to March 2nd.
  const day = new Date(0);
  day.setFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  if (day.getMonth() !== Number(m[2]) - 1 || day.getDate() !== Number(m[3])) return null;
  if (m[4] === undefined) {
    const d = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
    // new Date(y, …) reads years 0-99 as 1900-1999.
    d.setFullYear(Number(m[1]));
    const ms = d.getTime();
    return Number.isNaN(ms) ? null : new DateV(ms, false);
  }
  const ms = Date.parse(s.trim().replace(" ", "T"));
  return Number.isNaN(ms) ? null : new DateV(ms, true);
}

export function isDateString(v: unknown): v is string {
  return typeof v === "string" && parseDate(v) !== null;
}

const UNITS: [RegExp, number, number][] = [
  [/^(y|yr|yrs|year|years)$/, 12, 0],
  [/^(M|month|months)$/, 1, 0],
  [/^(w|week|weeks)$/, 0, 7 * 86_400_000],
  [/^(d|day|days)$/, 0, 86_400_000],
  [/^(h|hour|hours)$/, 0, 3_600_000],
  [/^(m|minute|minutes)$/, 0, 60_000],
  [/^(s|second|seconds)$/, 0, 1000],
];

/** Longer than any duration a person writes ("1 year 2 months 3 weeks …"); a longer string is none. */
const MAX_DURATION_LENGTH = 256;
// One number-and-unit at a time from where the last stopped. The unanchored scan this replaces was
// retried from every digit of a run of digits, the square of its length: duration() of a 30,000-digit
// string held the thread for 4 s.
const DURATION_PART = /\s*(-?\d+(?:\.\d+)?)\s*([a-zA-Z]+)\s*/y;

export function parseDuration(s: string): DurationV | null {
  if (s.length > MAX_DURATION_LENGTH) return null;
  const text = s.trim();
  if (!text) return null;
  let months = 0;
  let ms = 0;
  DURATION_PART.lastIndex = 0;
  while (DURATION_PART.lastIndex < text.length) {
    const m = DURATION_PART.exec(text);
    if (!m) return null;
    const u = UNITS.find(([re]) => re.test(m[2]!));
    if (!u) return null;
    months += Number(m[1]) * u[1];
    ms += Number(m[1]) * u[2];
  }
  return new DurationV(months, ms);
}

export function addDuration(d: DateV, dur: DurationV, sign: 1 | -1): DateV {
  const dt = new Date(d.ms);
  if (dur.months) dt.setMonth(dt.getMonth() + sign * dur.months);
  // Whole days move the calendar day and keep the time of day (a day across a DST change is 23 or 25 hours).
  if (dur.ms % 86_400_000 === 0) {
    dt.setDate(dt.getDate() + (sign * dur.ms) / 86_400_000);
    return new DateV(dt.getTime(), d.hasTime);
  }
  return new DateV(dt.getTime() + sign * dur.ms, true);
}

export const isFile = (v: unknown): v is FileRef => typeof v === "object" && v !== null && FILE in v;
export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof DateV) && !(v instanceof DurationV) && !isFile(v) && !(FORMULA in v);

export function toDate(v: Value): DateV | null {
  if (v instanceof DateV) return v;
  if (typeof v === "string") return parseDate(v);
  if (typeof v === "number") return new DateV(v, true);
  return null;
}

export function toNumber(v: Value): number | null {
  if (typeof v === "number") return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "string" && v.trim() !== "" && !Number.isNaN(Number(v))) return Number(v);
  return null;
}

export function truthy(v: Value): boolean {
  if (v === null || v === false || v === "" || v === 0) return false;
  if (typeof v === "number" && Number.isNaN(v)) return false;
  return true;
}

export function valuesEqual(a: Value, b: Value): boolean {
  if (a === null || b === null) return a === b;
  if (a instanceof DateV || b instanceof DateV) {
    const da = toDate(a);
    const db = toDate(b);
    return da !== null && db !== null && da.ms === db.ms;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => valuesEqual(x as Value, b[i] as Value));
  }
  if (typeof a === "number" || typeof b === "number") {
    const na = toNumber(a);
    const nb = toNumber(b);
    return na !== null && nb !== null && na === nb;
  }
  if (typeof a === "string" && typeof b === "string") return a === b;
  if (typeof a === "boolean" && typeof b === "boolean") return a === b;
  if (isFile(a) && isFile(b)) return a[FILE].path === b[FILE].path;
  return false;
}

/** <0, 0, >0, or null when the two cannot be ordered. */
export function compare(a: Value, b: Value): number | null {
  if (a === null || b === null) return null;
  if (a instanceof DateV || b instanceof DateV) {
    const da = toDate(a);
    const db = toDate(b);
    if (da && db) return da.ms - db.ms;
    // A date as written in frontmatter against a string that is no date ("2026-03"): compared as the strings they were.
    const ta = a instanceof DateV ? a.text : a;
    const tb = b instanceof DateV ? b.text : b;
    return typeof ta === "string" && typeof tb === "string" ? compare(ta, tb) : null;
  }
  if (typeof a === "string" && typeof b === "string") return a < b ? -1 : a > b ? 1 : 0;
  const na = toNumber(a);
  const nb = toNumber(b);
  return na !== null && nb !== null ? na - nb : null;
}

export function asString(v: Value): string {
  if (v === null) return "";
  if (Array.isArray(v)) return v.map((x) => asString(x as Value)).join(", ");
  if (v instanceof DateV) return v.toString();
  if (isFile(v)) return v[FILE].path;
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

/**
 * A property as the expression language sees it: an ISO date or date-time string is a date (Obsidian's
 * date properties), so `due + "2w"`, `due.year` and `number(due)` work; it keeps its text, which is what
 * it prints as and what string methods (`contains`, `startsWith`, …) read.
 */
export function propertyValue(obj: Record<string, unknown>, name: string): Value {
  const v = propertyOf(obj, name);
  if (typeof v !== "string") return v;
  if (!/^\d{4}-\d\d-\d\d/.test(v)) return v;
  const d = parseDate(v);
  return d ? new DateV(d.ms, d.hasTime, v) : v;
}

/** A property by name; Obsidian treats property names case-insensitively, so a differently-cased key is the fallback. */
export function propertyOf(obj: Record<string, unknown>, name: string): Value {
  if (Object.hasOwn(obj, name)) return (obj[name] as Value) ?? null;
  const lc = name.toLowerCase();
  for (const k of Object.keys(obj)) if (k.toLowerCase() === lc) return (obj[k] as Value) ?? null;
  return null;
}

/** A value as JSON for an agent: dates as ISO strings, durations in ms. */
export function toJsonValue(v: Value): unknown {
  if (v instanceof DateV) return v.valid ? v.toString() : null;
  if (v instanceof DurationV) return v.ms + v.months * 30 * 86_400_000;
  if (Array.isArray(v)) return v.map((x) => toJsonValue(x as Value));
  if (isFile(v)) return v[FILE].path;
  if (typeof v === "number" && !Number.isFinite(v)) return null;
  return v;
}

/** What asString(list) would come to, counted until it is past `cap`. */
export function textLength(list: Value[], sofar: number, cap: number): number {
  for (const x of list) {
    if (sofar > cap) break;
    sofar += 2 + (typeof x === "string" ? x.length : Array.isArray(x) ? textLength(x, 0, cap) : isPlainObject(x) ? JSON.stringify(x).length : 32);
  }
  return sofar;
}
