// The expression language of Obsidian Bases filters and formulas, parsed into
// a small tree. Only what the evaluator (evaluate.ts) can answer is accepted:
// an unknown function or method, `this`, a regex literal or any other syntax
// fails here with the name of what is unsupported, so that a filter is never
// silently read as "match everything".

export type Expr =
  | { t: "lit"; v: string | number | boolean | null }
  | { t: "list"; items: Expr[] }
  | { t: "id"; name: string }
  | { t: "member"; obj: Expr; name: string }
  | { t: "index"; obj: Expr; key: Expr }
  | { t: "call"; fn: string; args: Expr[] }
  | { t: "method"; obj: Expr; name: string; args: Expr[] }
  | { t: "unary"; op: "!" | "-"; arg: Expr }
  | { t: "binary"; op: string; left: Expr; right: Expr };

/** An expression the engine does not support (or cannot read). `what` names the construct. */
export class UnsupportedExpression extends Error {
  constructor(
    readonly expression: string,
    readonly what: string,
  ) {
    super(`unsupported in ${JSON.stringify(expression)}: ${what}`);
  }
}

/** A base whose evaluation ran past its budget (steps, a value's length, a pass's wall time): see rows.ts for how long that verdict is kept. */
export class TooCostly extends UnsupportedExpression {}

/** Global functions the evaluator knows. */
export const GLOBAL_FUNCTIONS = new Set(["date", "today", "now", "number", "list", "if", "min", "max", "duration"]);
/** Methods the evaluator knows, on any receiver type (a wrong type at run time gives null, as in Obsidian). */
export const METHODS = new Set([
  // file
  "hasTag", "inFolder", "hasLink", "hasProperty",
  // string and list
  "contains", "containsAll", "containsAny", "startsWith", "endsWith", "isEmpty", "lower", "upper", "trim", "join",
  // any
  "isTruthy", "toString",
  // number
  "abs", "round", "ceil", "floor", "toFixed",
  // date
  "date",
]);

/** The file properties the evaluator knows (`file.name`, …): any other is refused, not read as null. */
export const FILE_FIELDS = new Set(["name", "basename", "path", "folder", "ext", "size", "mtime", "ctime", "tags", "links", "backlinks", "embeds", "properties"]);

type Tok = { k: "num"; v: number } | { k: "str"; v: string } | { k: "id"; v: string } | { k: "op"; v: string } | { k: "end" };

const OPS = ["==", "!=", ">=", "<=", "&&", "||", ">", "<", "!", "+", "-", "*", "/", "%", "(", ")", "[", "]", ",", "."];

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '"' || c === "'") {
      let s = "";
      let j = i + 1;
      for (; j < src.length && src[j] !== c; j++) {
        if (src[j] === "\\" && j + 1 < src.length) {
          const e = src[++j]!;
          s += e === "n" ? "\n" : e === "t" ? "\t" : e;
        } else s += src[j];
      }
      if (j >= src.length) throw new UnsupportedExpression(src, "an unterminated string");
      out.push({ k: "str", v: s });
      i = j + 1;
      continue;
    }
    // A dot belongs to a number only with a digit after it: `123.toString()` and `1.isTruthy()` (Functions.md) are method calls.
    const num = /^(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?/.exec(src.slice(i));
    if (num && !(c === "." && out.length && out[out.length - 1]!.k !== "op")) {
      out.push({ k: "num", v: Number(num[0]) });
      i += num[0].length;
      continue;
    }
    const id = /^[\p{L}_$][\p{L}\p{N}_$]*/u.exec(src.slice(i));
    if (id) {
      out.push({ k: "id", v: id[0] });
      i += id[0].length;
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (!op) throw new UnsupportedExpression(src, `the character ${JSON.stringify(c)}`);
    out.push({ k: "op", v: op });
    i += op.length;
  }
  out.push({ k: "end" });
  return out;
}

const MAX_DEPTH = 64;

/** Parse one Bases expression; throws UnsupportedExpression naming what it cannot take. */
export function parseExpr(src: string): Expr {
  if (src.length > 4000) throw new UnsupportedExpression(src.slice(0, 80) + "…", "an expression longer than 4,000 characters");
  const toks = tokenize(src);
  let p = 0;
  let depth = 0;
  const peek = () => toks[p]!;
  const isOp = (v: string) => {
    const t = peek();
    return t.k === "op" && t.v === v;
  };
  const expect = (v: string) => {
    if (!isOp(v)) throw new UnsupportedExpression(src, `expected "${v}" at token ${p + 1}`);
    p++;
  };
  const deeper = <T>(fn: () => T): T => {
    if (++depth > MAX_DEPTH) throw new UnsupportedExpression(src.slice(0, 80), "nesting deeper than 64 levels");
    try {
      return fn();
    } finally {
      depth--;
    }
  };

  const binaryLevel = (ops: string[], next: () => Expr) => (): Expr => {
    let left = next();
    for (;;) {
      const t = peek();
      if (t.k !== "op" || !ops.includes(t.v)) return left;
      p++;
      left = { t: "binary", op: t.v, left, right: next() };
    }
  };
  const args = (): Expr[] => {
    const out: Expr[] = [];
    expect("(");
    if (!isOp(")")) {
      for (;;) {
        out.push(or());
        if (isOp(",")) p++;
        else break;
      }
    }
    expect(")");
    return out;
  };
  const primary = (): Expr =>
    deeper(() => {
      const t = peek();
      p++;
      if (t.k === "num") return { t: "lit", v: t.v };
      if (t.k === "str") return { t: "lit", v: t.v };
      if (t.k === "id") {
        if (t.v === "true" || t.v === "false") return { t: "lit", v: t.v === "true" };
        if (t.v === "null") return { t: "lit", v: null };
        if (t.v === "this") throw new UnsupportedExpression(src, "`this` (it depends on where Obsidian shows the base)");
        if (isOp("(")) {
          if (!GLOBAL_FUNCTIONS.has(t.v)) throw new UnsupportedExpression(src, `the function ${t.v}()`);
          return { t: "call", fn: t.v, args: args() };
        }
        return { t: "id", name: t.v };
      }
      if (t.k === "op" && t.v === "(") {
        const e = or();
        expect(")");
        return e;
      }
      if (t.k === "op" && t.v === "[") {
        const items: Expr[] = [];
        if (!isOp("]")) {
          for (;;) {
            items.push(or());
            if (isOp(",")) p++;
            else break;
          }
        }
        expect("]");
        return { t: "list", items };
      }
      if (t.k === "end") throw new UnsupportedExpression(src, "an incomplete expression");
      throw new UnsupportedExpression(src, `"${t.v}" here`);
    });
  const postfix = (): Expr => {
    let e = primary();
    for (;;) {
      if (isOp(".")) {
        p++;
        const t = peek();
        if (t.k !== "id") throw new UnsupportedExpression(src, "a property name after \".\"");
        p++;
        if (isOp("(")) {
          if (!METHODS.has(t.v)) throw new UnsupportedExpression(src, `the method .${t.v}()`);
          e = { t: "method", obj: e, name: t.v, args: args() };
        } else {
          // file.backlinks.length > 0 over an unknown property was null: no rows, and no word why.
          if (e.t === "id" && e.name === "file" && !FILE_FIELDS.has(t.v)) throw new UnsupportedExpression(src, `the file property file.${t.v}`);
          e = { t: "member", obj: e, name: t.v };
        }
      } else if (isOp("[")) {
        p++;
        const key = or();
        expect("]");
        e = { t: "index", obj: e, key };
      } else return e;
    }
  };
  const unary = (): Expr =>
    deeper(() => {
      if (isOp("!") || isOp("-")) {
        const op = (peek() as { v: "!" | "-" }).v;
        p++;
        return { t: "unary", op, arg: unary() };
      }
      return postfix();
    });
  const mul = binaryLevel(["*", "/", "%"], unary);
  const add = binaryLevel(["+", "-"], mul);
  const cmp = binaryLevel(["==", "!=", ">=", "<=", ">", "<"], add);
  const and = binaryLevel(["&&"], cmp);
  const or: () => Expr = binaryLevel(["||"], and);

  const e = or();
  if (peek().k !== "end") {
    const t = peek() as { v: unknown };
    throw new UnsupportedExpression(src, `unexpected ${JSON.stringify(t.v)} after a complete expression`);
  }
  return e;
}

/** The formulas an expression names (`formula.x`, `formula["x"]`), so that a base naming one it lacks is refused, not read as null. */
export function formulaRefs(e: Expr, out: string[] = []): string[] {
  switch (e.t) {
    case "member":
      if (e.obj.t === "id" && e.obj.name === "formula") out.push(e.name);
      else formulaRefs(e.obj, out);
      break;
    case "index":
      if (e.obj.t === "id" && e.obj.name === "formula" && e.key.t === "lit" && typeof e.key.v === "string") out.push(e.key.v);
      else formulaRefs(e.obj, out);
      formulaRefs(e.key, out);
      break;
    case "list":
      e.items.forEach((x) => formulaRefs(x, out));
      break;
    case "call":
      e.args.forEach((x) => formulaRefs(x, out));
      break;
    case "method":
      formulaRefs(e.obj, out);
      e.args.forEach((x) => formulaRefs(x, out));
      break;
    case "unary":
      formulaRefs(e.arg, out);
      break;
    case "binary":
      formulaRefs(e.left, out);
      formulaRefs(e.right, out);
      break;
  }
  return out;
}
