// Evaluate a parsed Bases expression (expr.ts) against one note. Semantics
// follow Obsidian's, which follow JavaScript's: a method on the wrong type or
// a missing property gives null (falsy), never an error; comparisons between
// a date and a date-like string compare as dates.
import { UnsupportedExpression, type Expr } from "./expr";

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
}

export class DateV {
  constructor(
    readonly ms: number,
    readonly hasTime: boolean,
  ) {}
  toString(): string {
    const iso = new Date(this.ms).toISOString();
    return this.hasTime ? iso : iso.slice(0, 10);
  }
}

export class DurationV {
  constructor(
    readonly months: number,
    readonly ms: number,
  ) {}
}

const FILE = Symbol("file");
const FORMULA = Symbol("formula");
type FileRef = { [FILE]: RowFile };
type FormulaNs = { [FORMULA]: true };
export type Value = string | number | boolean | null | DateV | DurationV | Value[] | { [k: string]: unknown } | FileRef | FormulaNs;

export interface EvalEnv {
  file: RowFile;
  /** The base's formulas by name: a parsed expression, or why it cannot be. */
  formulas: Map<string, Expr | UnsupportedExpression>;
  /** Formulas being evaluated (cycle guard). */
  stack?: Set<string>;
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** A date from a frontmatter string ("2026-03-02", "2026-03-02T10:00", "2026-03-02 10:00:00"), or null. */
export function parseDate(s: string): DateV | null {
  const m = DATE_RE.exec(s.trim());
  if (!m) return null;
  if (m[4] === undefined) {
    const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
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

export function parseDuration(s: string): DurationV | null {
  const parts = [...s.trim().matchAll(/(-?\d+(?:\.\d+)?)\s*([a-zA-Z]+)/g)];
  if (!parts.length || parts.map((p) => p[0]).join("").replace(/\s/g, "") !== s.replace(/\s/g, "")) return null;
  let months = 0;
  let ms = 0;
  for (const [, n, unit] of parts) {
    const u = UNITS.find(([re]) => re.test(unit!));
    if (!u) return null;
    months += Number(n) * u[1];
    ms += Number(n) * u[2];
  }
  return new DurationV(months, ms);
}

function addDuration(d: DateV, dur: DurationV, sign: 1 | -1): DateV {
  const dt = new Date(d.ms);
  if (dur.months) dt.setUTCMonth(dt.getUTCMonth() + sign * dur.months);
  return new DateV(dt.getTime() + sign * dur.ms, d.hasTime || dur.ms % 86_400_000 !== 0);
}

const isFile = (v: unknown): v is FileRef => typeof v === "object" && v !== null && FILE in v;
const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof DateV) && !(v instanceof DurationV) && !isFile(v) && !(FORMULA in v);

function toDate(v: Value): DateV | null {
  if (v instanceof DateV) return v;
  if (typeof v === "string") return parseDate(v);
  if (typeof v === "number") return new DateV(v, true);
  return null;
}

function toNumber(v: Value): number | null {
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
function compare(a: Value, b: Value): number | null {
  if (a === null || b === null) return null;
  if (a instanceof DateV || b instanceof DateV) {
    const da = toDate(a);
    const db = toDate(b);
    return da && db ? da.ms - db.ms : null;
  }
  if (typeof a === "string" && typeof b === "string") return a < b ? -1 : a > b ? 1 : 0;
  const na = toNumber(a);
  const nb = toNumber(b);
  return na !== null && nb !== null ? na - nb : null;
}

function asString(v: Value): string {
  if (v === null) return "";
  if (Array.isArray(v)) return v.map((x) => asString(x as Value)).join(", ");
  if (v instanceof DateV) return v.toString();
  if (isFile(v)) return v[FILE].path;
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

/** A property by name; Obsidian treats property names case-insensitively, so a differently-cased key is the fallback. */
export function propertyOf(obj: Record<string, unknown>, name: string): Value {
  if (Object.hasOwn(obj, name)) return (obj[name] as Value) ?? null;
  const lc = name.toLowerCase();
  for (const k of Object.keys(obj)) if (k.toLowerCase() === lc) return (obj[k] as Value) ?? null;
  return null;
}

function fileField(f: RowFile, name: string): Value {
  const base = f.path.slice(f.path.lastIndexOf("/") + 1);
  const dot = base.lastIndexOf(".");
  switch (name) {
    case "name":
      return base;
    case "basename":
      return dot > 0 ? base.slice(0, dot) : base;
    case "path":
      return f.path;
    case "folder":
      return f.folder;
    case "ext":
      return dot > 0 ? base.slice(dot + 1) : "";
    case "size":
      return f.size;
    case "mtime":
      return new DateV(f.mtime, true);
    case "ctime":
      return new DateV(f.ctime, true);
    case "tags":
      return f.tags.map((t) => `#${t}`);
    case "links":
      return f.links();
    case "properties":
      return f.frontmatter;
    default:
      return null;
  }
}

function linkMatches(link: string, target: string): boolean {
  const norm = (s: string) =>
    s
      .replace(/^\[\[|\]\]$/g, "")
      .split("|")[0]!
      .split("#")[0]!
      .replace(/\.md$/i, "")
      .toLowerCase();
  const a = norm(link);
  const b = norm(target);
  return a === b || a.slice(a.lastIndexOf("/") + 1) === b;
}

function callMethod(recv: Value, name: string, args: Value[], env: EvalEnv): Value {
  if (isFile(recv)) {
    const f = recv[FILE];
    switch (name) {
      case "hasTag":
        return args.some((a) => {
          const t = asString(a).replace(/^#/, "").toLowerCase();
          return t !== "" && f.tags.some((x) => x === t || x.startsWith(t + "/"));
        });
      case "inFolder": {
        const want = asString(args[0] ?? null).replace(/^\/+|\/+$/g, "");
        return want === "" || f.folder === want || f.folder.startsWith(want + "/");
      }
      case "hasLink": {
        const want = args[0] ?? null;
        const target = isFile(want) ? want[FILE].path : asString(want);
        return target !== "" && f.links().some((l) => linkMatches(l, target));
      }
      case "hasProperty":
        return Object.hasOwn(f.frontmatter, asString(args[0] ?? null));
      case "toString":
        return f.path;
      case "isTruthy":
        return true;
      default:
        return null;
    }
  }
  switch (name) {
    case "isTruthy":
      return truthy(recv);
    case "toString":
      return asString(recv);
    case "isEmpty":
      return recv === null || recv === "" || (Array.isArray(recv) && recv.length === 0) || (isPlainObject(recv) && Object.keys(recv).length === 0);
  }
  if (typeof recv === "string") {
    const s = args.map(asString);
    switch (name) {
      case "contains":
        return recv.includes(s[0] ?? "");
      case "containsAll":
        return s.every((x) => recv.includes(x));
      case "containsAny":
        return s.some((x) => recv.includes(x));
      case "startsWith":
        return recv.startsWith(s[0] ?? "");
      case "endsWith":
        return recv.endsWith(s[0] ?? "");
      case "lower":
        return recv.toLowerCase();
      case "upper":
        return recv.toUpperCase();
      case "trim":
        return recv.trim();
    }
  }
  if (Array.isArray(recv)) {
    const has = (x: Value) => recv.some((y) => valuesEqual(y as Value, x));
    switch (name) {
      case "contains":
        return has(args[0] ?? null);
      case "containsAll":
        return args.every(has);
      case "containsAny":
        return args.some(has);
      case "join":
        return recv.map((x) => asString(x as Value)).join(args.length ? asString(args[0]!) : ",");
    }
  }
  const n = toNumber(recv);
  if (n !== null && typeof recv !== "boolean") {
    const digits = Math.max(0, Math.min(20, toNumber(args[0] ?? 0) ?? 0));
    switch (name) {
      case "abs":
        return Math.abs(n);
      case "ceil":
        return Math.ceil(n);
      case "floor":
        return Math.floor(n);
      case "round":
        return Math.round(n * 10 ** digits) / 10 ** digits;
      case "toFixed":
        return n.toFixed(digits);
    }
  }
  if (recv instanceof DateV && name === "date") {
    return new DateV(Math.floor(recv.ms / 86_400_000) * 86_400_000, false);
  }
  void env;
  return null;
}

function callGlobal(fn: string, args: Value[]): Value {
  switch (fn) {
    case "date":
      return args[0] instanceof DateV ? args[0] : parseDate(asString(args[0] ?? null));
    case "now":
      return new DateV(Date.now(), true);
    case "today": {
      const d = new Date();
      return new DateV(Date.UTC(d.getFullYear(), d.getMonth(), d.getDate()), false);
    }
    case "number":
      return args[0] instanceof DateV ? args[0].ms : toNumber(args[0] ?? null);
    case "list":
      return Array.isArray(args[0]) ? args[0] : args[0] === undefined || args[0] === null ? [] : [args[0]];
    case "if":
      return truthy(args[0] ?? null) ? (args[1] ?? null) : (args[2] ?? null);
    case "min":
    case "max": {
      const ns = args.map(toNumber).filter((x): x is number => x !== null);
      return ns.length ? (fn === "min" ? Math.min(...ns) : Math.max(...ns)) : null;
    }
    case "duration":
      return parseDuration(asString(args[0] ?? null));
    default:
      return null;
  }
}

function arithmetic(op: string, a: Value, b: Value): Value {
  if (op === "+" || op === "-") {
    const sign = op === "+" ? 1 : -1;
    if (a instanceof DateV) {
      const dur = b instanceof DurationV ? b : typeof b === "string" ? parseDuration(b) : typeof b === "number" ? new DurationV(0, b) : null;
      if (dur) return addDuration(a, dur, sign);
      if (op === "-") {
        const other = toDate(b);
        if (other) return a.ms - other.ms;
      }
      return op === "+" ? asString(a) + asString(b) : null;
    }
    if (op === "+" && Array.isArray(a) && Array.isArray(b)) return [...a, ...b];
    if (op === "+" && (typeof a === "string" || typeof b === "string")) return asString(a) + asString(b);
  }
  if (a instanceof DurationV && (op === "*" || op === "/")) {
    const k = toNumber(b);
    if (k === null) return null;
    return op === "*" ? new DurationV(a.months * k, a.ms * k) : new DurationV(a.months / k, a.ms / k);
  }
  const x = toNumber(a);
  const y = toNumber(b);
  if (x === null || y === null) return null;
  switch (op) {
    case "+":
      return x + y;
    case "-":
      return x - y;
    case "*":
      return x * y;
    case "/":
      return x / y;
    case "%":
      return x % y;
  }
  return null;
}

function member(obj: Value, name: string, env: EvalEnv): Value {
  if (isFile(obj)) return fileField(obj[FILE], name);
  if (typeof obj === "object" && obj !== null && FORMULA in obj) return formula(name, env);
  if (isPlainObject(obj)) return propertyOf(obj, name);
  if ((typeof obj === "string" || Array.isArray(obj)) && name === "length") return obj.length;
  if (obj instanceof DateV) {
    const d = new Date(obj.ms);
    const f: Record<string, number> = { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds(), millisecond: d.getUTCMilliseconds() };
    return f[name] ?? null;
  }
  return null;
}

function formula(name: string, env: EvalEnv): Value {
  const f = env.formulas.get(name);
  if (f === undefined) return null;
  if (f instanceof UnsupportedExpression) throw f;
  const stack = env.stack ?? new Set<string>();
  if (stack.has(name)) throw new UnsupportedExpression(`formula.${name}`, "a formula that refers to itself");
  stack.add(name);
  try {
    return evaluate(f, { ...env, stack });
  } finally {
    stack.delete(name);
  }
}

/** The value of an expression for one note. Throws UnsupportedExpression only for an unsupported formula it reaches. */
export function evaluate(e: Expr, env: EvalEnv): Value {
  switch (e.t) {
    case "lit":
      return e.v;
    case "list":
      return e.items.map((i) => evaluate(i, env));
    case "id":
      if (e.name === "file") return { [FILE]: env.file };
      if (e.name === "note") return env.file.frontmatter;
      if (e.name === "formula") return { [FORMULA]: true };
      return propertyOf(env.file.frontmatter, e.name);
    case "member":
      return member(evaluate(e.obj, env), e.name, env);
    case "index": {
      const obj = evaluate(e.obj, env);
      const key = evaluate(e.key, env);
      if (Array.isArray(obj)) {
        const i = toNumber(key);
        return i === null ? null : ((obj.at(i) as Value) ?? null);
      }
      return member(obj, asString(key), env);
    }
    case "call":
      return callGlobal(e.fn, e.args.map((a) => evaluate(a, env)));
    case "method":
      return callMethod(evaluate(e.obj, env), e.name, e.args.map((a) => evaluate(a, env)), env);
    case "unary": {
      const v = evaluate(e.arg, env);
      if (e.op === "!") return !truthy(v);
      const n = toNumber(v);
      return n === null ? null : -n;
    }
    case "binary": {
      if (e.op === "&&") return truthy(evaluate(e.left, env)) ? truthy(evaluate(e.right, env)) : false;
      if (e.op === "||") return truthy(evaluate(e.left, env)) ? true : truthy(evaluate(e.right, env));
      const a = evaluate(e.left, env);
      const b = evaluate(e.right, env);
      switch (e.op) {
        case "==":
          return valuesEqual(a, b);
        case "!=":
          return !valuesEqual(a, b);
        case ">":
        case "<":
        case ">=":
        case "<=": {
          const c = compare(a, b);
          if (c === null) return false;
          return e.op === ">" ? c > 0 : e.op === "<" ? c < 0 : e.op === ">=" ? c >= 0 : c <= 0;
        }
        default:
          return arithmetic(e.op, a, b);
      }
    }
  }
}

/** A value as JSON for an agent: dates as ISO strings, durations in ms. */
export function toJsonValue(v: Value): unknown {
  if (v instanceof DateV) return v.toString();
  if (v instanceof DurationV) return v.ms + v.months * 30 * 86_400_000;
  if (Array.isArray(v)) return v.map((x) => toJsonValue(x as Value));
  if (isFile(v)) return v[FILE].path;
  if (typeof v === "number" && !Number.isFinite(v)) return null;
  return v;
}
