// The similarity find_duplicates and topic_map compare notes by: the cosine of
// note vectors after taking away what all the vault's notes share — the mean
// vector, and the few directions along which the vault varies most.
//
// Why: sentence encoders put every text in a narrow cone, so raw cosines
// between unrelated notes run high. With the built-in model, Obsidian Help's
// "Web Clipper/Filters" and "Bases/Functions" score 0.97, and 114 pairs pass
// the spec's 0.9. After centring, the closest unrelated pair there scores
// 0.92; after also removing the top three principal directions ("all but the
// top", Mu & Viswanath 2018), 0.78, while a note whose text is a quarter
// different still scores 0.97 at the median (bench/lib/scratch figures in
// docs/semantic.md). So 0.9 means "near-duplicate" whatever the provider.
//
// A vault of a few notes has too few to estimate its shared part from: the
// mean is shrunk toward zero by n / (n + CENTRE_PRIOR), and principal
// directions are removed only from PER_DIRECTION notes up (one per 50 notes,
// at most MAX_DIRECTIONS), since in a small vault they would be its notes' own.
import { normalize } from "../providers/types";
import { dot } from "./neighbors";

export const CENTRE_PRIOR = 20;
const PER_DIRECTION = 10;
const MAX_DIRECTIONS = 3;
const PCA_SAMPLE = 2000;
const PCA_ITERATIONS = 20;

/** Top principal directions of some (centred) vectors, by power iteration with deflation. */
function principalDirections(sample: Float32Array[], k: number): Float32Array[] {
  const dim = sample[0]!.length;
  const out: Float32Array[] = [];
  for (let j = 0; j < k; j++) {
    // A fixed start, so that the same vault gives the same similarities.
    let u = normalize(Float32Array.from({ length: dim }, (_, i) => Math.sin(i * (j + 1) + 1)));
    for (let it = 0; it < PCA_ITERATIONS; it++) {
      const next = new Float32Array(dim);
      for (const x of sample) {
        const d = dot(x, u);
        for (let i = 0; i < dim; i++) next[i]! += d * x[i]!;
      }
      for (const p of out) {
        const d = dot(next, p);
        for (let i = 0; i < dim; i++) next[i]! -= d * p[i]!;
      }
      u = normalize(next);
    }
    out.push(u);
  }
  return out;
}

/** Unit vectors in → calibrated unit vectors out (same order); their dot products are the calibrated similarities. `maxDirections` 0 only centres (topic_map: there the main directions are the topics). */
export function calibrated(vectors: Float32Array[], maxDirections = MAX_DIRECTIONS): Float32Array[] {
  const n = vectors.length;
  if (!n) return [];
  const dim = vectors[0]!.length;
  const mean = new Float64Array(dim);
  for (const v of vectors) for (let i = 0; i < dim; i++) mean[i]! += v[i]!;
  const shrink = 1 / (n + CENTRE_PRIOR);
  const centred = vectors.map((v) => Float32Array.from(v, (x, i) => x - mean[i]! * shrink));
  const k = Math.min(maxDirections, Math.floor(n / PER_DIRECTION));
  if (k > 0) {
    const step = Math.max(1, Math.floor(n / PCA_SAMPLE));
    const dirs = principalDirections(
      centred.filter((_, i) => i % step === 0),
      k,
    );
    for (const v of centred) {
      for (const p of dirs) {
        const d = dot(v, p);
        for (let i = 0; i < dim; i++) v[i]! -= d * p[i]!;
      }
    }
  }
  return centred.map((v) => normalize(v));
}
