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
