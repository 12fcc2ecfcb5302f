// find_duplicates' and topic_map's whole-vault passes over note vectors: calibration and the pair search.
// Pure functions of the vectors, so that they run in a read worker (lib/offload/jobs.ts): on the event loop a
// call took 1.3-1.7 s on obsidian-hub, and four calls at once kept every other caller waiting ~11 s (an audit).
import { normalize } from "../providers/types";
import { calibrated } from "./calibrate";
import { similarGroups, similarPairs } from "./neighbors";

/** Note vectors, packed one after another (dim floats each) to cross to a worker in one piece. */
export interface PackedVectors {
  flat: Float32Array;
  dim: number;
}

export function packVectors(vectors: Float32Array[]): PackedVectors {
  const dim = vectors[0]?.length ?? 0;
  const flat = new Float32Array(vectors.length * dim);
  vectors.forEach((v, i) => flat.set(v, i * dim));
  return { flat, dim };
}

/** The packed vectors as unit vectors (views into the array, normalised in place). */
function unpack({ flat, dim }: PackedVectors): Float32Array[] {
  const n = dim ? flat.length / dim : 0;
  return Array.from({ length: n }, (_, i) => normalize(flat.subarray(i * dim, (i + 1) * dim)));
}

/**
 * Copies the calibration cannot hide. Calibrating takes away the directions the vault varies most along, and a
 * group of copies (notes made from one template, a page pasted into five folders) can be such a direction:
 * with it removed the copies no longer looked alike (5 copies among 20 notes: no pair found, even at
 * threshold 0). Centred only, without that step, copies stay near 1 while unrelated notes reach 0.92 at most
 * (the built-in model on Obsidian Help). So a second pair search runs on the centred vectors, and a pair's
 * similarity is the larger of its calibrated one and its centred cosine rescaled so that CENTRED_FLOOR is 0
 * (0.98 → 0.9; 0.92 → 0.6). Raw cosines would not do: in the model's narrow cone the pair search's buckets
 * do not separate (10× the time, measured), and unrelated notes reach 0.97 there.
 */
const CENTRED_FLOOR = 0.8;
const CENTRED_CUT_LEAST = 0.9;

/** Pairs (indexes into the packed vectors, a < b) at or past `threshold`, most similar first, at most `limit`. */
export function duplicatePairs(packed: PackedVectors, threshold: number, limit: number): { a: number; b: number; similarity: number }[] {
  const raw = unpack(packed);
  const best = new Map<number, { a: number; b: number; similarity: number }>();
  const take = (a: number, b: number, similarity: number) => {
    const key = a * raw.length + b;
    const had = best.get(key);
    if (!had || had.similarity < similarity) best.set(key, { a, b, similarity });
  };
  for (const p of similarPairs(calibrated(raw), threshold, limit)) take(p.a, p.b, p.similarity);
  const centredCut = Math.max(CENTRED_CUT_LEAST, CENTRED_FLOOR + threshold * (1 - CENTRED_FLOOR));
  for (const p of similarPairs(calibrated(raw, 0), centredCut, limit)) take(p.a, p.b, (p.similarity - CENTRED_FLOOR) / (1 - CENTRED_FLOOR));
  return [...best.values()]
    .filter((p) => p.similarity >= threshold)
    .sort((x, y) => y.similarity - x.similarity || x.a - y.a || x.b - y.b)
    .slice(0, limit);
}

/** topic_map's groups: notes joined by centred cosine ≥ cut (only the mean taken away: the main directions are the topics). */
export function topicGroups(packed: PackedVectors, cut: number): number[][] {
  return similarGroups(calibrated(unpack(packed), 0), cut);
}
