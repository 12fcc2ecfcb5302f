// Pairs of notes above a cosine threshold (find_duplicates) and groups of
// notes joined by such pairs (topic_map), without comparing all pairs.
//
// Small sets are compared pair by pair. Larger ones are bucketed by k-means on
// the centred vectors (√n centroids trained on a sample); each note joins the buckets of
// its four nearest centroids, and only notes sharing a bucket are compared. A
// bucket still too big (a vault of near-identical daily notes) is split again
// the same way. Two notes above a high threshold lie close together and nearly
// always share their nearest centroid, so this finds almost every such pair at
// a small fraction of the work; bench/semantic-speed.ts measures both.
import { TopK } from "./vector-index";
import { align16, KernelMemory } from "./vector-kernels";

const EXACT_BELOW = 600;
const MAX_DEPTH = 3;
const KMEANS_ITERATIONS = 4;
/** probes: buckets each note joins; maxBucket: a bucket larger than this is split again. */
export const PAIR_SEARCH = { probes: 4, maxBucket: 1000 };

export interface Pair {
  a: number; // index into the vectors
  b: number;
  similarity: number;
}

export function dot(x: Float32Array, y: Float32Array): number {
  // Four running sums: about twice as fast as one under Bun's JIT (measured).
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  const n = x.length - (x.length % 4);
  let i = 0;
  for (; i < n; i += 4) {
    s0 += x[i]! * y[i]!;
    s1 += x[i + 1]! * y[i + 1]!;
    s2 += x[i + 2]! * y[i + 2]!;
    s3 += x[i + 3]! * y[i + 3]!;
  }
  for (; i < x.length; i++) s0 += x[i]! * y[i]!;
  return s0 + s1 + s2 + s3;
}

/** A small deterministic PRNG (mulberry32), so that the same vault gives the same buckets. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The vectors, centred on their mean, in the kernels' memory, with room for a
 * set of centroids: every dot product of the pair search (note against note,
 * note against centroid) is a WebAssembly SIMD call over them (dotsF32).
 * Only the centred copy is kept: a pair's own dot product is
 * (a − m)·(b − m) + (a − m)·m + (b − m)·m + m·m, from the centred one and a
 * number per vector.
 */
class PairSpace {
  readonly mem = new KernelMemory();
  readonly dim: number;
  private readonly toMean: Float64Array;
  private readonly meanNorm: number;
  private readonly slotsOff: number;
  private readonly outOff: number;
  private readonly centroidsOff: number;
  private readonly centroidSlotsOff: number;
  /** Where toCentroids leaves its answer (a view made once: the memory never grows after the constructor). */
  private readonly centroidDots: Float32Array;

  constructor(vectors: Float32Array[], centre: boolean) {
    const n = vectors.length;
    const dim = (this.dim = vectors[0]!.length);
    const mean = new Float64Array(dim);
    if (centre) for (const v of vectors) for (let i = 0; i < dim; i++) mean[i]! += v[i]! / n;
    const kMax = Math.max(2, Math.round(Math.sqrt(n)));
    this.slotsOff = n * dim * 4;
    this.outOff = this.slotsOff + align16(n * 4);
    this.centroidsOff = this.outOff + align16(Math.max(n, kMax) * 4);
    this.centroidSlotsOff = this.centroidsOff + kMax * dim * 4;
    // Sized once: the views below stay valid (growing the memory would detach them).
    this.mem.ensure(this.centroidSlotsOff + kMax * 4);
    const f = this.mem.f32;
    this.toMean = new Float64Array(n);
    vectors.forEach((v, j) => {
      let t = 0;
      for (let i = 0; i < dim; i++) {
        const c = v[i]! - mean[i]!;
        f[j * dim + i] = c;
        t += c * mean[i]!;
      }
      this.toMean[j] = t;
    });
    this.meanNorm = mean.reduce((a, x) => a + x * x, 0);
    this.mem.i32.set(Int32Array.from({ length: kMax }, (_, c) => c), this.centroidSlotsOff >> 2);
    this.centroidDots = this.mem.f32.subarray(this.outOff >> 2, (this.outOff >> 2) + kMax);
  }

  /** Vector i, centred (a view into the memory). */
  point(i: number): Float32Array {
    return this.mem.f32.subarray(i * this.dim, (i + 1) * this.dim);
  }

  /** Calls `each(x, y, s)` for every y after x in `members` whose dot product s with x's is at least `threshold`. */
  scan(members: number[], threshold: number, each: (x: number, y: number, s: number) => void): void {
    const { mem, dim } = this;
    mem.i32.set(members, this.slotsOff >> 2);
    const out = this.outOff >> 2;
    for (let x = 0; x + 1 < members.length; x++) {
      const count = members.length - x - 1;
      mem.dotsF32(0, dim, members[x]! * dim * 4, this.slotsOff + (x + 1) * 4, count, this.outOff);
      const base = this.toMean[members[x]!]! + this.meanNorm;
      for (let j = 0; j < count; j++) {
        const s = mem.f32[out + j]! + base + this.toMean[members[x + 1 + j]!]!;
        if (s >= threshold) each(x, x + 1 + j, s);
      }
    }
  }

  /** Make these the centroids that toCentroids compares with. */
  setCentroids(centroids: Float32Array[]): void {
    centroids.forEach((c, k) => this.mem.f32.set(c, (this.centroidsOff >> 2) + k * this.dim));
  }

  /** Dot products of centred vector i with the first k centroids, in the first k places of the returned view (overwritten by the next call). */
  toCentroids(i: number, k: number): Float32Array {
    this.mem.dotsF32(this.centroidsOff, this.dim, i * this.dim * 4, this.centroidSlotsOff, k, this.outOff);
    return this.centroidDots;
  }
}

/**
 * k-means (Euclidean) on a sample of `members` of the centred vectors. Centring
 * matters: sentence-embedding vectors share a large common component (two
 * random notes often have a cosine of 0.5-0.8), which leaves plain spherical
 * k-means with one giant bucket; distances, and so the pairs, are unchanged by it.
 */
function trainCentroids(space: PairSpace, members: number[], k: number, seed: number): Float32Array[] {
  const rand = prng(seed);
  const order = [...members];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const sample = order.slice(0, Math.min(order.length, 20 * k));
  const dim = space.dim;
  let centroids: Float32Array[] = sample.slice(0, k).map((i) => Float32Array.from(space.point(i)));
  for (let it = 0; it < KMEANS_ITERATIONS; it++) {
    const norms = centroids.map((c) => dot(c, c));
    const sums = centroids.map(() => new Float32Array(dim));
    const counts = new Int32Array(centroids.length);
    space.setCentroids(centroids);
    for (const i of sample) {
      const d = space.toCentroids(i, centroids.length);
      let best = 0;
      let bestScore = Infinity;
      for (let c = 0; c < centroids.length; c++) {
        const score = norms[c]! - 2 * d[c]!;
        if (score < bestScore) {
          bestScore = score;
          best = c;
        }
      }
      const sum = sums[best]!;
      const v = space.point(i);
      for (let x = 0; x < dim; x++) sum[x]! += v[x]!;
      counts[best]!++;
    }
    // An empty cluster keeps its old centroid.
    centroids = sums.map((s, c) => {
      if (counts[c] === 0) return centroids[c]!;
      for (let x = 0; x < dim; x++) s[x]! /= counts[c]!;
      return s;
    });
  }
  return centroids;
}

/** The `probes` nearest of the space's k centroids to point i, in ascending centroid order, into out[at…]. */
function nearest(space: PairSpace, i: number, k: number, norms: number[], out: Int32Array, at: number): void {
  const P = PAIR_SEARCH.probes;
  const d = space.toCentroids(i, k);
  const best: { c: number; d: number }[] = [];
  for (let c = 0; c < k; c++) {
    const dist = norms[c]! - 2 * d[c]!;
    if (best.length < P) best.push({ c, d: dist });
    else if (dist < best[best.length - 1]!.d) best[best.length - 1] = { c, d: dist };
    else continue;
    best.sort((x, y) => x.d - y.d);
  }
  const cs = best.map((b) => b.c).sort((x, y) => x - y);
  for (let j = 0; j < P; j++) out[at + j] = cs[j] ?? -1;
}

/** One level of bucketing on the way down: a pair belongs here only if `bucket` is the lowest one both share. */
interface Level {
  homes: Int32Array;
  bucket: number;
}

interface LeafVisit {
  space: PairSpace;
  threshold: number;
  visit: (a: number, b: number, s: number) => void;
}

/**
 * Call `visit(a, b, s)` (a < b) for every candidate pair whose dot product s is
 * at least `threshold`: all pairs of a small set, else the pairs sharing a
 * bucket, each pair once (in the lowest-numbered bucket the two share).
 */
function visitCandidatePairs(vectors: Float32Array[], threshold: number, visit: (a: number, b: number, s: number) => void): void {
  if (!vectors.length) return;
  const small = vectors.length < EXACT_BELOW;
  const space = new PairSpace(vectors, !small);
  const all = vectors.map((_, i) => i);
  if (small) leafPairs(all, [], { space, threshold, visit });
  else split(vectors.length, all, [], { space, threshold, visit });
  // The space's memory (200 MB at 100k notes) is garbage now, but the collector counts it late: left to
  // itself, eight calls on 30k notes held 3-6 spaces at once. Ask for a collection when it was large.
  if (space.mem.bytes > 32 * 2 ** 20) Bun.gc(true);
}

function leafPairs(members: number[], levels: Level[], { space, threshold, visit }: LeafVisit): void {
  const P = PAIR_SEARCH.probes;
  const L = levels.length;
  space.scan(members, threshold, (x, y, s) => {
    const a = Math.min(members[x]!, members[y]!);
    const b = Math.max(members[x]!, members[y]!);
    for (let l = 0; l < L; l++) {
      // The lowest bucket a and b share at this level (homes are in ascending order).
      const { homes, bucket } = levels[l]!;
      let common = -1;
      for (let i = 0; i < P && common < 0; i++) {
        const c = homes[a * P + i]!;
        for (let j = 0; j < P; j++) {
          if (homes[b * P + j] === c) {
            common = c;
            break;
          }
        }
      }
      if (common !== bucket) return;
    }
    visit(a, b, s);
  });
}

/** `n`: how many vectors in all (homes are indexed by a vector's global number). */
function split(n: number, members: number[], levels: Level[], leaf: LeafVisit): void {
  if (members.length <= PAIR_SEARCH.maxBucket || levels.length >= MAX_DEPTH) {
    leafPairs(members, levels, leaf);
    return;
  }
  const P = PAIR_SEARCH.probes;
  const centroids = trainCentroids(leaf.space, members, Math.max(2, Math.round(Math.sqrt(members.length))), levels.length + 1);
  const norms = centroids.map((c) => dot(c, c));
  leaf.space.setCentroids(centroids);
  // homes[i*P…]: the buckets of point i, ascending.
  const homes = new Int32Array(n * P).fill(-1);
  const buckets: number[][] = centroids.map(() => []);
  for (const i of members) {
    nearest(leaf.space, i, centroids.length, norms, homes, i * P);
    for (let k = 0; k < P; k++) if (homes[i * P + k]! >= 0) buckets[homes[i * P + k]!]!.push(i);
  }
  buckets.forEach((bucket, c) => {
    if (bucket.length > 1) split(n, bucket, [...levels, { homes, bucket: c }], leaf);
  });
}

/** Pairs (a < b) with cosine ≥ threshold, the `limit` most similar, highest first. Vectors must be unit length. */
export function similarPairs(vectors: Float32Array[], threshold: number, limit = Infinity): Pair[] {
  const n = vectors.length;
  const cap = Math.min(limit, 1_000_000);
  const top = new TopK(Math.max(1, cap));
  visitCandidatePairs(vectors, threshold, (a, b, s) => {
    if (s > top.floor) top.push(a * n + b, s);
  });
  return top.sorted().map(({ item, score }) => ({ a: Math.floor(item / n), b: item % n, similarity: score }));
}

/** Groups of notes connected by pairs with cosine ≥ threshold (union-find). */
export function similarGroups(vectors: Float32Array[], threshold: number): number[][] {
  const n = vectors.length;
  const parent = Int32Array.from({ length: n }, (_, i) => i);
  const find = (x: number): number => {
    while (parent[x] !== x) {
      parent[x] = parent[parent[x]!]!;
      x = parent[x]!;
    }
    return x;
  };
  visitCandidatePairs(vectors, threshold, (a, b) => {
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent[ra] = rb;
  });
  const groups = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const r = find(i);
    let g = groups.get(r);
    if (!g) groups.set(r, (g = []));
    g.push(i);
  }
  return [...groups.values()];
}
