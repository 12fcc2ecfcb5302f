// The vector index's WebAssembly kernels: the committed module is what the .wat
// assembles to, each kernel agrees with a plain JavaScript reference on every
// shape (dimensions that are not a multiple of the SIMD width included), and
// the index keeps its vectors whole while its memory grows and moves them.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { assembleKernels, generatedSource } from "../scripts/build-wasm";
import { VectorIndex } from "../lib/semantic/vector-index";
import { align16, KernelMemory } from "../lib/semantic/vector-kernels";

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32);
}

const popcount = (x: number) => {
  let c = 0;
  for (let v = x >>> 0; v; v &= v - 1) c++;
  return c;
};

test("the committed kernels are the assembled vector-kernels.wat", async () => {
  const committed = readFileSync(join(import.meta.dir, "../lib/semantic/vector-kernels.generated.ts"), "utf8");
  expect(committed).toBe(generatedSource(await assembleKernels()));
});

test("hamming, within and dots agree with JavaScript for every width, remainders included", () => {
  const r = rng(3);
  for (const dim of [1, 7, 15, 16, 17, 33, 100, 128, 500, 512, 768, 1000]) {
    const words = Math.ceil(dim / 32);
    const n = 37;
    const mem = new KernelMemory();
    const qq = 0;
    const qc = align16(dim);
    const hist = qc + align16(words * 4);
    const codes = hist + align16((dim + 1) * 4);
    const vecs = codes + align16(n * words * 4);
    const dist = vecs + align16(n * dim);
    const slots = dist + align16(n * 2);
    const out = slots + align16(n * 4);
    mem.ensure(out + n * 4);
    const byte = () => Math.floor(r() * 256) - 128;
    // A code has one bit per dimension; the last word's bits past `dim` are 0, as the index writes them.
    const word = (w: number) => Math.floor(r() * 2 ** 32) & (w === words - 1 && dim % 32 ? (1 << dim % 32) - 1 : -1);
    for (let i = 0; i < dim; i++) mem.i8[qq + i] = byte();
    for (let w = 0; w < words; w++) mem.u32[(qc >> 2) + w] = word(w);
    for (let i = 0; i < n * dim; i++) mem.i8[vecs + i] = byte();
    for (let i = 0; i < n * words; i++) mem.u32[(codes >> 2) + i] = word(i % words);
    mem.i32.fill(0, hist >> 2, (hist >> 2) + dim + 1);

    mem.hamming(codes, words, n, qc, dist, hist);
    const want = Array.from({ length: n }, (_, s) => {
      let d = 0;
      for (let w = 0; w < words; w++) d += popcount(mem.u32[(codes >> 2) + s * words + w]! ^ mem.u32[(qc >> 2) + w]!);
      return d;
    });
    expect(Array.from(mem.u16.subarray(dist >> 1, (dist >> 1) + n))).toEqual(want);
    const h = new Array(dim + 1).fill(0);
    for (const d of want) h[d]++;
    expect(Array.from(mem.i32.subarray(hist >> 2, (hist >> 2) + dim + 1))).toEqual(h);

    const cutoff = [...want].sort((a, b) => a - b)[10]!;
    const count = mem.within(dist, n, cutoff, slots);
    const picked = want.flatMap((d, s) => (d <= cutoff ? [s] : []));
    expect(Array.from(mem.i32.subarray(slots >> 2, (slots >> 2) + count))).toEqual(picked);

    const dot = (s: number) => {
      let sum = 0;
      for (let i = 0; i < dim; i++) sum += mem.i8[vecs + s * dim + i]! * mem.i8[qq + i]!;
      return sum;
    };
    mem.dots(vecs, dim, qq, -1, n, out);
    expect(Array.from(mem.i32.subarray(out >> 2, (out >> 2) + n))).toEqual(want.map((_, s) => dot(s)));
    mem.dots(vecs, dim, qq, slots, count, out);
    expect(Array.from(mem.i32.subarray(out >> 2, (out >> 2) + count))).toEqual(picked.map(dot));
  }
});

test("dotsF32 agrees with a JavaScript float dot product for every width, remainders included", () => {
  const r = rng(21);
  for (const dim of [1, 3, 4, 5, 8, 9, 12, 31, 100, 512, 769]) {
    const n = 23;
    const mem = new KernelMemory();
    const slots = n * dim * 4;
    const out = slots + align16(n * 4);
    mem.ensure(out + n * 4);
    const vecs = Array.from({ length: n }, () => Float32Array.from({ length: dim }, () => r() * 2 - 1));
    vecs.forEach((v, i) => mem.f32.set(v, i * dim));
    const order = Array.from({ length: n }, (_, i) => (i * 7) % n); // every slot once, out of order
    mem.i32.set(order, slots >> 2);
    mem.dotsF32(0, dim, 5 * dim * 4, slots, n, out);
    const got = Array.from(mem.f32.subarray(out >> 2, (out >> 2) + n));
    const want = order.map((s) => vecs[s]!.reduce((acc, x, i) => acc + x * vecs[5]![i]!, 0));
    got.forEach((g, j) => expect(Math.abs(g - want[j]!)).toBeLessThan(1e-5 * Math.max(1, Math.sqrt(dim))));
  }
});

test("every vector keeps its score while the index grows its memory, moves its vectors and fills removed slots", () => {
  const r = rng(8);
  const dim = 40; // not a multiple of 16 or 32
  const unit = () => {
    const v = Float32Array.from({ length: dim }, () => r() - 0.5);
    const n = Math.hypot(...v);
    return v.map((x) => x / n);
  };
  const idx = new VectorIndex(dim);
  const live = new Map<number, Float32Array>();
  // Past 16,384 vectors the search pre-filters by Hamming distance; 30k adds cross that and several doublings.
  for (let i = 0; i < 30_000; i++) {
    const v = unit();
    idx.add(i, i % 97, v);
    live.set(i, v);
    if (i % 5 === 4) {
      const gone = Math.floor(r() * i);
      idx.remove(gone);
      live.delete(gone);
    }
  }
  expect(idx.size).toBe(live.size);
  const query = unit();
  const cos = (v: Float32Array) => v.reduce((s, x, i) => s + x * query[i]!, 0);
  const ids = [...live.keys()];
  const scores = idx.scoreIds([...ids, -5], query);
  expect(scores.size).toBe(ids.length);
  // int8 vectors: within ~2% of the float cosine, for every id.
  let worst = 0;
  for (const id of ids) worst = Math.max(worst, Math.abs(scores.get(id)! - cos(live.get(id)!)));
  expect(worst).toBeLessThan(0.03);
  // A stored vector is found as its own best match, with its owner.
  for (const id of ids.slice(0, 50)) {
    const [best] = idx.search(live.get(id)!, 1);
    expect(best).toMatchObject({ id, owner: id % 97 });
    expect(best!.score).toBeGreaterThan(0.97);
  }
});
