// Evaluate a parsed Bases expression (expr.ts) against one note. Semantics
// follow Obsidian's, which follow JavaScript's: a method on the wrong type or
// a missing property gives null (falsy), never an error.
import { hasText } from "../text-find";
import { UnsupportedExpression, type Expr } from "./expr";
import {
  addDuration, compare, DateV, DurationV, FILE, FORMULA, isFile, isPlainObject, localDay, parseDate, parseDuration,
  propertyValue, toDate, toNumber, truthy, valuesEqual, type RowFile, type Value,
} from "./values";
import { trimRuns } from "../text-ends";
import { bounded, overdue, spend, textOf, LONG_VALUE, type EvalBudget } from "./eval-budget";
import { normalizeTag } from "../vault/parse";

export { evaluationBudget, MAX_NOTE_STEPS, MAX_PASS_MS, MAX_VALUE_LENGTH, type EvalBudget } from "./eval-budget";
export { DateV, isDateString, propertyOf, toJsonValue, truthy, type RowFile, type Value } from "./values";

export interface EvalEnv {
  file: RowFile;
  /** The base's formulas by name: a parsed expression, or why it cannot be. */
  formulas: Map<string, Expr | UnsupportedExpression>;
  /** Formulas being evaluated (cycle guard). */
  stack?: Set<string>;
  /** Formula values already known for this note: each formula runs once per note. */
  memo?: Map<string, Value>;
  /** Work done so far, shared by every note of one pass over a base (see evaluationBudget). */
  budget?: EvalBudget;
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
    case "backlinks":
      return f.backlinks();
    case "embeds":
      return f.embeds();
    default:
      // file["x"] gets here unparsed (expr.ts refuses file.x): refused too, never a silent null.
      throw new UnsupportedExpression(`file.${name}`, `the file property file.${name}`);
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
  // A frontmatter date is its text to every method but the date ones.
  if (recv instanceof DateV && recv.text !== undefined && name !== "date") recv = recv.text;
  if (isFile(recv)) {
    const f = recv[FILE];
    switch (name) {
      case "hasTag":
        return args.some((a) => {
          const t = normalizeTag(textOf(a)).toLowerCase(); // as tags are stored: composed (NFC)
          return t !== "" && f.tags.some((x) => x === t || x.startsWith(t + "/"));
        });
      case "inFolder": {
        const want = trimRuns(textOf(args[0] ?? null), "/");
        return want === "" || f.folder === want || f.folder.startsWith(want + "/");
      }
      case "hasLink": {
        const want = args[0] ?? null;
        const target = isFile(want) ? want[FILE].path : textOf(want);
        return target !== "" && f.links().some((l) => linkMatches(l, target));
      }
      case "hasProperty": {
        const want = textOf(args[0] ?? null).toLowerCase();
        return Object.keys(f.frontmatter).some((k) => k.toLowerCase() === want);
      }
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
      return textOf(recv);
    case "isEmpty":
      return recv === null || recv === "" || (Array.isArray(recv) && recv.length === 0) || (isPlainObject(recv) && Object.keys(recv).length === 0);
  }
  if (typeof recv === "string") {
    const s = args.map((a) => textOf(a));
    switch (name) {
      // lib/text-find.ts: the native search costs the product of the lengths on a needle that nearly matches.
      case "contains":
        return hasText(recv, s[0] ?? "");
      case "containsAll":
        return s.every((x) => hasText(recv, x));
      case "containsAny":
        return s.some((x) => hasText(recv, x));
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
      case "join": {
        const parts = recv.map((x) => textOf(x as Value));
        const sep = args.length ? textOf(args[0]!) : ",";
        bounded(parts.reduce((n, p) => n + p.length, 0) + sep.length * Math.max(0, parts.length - 1));
        return parts.join(sep);
      }
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
    return new DateV(localDay(recv.ms), false);
  }
  void env;
  return null;
}

function callGlobal(fn: string, args: Value[]): Value {
  switch (fn) {
    case "date":
      return args[0] instanceof DateV ? args[0] : parseDate(textOf(args[0] ?? null));
    case "now":
      return new DateV(Date.now(), true);
    case "today":
      return new DateV(localDay(Date.now()), false);
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
      return parseDuration(textOf(args[0] ?? null));
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
      return op === "+" ? textOf(a) + textOf(b) : null;
    }
    if (op === "+" && Array.isArray(a) && Array.isArray(b)) {
      bounded(a.length + b.length);
      return [...a, ...b];
    }
    if (op === "+" && (typeof a === "string" || typeof b === "string")) {
      const x = textOf(a);
      const y = textOf(b);
      bounded(x.length + y.length);
      return x + y;
    }
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
  if (isPlainObject(obj)) return propertyValue(obj, name);
  if ((typeof obj === "string" || Array.isArray(obj)) && name === "length") return obj.length;
  if (obj instanceof DateV && obj.text !== undefined && name === "length") return obj.text.length;
  if (obj instanceof DateV) {
    const d = new Date(obj.ms);
    const f: Record<string, number> = { year: d.getFullYear(), month: d.getMonth() + 1, day: d.getDate(), hour: d.getHours(), minute: d.getMinutes(), second: d.getSeconds(), millisecond: d.getMilliseconds() };
    return f[name] ?? null;
  }
  return null;
}

function formula(name: string, env: EvalEnv): Value {
  const f = env.formulas.get(name);
  // base-file.ts refuses a base naming a formula it lacks; formula[expr] still gets here.
  if (f === undefined) throw new UnsupportedExpression(`formula.${name}`, `no formula named ${JSON.stringify(name)} in this base`);
  if (f instanceof UnsupportedExpression) throw f;
  if (env.memo?.has(name)) return env.memo.get(name)!;
  const stack = env.stack ?? new Set<string>();
  if (stack.has(name)) throw new UnsupportedExpression(`formula.${name}`, "a formula that refers to itself");
  if (stack.size >= 32) throw new UnsupportedExpression(`formula.${name}`, "formulas nested more than 32 deep");
  stack.add(name);
  try {
    const v = evaluate(f, { ...env, stack });
    env.memo?.set(name, v);
    return v;
  } finally {
    stack.delete(name);
  }
}

/** The value of an expression for one note. Throws UnsupportedExpression only for an unsupported formula it reaches. */
export function evaluate(e: Expr, env: EvalEnv): Value {
  if (env.budget) spend(env.budget);
  switch (e.t) {
    case "lit":
      return e.v;
    case "list":
      return e.items.map((i) => evaluate(i, env));
    case "id":
      if (e.name === "file") return { [FILE]: env.file };
      if (e.name === "note") return env.file.frontmatter;
      if (e.name === "formula") return { [FORMULA]: true };
      return propertyValue(env.file.frontmatter, e.name);
    case "member":
      return member(evaluate(e.obj, env), e.name, env);
    case "index": {
      const obj = evaluate(e.obj, env);
      const key = evaluate(e.key, env);
      if (Array.isArray(obj)) {
        const i = toNumber(key);
        return i === null ? null : ((obj.at(i) as Value) ?? null);
      }
      return member(obj, textOf(key), env);
    }
    case "call":
      return callGlobal(e.fn, e.args.map((a) => evaluate(a, env)));
    case "method": {
      const recv = evaluate(e.obj, env);
      const v = callMethod(recv, e.name, e.args.map((a) => evaluate(a, env)), env);
      // A chain of methods spends its steps on the way down and does its work on the way up (x.lower().lower()…
      // on a long value): the clock is read again after a method on a long value.
      if (env.budget && (typeof recv === "string" || Array.isArray(recv)) && recv.length > LONG_VALUE) overdue(env.budget);
      return v;
    }
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
