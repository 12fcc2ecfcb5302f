import { z } from "zod";

/**
 * tools/list is read by every agent on every connect (and search_tools returns a
 * tool's schema with every hit), so its JSON Schemas drop
 * what tells an agent nothing: zod's integer bound Number.MAX_SAFE_INTEGER,
 * length caps of a hundred or more (guards against abuse, never reached by a
 * real call), `default: false` on flags, and the trivial bounds minLength 1,
 * minimum 0 and 1. All of them are still enforced on the way in.
 */
export function compactSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(compactSchema);
  if (!node || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
    if (k === "maximum" && v === Number.MAX_SAFE_INTEGER) continue;
    if ((k === "maxLength" || k === "maxItems") && typeof v === "number" && v >= 100) continue;
    if (k === "default" && v === false) continue;
    if ((k === "minLength" && v === 1) || (k === "minimum" && (v === 0 || v === 1))) continue;
    out[k] = compactSchema(v);
  }
  return out;
}

/**
 * Values (array items and object properties, at any depth) a call's arguments may hold. The real calls
 * hold tens; validation costs per value before the call waits its token's turn, so an 8 MB body of
 * `[1,1,…]` held the event loop for seconds and its error listed every item (287 MB, the transport
 * review of 2026-12-07).
 */
export const MAX_ARGUMENT_VALUES = 10_000;

/** True once `args` holds more than `max` values; stops counting there. */
export function tooManyValues(args: unknown, max = MAX_ARGUMENT_VALUES): boolean {
  let left = max;
  const stack: unknown[] = [args];
  while (stack.length) {
    const v = stack.pop();
    if (!v || typeof v !== "object") continue;
    if (Array.isArray(v)) {
      left -= v.length;
      if (left < 0) return true;
      for (const x of v) if (x && typeof x === "object") stack.push(x);
    } else {
      for (const k in v) {
        if (--left < 0) return true;
        const x = (v as Record<string, unknown>)[k];
        if (x && typeof x === "object") stack.push(x);
      }
    }
  }
  return false;
}

/** Issues an invalid-arguments error spells out; the rest are counted. */
const MAX_ISSUES_SHOWN = 10;

/** zod's account of invalid arguments, its first few issues only. */
export function invalidArgumentsText(error: z.ZodError): string {
  const { issues } = error;
  if (issues.length <= MAX_ISSUES_SHOWN) return z.prettifyError(error);
  return `${z.prettifyError(new z.ZodError(issues.slice(0, MAX_ISSUES_SHOWN)))}\n… and ${issues.length - MAX_ISSUES_SHOWN} more`;
}
