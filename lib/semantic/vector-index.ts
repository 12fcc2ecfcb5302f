// In-memory nearest-neighbour search over unit vectors, mirroring a vec0 table.
// Why not sqlite-vec's own KNN: measured here, its brute-force cosine scan takes
// ~16 ms per 10k 512-d vectors and ~53 ms per 50k, more than the whole query
// budget. This keeps each vector as int8 (a quarter of the memory of float32,
// cosine error ~0.5%) plus a 1-bit sign code; past EXACT_LIMIT vectors a
// Hamming pass over the codes picks candidates that the int8 dot product then
// ranks. Both loops run in WebAssembly SIMD (./vector-kernels.ts), over vectors
// held in its memory: ~1.3 ms a search at 103k 512-d vectors, 5.8 ms in JavaScript.
import { normalize } from "../providers/types";
import { align16, KernelMemory } from "./vector-kernels";

const EXACT_LIMIT = 16_384;
// Candidates the Hamming pass keeps for k wanted: 5k, at least 2,000. SciFact's 23k passages rank the
// same with 5k, with 8k (what it was) and with every vector scored; 5k cut a 400-deep search of 103k
// passages from ~2.8 to ~2.2 ms.
const CANDIDATES_PER_HIT = 5;
const MIN_CANDIDATES = 2_000;

export interface Neighbour {
  id: number;
  owner: number;
  score: number;
}

/** Keeps the k best (highest score) items seen; a binary min-heap on score. */
export class TopK {
  private scores: Float64Array;
  private items: Float64Array;
  size = 0;
  constructor(readonly k: number) {
    this.scores = new Float64Array(k);
    this.items = new Float64Array(k);
  }
  get floor(): number {
    return this.size < this.k ? -Infinity : this.scores[0]!;
  }
  push(item: number, score: number): void {
    if (this.size < this.k) {
      let i = this.size++;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (this.scores[p]! <= score) break;
        this.scores[i] = this.scores[p]!;
        this.items[i] = this.items[p]!;
        i = p;
      }
      this.scores[i] = score;
      this.items[i] = item;
    } else if (score > this.scores[0]!) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= this.size) break;
        const r = l + 1;
        const c = r < this.size && this.scores[r]! < this.scores[l]! ? r : l;
        if (this.scores[c]! >= score) break;
        this.scores[i] = this.scores[c]!;
        this.items[i] = this.items[c]!;
        i = c;
      }
      this.scores[i] = score;
      this.items[i] = item;
    }
  }
  /** Items and scores, best first. */
  sorted(): { item: number; score: number }[] {
    const out: { item: number; score: number }[] = [];
    for (let i = 0; i < this.size; i++) out.push({ item: this.items[i]!, score: this.scores[i]! });
    return out.sort((a, b) => b.score - a.score);
  }
}

const EMPTY = -1;

/**
 * id → slot, as an open-addressing hash over two Int32Arrays (linear probing,
 * backward-shift deletion: no tombstones). A JS Map of a million numbers costs
 * tens of MB more than these 16 bytes an entry (the table is kept at most
 * half full).
 */
export class IdSlots {
  private keys = new Int32Array(0);
  private vals = new Int32Array(0);
  private mask = -1;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Room for `n` entries without rehashing. */
  reserve(n: number): void {
    let cap = 16;
    while (cap < n * 2) cap *= 2;
    if (cap <= this.keys.length) return;
    const [keys, vals] = [this.keys, this.vals];
    this.keys = new Int32Array(cap);
    this.vals = new Int32Array(cap).fill(EMPTY);
    this.mask = cap - 1;
    this.count = 0;
    for (let i = 0; i < keys.length; i++) if (vals[i] !== EMPTY) this.set(keys[i]!, vals[i]!);
  }

  private find(id: number): number {
    let i = Math.imul(id, 0x9e3779b1) & this.mask;
    while (this.vals[i] !== EMPTY && this.keys[i] !== id) i = (i + 1) & this.mask;
    return i;
  }

  get(id: number): number | undefined {
    if (this.count === 0) return undefined;
    const i = this.find(id);
    return this.vals[i] === EMPTY ? undefined : this.vals[i];
  }

  has(id: number): boolean {
    return this.get(id) !== undefined;
  }

  set(id: number, slot: number): void {
    if ((this.count + 1) * 2 > this.keys.length) this.reserve(this.count + 1);
    const i = this.find(id);
    if (this.vals[i] === EMPTY) this.count++;
    this.keys[i] = id;
    this.vals[i] = slot;
  }

  delete(id: number): void {
    if (this.count === 0) return;
    let i = this.find(id);
    if (this.vals[i] === EMPTY) return;
    this.count--;
    // Shift later entries of the run back into the hole, so that lookups never stop early.
    for (let j = (i + 1) & this.mask; this.vals[j] !== EMPTY; j = (j + 1) & this.mask) {
      const home = Math.imul(this.keys[j]!, 0x9e3779b1) & this.mask;
      // Move j into i when its home is not in (i, j] (cyclically).
      if (i <= j ? home <= i || home > j : home <= i && home > j) {
        this.keys[i] = this.keys[j]!;
        this.vals[i] = this.vals[j]!;
        i = j;
      }
    }
    this.vals[i] = EMPTY;
  }
}

export class VectorIndex {
  private n = 0;
  private cap = 0;
  private ids = new Int32Array(0);
  private owners = new Int32Array(0);
  private scales = new Float32Array(0);
  private slots = new IdSlots();
  private readonly scratch: Float32Array;
  private readonly words: number;
  // The int8 vectors and the sign codes live in the kernels' memory, laid out as:
  // [query int8 | query code | histogram | codes: cap × words u32 | vectors: cap × dim int8 | per-search scratch].
  private readonly mem = new KernelMemory();
  private readonly qqOff = 0;
  private readonly qcOff: number;
  private readonly histOff: number;
  private readonly codesOff: number;

  /** `center`: subtracted before taking signs, so that the 1-bit codes split the data evenly. */
  constructor(
    readonly dim: number,
    private center: Float32Array = new Float32Array(dim),
  ) {
    this.words = Math.ceil(dim / 32);
    this.scratch = new Float32Array(dim);
    this.qcOff = align16(dim);
    this.histOff = this.qcOff + align16(this.words * 4);
    this.codesOff = this.histOff + align16((dim + 1) * 4);
    this.mem.ensure(this.vecsOff(0));
  }

  get size(): number {
    return this.n;
  }

  /** Where the int8 vectors start when there is room for `cap` of them. */
  private vecsOff(cap: number): number {
    return this.codesOff + align16(cap * this.words * 4);
  }

  /** Where per-search scratch starts. */
  private get tailOff(): number {
    return this.vecsOff(this.cap) + align16(this.cap * this.dim);
  }

  /** The mean of some vectors: a good `center` for a new index over them. */
  static meanOf(vectors: Iterable<Float32Array>, dim: number): Float32Array {
    const m = new Float32Array(dim);
    let count = 0;
    for (const v of vectors) {
      for (let i = 0; i < dim; i++) m[i]! += v[i]!;
      count++;
    }
    if (count) for (let i = 0; i < dim; i++) m[i]! /= count;
    return m;
  }

  /**
   * Room for `n` vectors: the tables are sized once when the count is known
   * (growing by doubling holds the old and the new arrays at once, 1.5× the
   * memory at the peak, and may leave half the last doubling unused).
   */
  reserve(n: number): void {
    if (n > this.cap) this.grow(n);
    this.slots.reserve(n);
  }

  private grow(min = 0): void {
    const cap = Math.max(1024, min, this.cap * 2);
    const g = <T extends Int32Array | Float32Array>(old: T, make: (n: number) => T): T => {
      const a = make(cap);
      a.set(old as never);
      return a;
    };
    this.ids = g(this.ids, (n) => new Int32Array(n));
    this.owners = g(this.owners, (n) => new Int32Array(n));
    this.scales = g(this.scales, (n) => new Float32Array(n));
    // The codes grow in place; the vectors after them move up (copyWithin is a memmove).
    const [from, to] = [this.vecsOff(this.cap), this.vecsOff(cap)];
    this.mem.ensure(to + align16(cap * this.dim));
    this.mem.u8.copyWithin(to, from, from + this.n * this.dim);
    this.cap = cap;
  }

  private encode(v: Float32Array, qOff: number, cOff: number): number {
    const { i8: q, u32: codes } = this.mem;
    const c = cOff >> 2;
    let max = 0;
    for (let i = 0; i < this.dim; i++) max = Math.max(max, Math.abs(v[i]!));
    const s = max > 0 ? 127 / max : 0;
    for (let w = 0; w < this.words; w++) codes[c + w] = 0;
    for (let i = 0; i < this.dim; i++) {
      q[qOff + i] = Math.round(v[i]! * s);
      if (v[i]! > this.center[i]!) codes[c + (i >> 5)]! |= 1 << (i & 31);
    }
    return max > 0 ? max / 127 : 0;
  }

  /** Add or replace the vector of `id` (normalised here). */
  add(id: number, owner: number, vector: Float32Array): void {
    if (vector.length !== this.dim) throw new Error(`vector of ${vector.length} dimensions in a ${this.dim}-d index`);
    // Normalised in a scratch array: a copy per vector is 2 KB of garbage, and loading a million of them
    // raised the peak RSS by ~1.8 GB before a collection caught up.
    this.scratch.set(vector);
    const v = normalize(this.scratch);
    let slot = this.slots.get(id);
    if (slot === undefined) {
      if (this.n === this.cap) this.grow();
      slot = this.n++;
      this.slots.set(id, slot);
    }
    this.ids[slot] = id;
    this.owners[slot] = owner;
    this.scales[slot] = this.encode(v, this.vecsOff(this.cap) + slot * this.dim, this.codesOff + slot * this.words * 4);
  }

  remove(id: number): void {
    const slot = this.slots.get(id);
    if (slot === undefined) return;
    this.slots.delete(id);
    const last = --this.n;
    if (slot !== last) {
      this.ids[slot] = this.ids[last]!;
      this.owners[slot] = this.owners[last]!;
      this.scales[slot] = this.scales[last]!;
      const [v, c, d, w] = [this.vecsOff(this.cap), this.codesOff, this.dim, this.words * 4];
      this.mem.u8.copyWithin(v + slot * d, v + last * d, v + (last + 1) * d);
      this.mem.u8.copyWithin(c + slot * w, c + last * w, c + (last + 1) * w);
      this.slots.set(this.ids[slot]!, slot);
    }
  }

  has(id: number): boolean {
    return this.slots.has(id);
  }

  /** Encode a query as the stored vectors are, into the query slots of the memory; returns its scale. */
  private encodeQuery(query: Float32Array): number {
    this.scratch.set(query);
    return this.encode(normalize(this.scratch), this.qqOff, this.qcOff);
  }

  /** Dot products of the query with `count` slots (listed at `slotsOff`, or 0..count-1 for -1), at the returned offset. */
  private dots(slotsOff: number, count: number, outOff: number): Int32Array {
    this.mem.dots(this.vecsOff(this.cap), this.dim, this.qqOff, slotsOff, count, outOff);
    return this.mem.i32.subarray(outOff >> 2, (outOff >> 2) + count);
  }

  /** The k vectors most similar (cosine) to `query`, best first. */
  search(query: Float32Array, k: number): Neighbour[] {
    if (this.n === 0 || k <= 0) return [];
    const qs = this.encodeQuery(query);
    const top = new TopK(Math.min(k, this.n));
    const tail = this.tailOff;
    if (this.n <= EXACT_LIMIT) {
      this.mem.ensure(tail + this.n * 4);
      const d = this.dots(-1, this.n, tail);
      for (let s = 0; s < this.n; s++) top.push(s, d[s]! * this.scales[s]! * qs);
    } else {
      const slotsOff = tail + align16(this.n * 2);
      const outOff = slotsOff + align16(this.n * 4);
      this.mem.ensure(outOff + this.n * 4);
      const count = this.candidates(Math.max(k * CANDIDATES_PER_HIT, MIN_CANDIDATES), tail, slotsOff);
      const d = this.dots(slotsOff, count, outOff);
      const slots = this.mem.i32.subarray(slotsOff >> 2, (slotsOff >> 2) + count);
      for (let j = 0; j < count; j++) top.push(slots[j]!, d[j]! * this.scales[slots[j]!]! * qs);
    }
    return top.sorted().map(({ item, score }) => ({ id: this.ids[item]!, owner: this.owners[item]!, score }));
  }

  /** Cosine similarity of `query` to each of these ids (ids not in the index are left out). */
  scoreIds(ids: number[], query: Float32Array): Map<number, number> {
    const qs = this.encodeQuery(query);
    const tail = this.tailOff;
    const outOff = tail + align16(ids.length * 4);
    this.mem.ensure(outOff + ids.length * 4);
    const found: number[] = [];
    const slots = this.mem.i32.subarray(tail >> 2);
    for (const id of ids) {
      const slot = this.slots.get(id);
      if (slot !== undefined) slots[found.push(id) - 1] = slot;
    }
    const d = this.dots(tail, found.length, outOff);
    const out = new Map<number, number>();
    found.forEach((id, j) => out.set(id, d[j]! * this.scales[slots[j]!]! * qs));
    return out;
  }

  /** Writes at `slotsOff` the slots of the `want` vectors nearest in Hamming distance (ties at the cut kept); returns how many. */
  private candidates(want: number, distOff: number, slotsOff: number): number {
    const hist = this.mem.i32.subarray(this.histOff >> 2, (this.histOff >> 2) + this.dim + 1);
    hist.fill(0);
    this.mem.hamming(this.codesOff, this.words, this.n, this.qcOff, distOff, this.histOff);
    let cutoff = 0;
    for (let acc = 0; cutoff <= this.dim; cutoff++) {
      acc += hist[cutoff]!;
      if (acc >= want) break;
    }
    return this.mem.within(distOff, this.n, cutoff, slotsOff);
  }
}
