// The bounds on one pass of a base's filters and formulas over the vault: steps per note, wall time per
// pass, and the longest value. Kept apart from evaluate.ts, which walks the expressions.
import { envNumber } from "../env-number";
import { TooCostly } from "./expr";
import { asString, textLength, type Value } from "./values";

/**
 * Bounds on one pass over a base. Expressions are short (expr.ts), but a `.base`
 * file is anybody's file: formulas that each use the next one twice double the
 * work (and a concatenation the value's length) at every level, and a pass runs
 * where a request waits. Past a bound the base is unsupported-expression.
 */
export interface EvalBudget {
  steps: number;
  noteSteps: number;
  deadline: number;
}
/** Steps for one note: a real filter with its formulas takes tens to hundreds. */
export const MAX_NOTE_STEPS = 20_000;
/**
 * Wall time for a whole pass (every note of the vault against one base): a second, or 20 µs a
 * note in a larger vault (a real filter takes ~2 µs a note; a loaded machine must not turn a
 * 100k-note vault's base into "unsupported").
 */
export const MAX_PASS_MS = envNumber("LETTUCE_BASE_PASS_MS", 1_000, { min: 1, max: 60_000 });
const PASS_MS_PER_NOTE = 0.02;
/** Longest string or list a value may grow to. */
export const MAX_VALUE_LENGTH = 1_000_000;

export function evaluationBudget(notes = 0): EvalBudget {
  return { steps: 0, noteSteps: 0, deadline: performance.now() + Math.max(MAX_PASS_MS, notes * PASS_MS_PER_NOTE) };
}

export function spend(budget: EvalBudget): void {
  budget.steps++;
  if (++budget.noteSteps > MAX_NOTE_STEPS) throw new TooCostly("(filters and formulas)", `more than ${MAX_NOTE_STEPS} steps for one note`);
  // The clock is read every 64 steps: a step on a value of a megabyte (lower(), a concatenation) takes ~0.3 ms,
  // so reading it every 1,024 let a pass overrun by a third of a second.
  if ((budget.steps & 63) === 0) overdue(budget);
}

/** A value this long took long enough to make that the clock is worth reading after it. */
export const LONG_VALUE = 4096;

export function overdue(budget: EvalBudget): void {
  if (performance.now() > budget.deadline) throw new TooCostly("(filters and formulas)", `evaluating it over the vault takes more than ${MAX_PASS_MS} ms`);
}

/**
 * A value as text, a list refused before it is spelt out past MAX_VALUE_LENGTH: 2,048 copies of a
 * 512K-character string (a few doubling formulas) were joined into a gigabyte in one step (~1 s).
 */
export function textOf(v: Value): string {
  if (Array.isArray(v)) bounded(textLength(v, 0, MAX_VALUE_LENGTH), "(a list as text)");
  return asString(v);
}

/** The length a concatenation would have, refused past MAX_VALUE_LENGTH before it is built. */
export function bounded(length: number, what = "+"): number {
  if (length > MAX_VALUE_LENGTH) throw new TooCostly(what, `a value longer than ${MAX_VALUE_LENGTH} characters or items`);
  return length;
}
