// A base's columns: what its `properties:` and its views' `order:` name, plus
// every frontmatter key found in its rows, each with a type inferred from the
// values (Obsidian keeps property types in .obsidian/types.json, which is a
// hidden file agents never see; inference gives the same answer for the
// common cases and needs nothing outside the notes).
import type { LoadedBase } from "./base-file";
import { evaluate, evaluationBudget, isDateString, MAX_PASS_MS, propertyOf, toJsonValue, type Value } from "./evaluate";
import { FILE_FIELDS, TooCostly, UnsupportedExpression, type Expr } from "./expr";
import { envFor, type RowNote } from "./rows";
import { CostlyVerdicts } from "./verdicts";

/** How many whole-pass budgets all of a base's formula columns may take together. */
const MAX_COLUMN_PASSES = 4;
/** Formula columns that ran past their budget, by base and column. */
const costlyColumns = new CostlyVerdicts<string>();

export type ColumnType = "text" | "number" | "checkbox" | "date" | "select" | "multi_select";

export interface Column {
  id: string;
  name: string;
  type: ColumnType;
  options?: string[];
  /** Why a formula column has no values (an expression Lettuce cannot evaluate). */
  error?: string;
}

/** How a column's value is read from a row. */
export interface ColumnReader {
  /** The column's id and name, known without working out the column (its type, a formula's values). */
  id: string;
  name: string;
  readonly column: Column;
  read(row: RowNote): unknown;
}

const MAX_OPTIONS = 50;
const MAX_SELECT = 20;
/** As a select's options: a longer value is no option anybody picks from a list (the value is still in the rows). */
const MAX_OPTION_LENGTH = 100;
/**
 * Columns a schema shows; the others are left out (`schemaTotal` counts them all) and still answer to
 * `fields` and `filters`. A base over notes with 20,000 distinct keys answered 2.5 MB to a query for
 * one row (the review of 2026-12-07); a real base has tens.
 */
export const MAX_COLUMNS = 100;
/** Characters of options all of a schema's columns may list together; past it a column lists fewer (the most frequent). */
const MAX_SCHEMA_OPTION_CHARS = 64 * 1024;

const FILE_TYPES: Record<string, ColumnType> = {
  "file.size": "number",
  "file.mtime": "date",
  "file.ctime": "date",
  "file.tags": "multi_select",
  "file.links": "multi_select",
  "file.backlinks": "multi_select",
  "file.embeds": "multi_select",
};

function frequencies(values: string[]): string[] {
  const count = new Map<string, number>();
  for (const v of values) count.set(v, (count.get(v) ?? 0) + 1);
  return [...count.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([v]) => v);
}

const scalarText = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

/**
 * The type of a column from its non-empty values: all booleans → checkbox,
 * all numbers → number, all date strings → date, any list → multi_select,
 * short strings with few distinct values → select (at most 20, and at most
 * half the filled rows once there are more than six), otherwise text.
 */
export function inferType(values: unknown[]): { type: ColumnType; options?: string[] } {
  const vals = values.filter((v) => v !== null && v !== undefined && v !== "");
  if (!vals.length) return { type: "text" };
  if (vals.every((v) => typeof v === "boolean")) return { type: "checkbox" };
  if (vals.every((v) => typeof v === "number")) return { type: "number" };
  if (vals.every((v) => isDateString(v))) return { type: "date" };
  if (vals.some(Array.isArray)) {
    const items = vals.flatMap((v) => (Array.isArray(v) ? v : [v])).filter((x) => x !== null && x !== undefined).map(scalarText);
    return { type: "multi_select", options: frequencies(items.filter((x) => x.length <= MAX_OPTION_LENGTH)).slice(0, MAX_OPTIONS) };
  }
  if (vals.every((v) => typeof v === "string" && v.length <= MAX_OPTION_LENGTH && !v.includes("\n"))) {
    const distinct = frequencies(vals as string[]);
    const cap = Math.min(MAX_SELECT, Math.max(3, Math.ceil(vals.length / 2)));
    if (distinct.length <= cap) return { type: "select", options: distinct };
  }
  return { type: "text" };
}

// A column id names a formula or a file property; it is not an expression: `formula.My Formula`,
// `formula.price-per` and `formula.1x` are names Obsidian allows, and parsing them failed or read a subtraction.
function columnExpr(id: string): Expr {
  const dot = id.indexOf(".");
  return { t: "member", obj: { t: "id", name: id.slice(0, dot) }, name: id.slice(dot + 1) };
}

/**
 * Every column of a base over the given rows, in order: configured properties, view columns, then frontmatter
 * keys by how many rows have them. The first MAX_COLUMNS are worked out now; the rest when first asked for.
 */
export function columnsOf(base: LoadedBase, rows: RowNote[]): ColumnReader[] {
  const ids: string[] = [];
  const add = (id: string) => {
    if (id && !ids.includes(id)) ids.push(id);
  };
  for (const id of base.properties.keys()) add(id);
  for (const id of base.viewColumns) add(id);
  // Property names ignore case (propertyOf reads `owner` for a column Owner), so Owner and owner are one
  // column, spelt as most rows spell it (the first seen on a tie).
  const seen = new Map<string, { n: number; first: number; spellings: Map<string, number> }>();
  let i = 0;
  for (const r of rows) {
    for (const k of Object.keys(r.file.frontmatter)) {
      const lc = k.toLowerCase();
      let s = seen.get(lc);
      if (!s) seen.set(lc, (s = { n: 0, first: i++, spellings: new Map() }));
      s.n++;
      s.spellings.set(k, (s.spellings.get(k) ?? 0) + 1);
    }
  }
  const known = new Set(ids.map((x) => x.toLowerCase()));
  [...seen.entries()]
    .filter(([lc]) => !known.has(lc))
    .sort((a, b) => b[1].n - a[1].n || a[1].first - b[1].first)
    .forEach(([, s]) => add([...s.spellings.entries()].reduce((best, e) => (e[1] > best[1] ? e : best))[0]));

  // A formula column is evaluated over every row once, here, under a budget of its own (a whole pass's, as
  // the base's filter has), all of them within a few such budgets: read for each row with a budget of its
  // own, a costly formula cost up to a second a row, and again on each filter or sort of query_database.
  // file.* columns are cheap and typed in advance: read when asked.
  const overall = performance.now() + MAX_COLUMN_PASSES * Math.max(MAX_PASS_MS, rows.length * 0.02);
  let optionChars = MAX_SCHEMA_OPTION_CHARS;
  return ids.map((id, i): ColumnReader => {
    if (i < MAX_COLUMNS) {
      const reader = build(id, overall);
      const { options } = reader.column;
      if (options) {
        let n = 0;
        while (n < options.length && optionChars - options[n]!.length >= 0) optionChars -= options[n++]!.length;
        if (n < options.length) reader.column.options = options.slice(0, n);
      }
      return reader;
    }
    // Left out of the schema: typed (and a formula evaluated, on a pass budget of its own) only for a query that names it.
    let built: ColumnReader | undefined;
    const get = () => (built ??= build(id, Infinity));
    return {
      id,
      name: base.properties.get(id)?.displayName ?? id,
      get column() {
        return get().column;
      },
      read: (row) => get().read(row),
    };
  });

  function build(id: string, overall: number): ColumnReader {
    const name = base.properties.get(id)?.displayName ?? id;
    let read: (row: RowNote) => unknown;
    let error: string | undefined;
    if (id.startsWith("file.") || id.startsWith("formula.")) {
      const formula = id.startsWith("formula.") ? base.formulas.get(id.slice(8)) : undefined;
      if (formula instanceof UnsupportedExpression) error = `Lettuce cannot evaluate ${JSON.stringify(formula.expression)}: ${formula.what}`;
      else if (id.startsWith("formula.") && formula === undefined) error = `no formula named ${id.slice(8)} in this base`;
      else if (id.startsWith("file.") && !FILE_FIELDS.has(id.slice(5))) error = `Lettuce cannot evaluate ${JSON.stringify(id)}: the file property ${id}`;
      const expr = error ? null : columnExpr(id);
      let unsupported: UnsupportedExpression | undefined;
      const compute = (row: RowNote, budget = evaluationBudget()): unknown => {
        if (!expr) return null;
        try {
          return toJsonValue(evaluate(expr, envFor(base, row.file, budget)));
        } catch (e) {
          // A formula it uses that cannot be evaluated (or is not there) is this column's error too, not a silent null.
          if (e instanceof UnsupportedExpression && !(e instanceof TooCostly)) unsupported ??= e;
          return null; // this row's value cannot be worked out (as before); the pass's time is checked below
        }
      };
      const costlyKey = `${base.id}\0${id}`;
      const costly = costlyColumns.standing(costlyKey, base.stamp);
      if (!expr || FILE_TYPES[id]) {
        read = (row) => compute(row);
      } else if (costly) {
        // It overran a moment ago, for this version of the base: not paid for again after every write.
        error = costly;
        read = () => null;
      } else {
        const budget = evaluationBudget(rows.length);
        budget.deadline = Math.min(budget.deadline, overall);
        const values = new Map<RowNote, unknown>();
        for (const row of rows) {
          values.set(row, compute(row, budget));
          if (performance.now() > budget.deadline) {
            error = `Lettuce cannot evaluate ${JSON.stringify(id)} over this base's rows: it takes more than ${MAX_PASS_MS} ms`;
            values.clear();
            costlyColumns.overran(costlyKey, base.stamp, error);
            break;
          }
        }
        if (!error) costlyColumns.clear(costlyKey);
        if (!error && unsupported) {
          error = `Lettuce cannot evaluate ${JSON.stringify(unsupported.expression)}: ${unsupported.what}`;
          values.clear();
        }
        // A row outside the base's rows (none today) gets a budget of its own.
        read = (row) => (error ? null : values.has(row) ? values.get(row) : compute(row));
      }
    } else {
      read = (row) => toJsonValue(propertyOf(row.file.frontmatter, id) as Value);
    }
    const fixed = FILE_TYPES[id];
    const inferred = fixed && fixed !== "multi_select" ? { type: fixed } : inferType(rows.map(read));
    const column: Column = { id, name, ...inferred, ...(error ? { error } : {}) };
    return { id, name, column, read };
  }
}
