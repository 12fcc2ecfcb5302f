import { AttemptError } from "./retry";

/**
 * Check a provider's answer: one finite vector per input, all of one length,
 * and the length seen before (a model swapped behind the same name shows up
 * here). Returns Float32Arrays.
 */
export function checkVectors(label: string, raw: unknown, expected: number, dimension: number | null): Float32Array[] {
  if (!Array.isArray(raw) || raw.length !== expected) {
    const got = Array.isArray(raw) ? `${raw.length} vectors` : "no vectors";
    throw new AttemptError("provider-error", `${label} returned ${got} for ${expected} inputs`, false);
  }
  const out: Float32Array[] = [];
  let dim = dimension;
  for (const v of raw) {
    if (!Array.isArray(v) || v.length === 0 || !v.every((x) => typeof x === "number" && Number.isFinite(x))) {
      throw new AttemptError("provider-error", `${label} returned a malformed vector`, false);
    }
    if (dim !== null && v.length !== dim) {
      throw new AttemptError(
        "provider-error",
        `${label} returned ${v.length}-dimensional vectors where ${dim} were expected; a different model now answers to this name. Run \`lettuce embed\` after fixing the configuration`,
        false,
      );
    }
    dim = v.length;
    out.push(Float32Array.from(v));
  }
  return out;
}
