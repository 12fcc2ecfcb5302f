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
 * k-means (Euclidean) on a sample of `members` of the centred vectors. Centring
 * matters: sentence-embedding vectors share a large common component (two
 * random notes often have a cosine of 0.5-0.8), which leaves plain spherical
 * k-means with one giant bucket; distances, and so the pairs, are unchanged by it.
 */
function trainCentroids(points: Float32Array[], members: number[], k: number, seed: number): Float32Array[] {
  const rand = prng(seed);
  const order = [...members];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const sample = order.slice(0, Math.min(order.length, 20 * k)).map((i) => points[i]!);
  const dim = sample[0]!.length;
  let centroids: Float32Array[] = sample.slice(0, k).map((v) => Float32Array.from(v));
  for (let it = 0; it < KMEANS_ITERATIONS; it++) {
    const norms = centroids.map((c) => dot(c, c));
    const sums = centroids.map(() => new Float32Array(dim));
    const counts = new Int32Array(centroids.length);
    for (const v of sample) {
      let best = 0;
      let bestScore = Infinity;
      for (let c = 0; c < centroids.length; c++) {
        const d = norms[c]! - 2 * dot(v, centroids[c]!);
        if (d < bestScore) {
          bestScore = d;
          best = c;
        }
      }
      const sum = sums[best]!;
      for (let i = 0; i < dim; i++) sum[i]! += v[i]!;
      counts[best]!++;
    }
    // An empty cluster keeps its old centroid.
    centroids = sums.map((s, c) => {
      if (counts[c] === 0) return centroids[c]!;
      for (let i = 0; i < dim; i++) s[i]! /= counts[c]!;
      return s;
    });
  }
  return centroids;
}

/** The `probes` nearest centroids of a point, in ascending centroid order, into out[at…]. */
function nearest(v: Float32Array, centroids: Float32Array[], norms: number[], out: Int32Array, at: number): void {
  const P = PAIR_SEARCH.probes;
  const best: { c: number; d: number }[] = [];
  for (let c = 0; c < centroids.length; c++) {
    const d = norms[c]! - 2 * dot(v, centroids[c]!);
    if (best.length < P) best.push({ c, d });
    else if (d < best[best.length - 1]!.d) best[best.length - 1] = { c, d };
    else continue;
    best.sort((x, y) => x.d - y.d);
  }
  const cs = best.map((b) => b.c).sort((x, y) => x - y);
  for (let i = 0; i < P; i++) out[at + i] = cs[i] ?? -1;
}

/** One level of bucketing on the way down: a pair belongs here only if `bucket` is the lowest one both share. */
interface Level {
  homes: Int32Array;
  bucket: number;
}

/**
 * The vectors, copied into the kernels' memory, and room to score one point
 * against the rest of a bucket there (dotsF32: a pair's dot product is a few
 * SIMD steps, cheaper than deciding whether the pair belongs to this bucket).
 */
class PairScorer {
  readonly mem = new KernelMemory();
  readonly dim: number;
  private readonly slotsOff: number;
  private readonly outOff: number;

  constructor(vectors: Float32Array[]) {
    this.dim = vectors[0]!.length;
    const n = vectors.length;
    this.slotsOff = n * this.dim * 4;
    this.outOff = this.slotsOff + align16(n * 4);
    this.mem.ensure(this.outOff + n * 4);
    vectors.forEach((v, i) => this.mem.f32.set(v, i * this.dim));
  }

  /** Calls `each(y, s)` for every y after x in `members` whose dot product with x's is at least `threshold`. */
  scan(members: number[], threshold: number, each: (x: number, y: number, s: number) => void): void {
    const { mem, dim } = this;
    mem.i32.set(members, this.slotsOff >> 2);
    const out = this.outOff >> 2;
    for (let x = 0; x + 1 < members.length; x++) {
      const count = members.length - x - 1;
      mem.dotsF32(0, dim, members[x]! * dim * 4, this.slotsOff + (x + 1) * 4, count, this.outOff);
      for (let j = 0; j < count; j++) if (mem.f32[out + j]! >= threshold) each(x, x + 1 + j, mem.f32[out + j]!);
    }
  }
}

/**
 * Call `visit(a, b, s)` (a < b) for every candidate pair whose dot product s is
 * at least `threshold`: all pairs of a small set, else the pairs sharing a
 * bucket, each pair once (in the lowest-numbered bucket the two share).
 */
function visitCandidatePairs(vectors: Float32Array[], threshold: number, visit: (a: number, b: number, s: number) => void): void {
  if (!vectors.length) return;
  const scorer = new PairScorer(vectors);
  const all = vectors.map((_, i) => i);
  if (vectors.length < EXACT_BELOW) {
    leafPairs(all, [], { scorer, threshold, visit });
    return;
  }
  const dim = vectors[0]!.length;
  const mean = new Float32Array(dim);
  for (const v of vectors) for (let i = 0; i < dim; i++) mean[i]! += v[i]! / vectors.length;
  const centred = vectors.map((v) => {
    const c = new Float32Array(dim);
    for (let i = 0; i < dim; i++) c[i] = v[i]! - mean[i]!;
    return c;
  });
  split(centred, all, [], { scorer, threshold, visit });
}

interface LeafVisit {
  scorer: PairScorer;
  threshold: number;
  visit: (a: number, b: number, s: number) => void;
}

function leafPairs(members: number[], levels: Level[], { scorer, threshold, visit }: LeafVisit): void {
  const P = PAIR_SEARCH.probes;
  const L = levels.length;
  scorer.scan(members, threshold, (x, y, s) => {
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

function split(points: Float32Array[], members: number[], levels: Level[], leaf: LeafVisit): void {
  if (members.length <= PAIR_SEARCH.maxBucket || levels.length >= MAX_DEPTH) {
    leafPairs(members, levels, leaf);
    return;
  }
  const P = PAIR_SEARCH.probes;
  const centroids = trainCentroids(points, members, Math.max(2, Math.round(Math.sqrt(members.length))), levels.length + 1);
  const norms = centroids.map((c) => dot(c, c));
  // homes[i*P…]: the buckets of point i, ascending (indexed by the point's global number).
  const homes = new Int32Array(points.length * P).fill(-1);
  const buckets: number[][] = centroids.map(() => []);
  for (const i of members) {
    nearest(points[i]!, centroids, norms, homes, i * P);
    for (let k = 0; k < P; k++) if (homes[i * P + k]! >= 0) buckets[homes[i * P + k]!]!.push(i);
  }
  buckets.forEach((bucket, c) => {
    if (bucket.length > 1) split(points, bucket, [...levels, { homes, bucket: c }], leaf);
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
