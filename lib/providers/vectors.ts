import { AttemptError, withRetries, type RetryPolicy } from "./retry";

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

/**
 * A remote model's embed(): `texts` in batches of `size`, each one request
 * under the retry policy, every answer checked by checkVectors against the
 * dimension the provider has seen so far, which the first answer teaches it.
 */
export async function embedInBatches(
  provider: { dimension: number | null; readonly label: string; readonly policy: RetryPolicy },
  texts: string[],
  size: number,
  request: (batch: string[], signal: AbortSignal, timedOut: () => boolean) => Promise<unknown>,
  signal?: AbortSignal,
): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let i = 0; i < texts.length; i += size) {
    const batch = texts.slice(i, i + size);
    const vectors = await withRetries(
      provider.policy,
      async (sig, timedOut) => checkVectors(provider.label, await request(batch, sig, timedOut), batch.length, provider.dimension),
      signal,
    );
    provider.dimension = vectors[0]?.length ?? provider.dimension;
    out.push(...vectors);
  }
  return out;
}
