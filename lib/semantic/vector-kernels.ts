// The vector index's two hot loops (Hamming distances over the sign codes, int8
// dot products) and the pair search's float dot products, as WebAssembly SIMD:
// 128-bit lanes that JavaScript lacks. Measured at 103k 512-d vectors: a search
// went from 5.8 ms in JavaScript to ~1.3 ms. Source: vector-kernels.wat
// (scripts/build-wasm.ts).
import { VECTOR_KERNELS_WASM } from "./vector-kernels.generated";

interface Exports {
  memory: WebAssembly.Memory;
  hamming(codes: number, words: number, n: number, qc: number, dist: number, hist: number): void;
  within(dist: number, n: number, cutoff: number, out: number): number;
  dots(vecs: number, dim: number, qq: number, slots: number, count: number, out: number): void;
  dotsF32(vecs: number, dim: number, q: number, slots: number, count: number, out: number): void;
}

const PAGE = 65_536;
const MAX_BYTES = 65_536 * PAGE;
let compiled: WebAssembly.Module | null = null;

/** Round up to 16 bytes: SIMD loads need no alignment, but a lane never straddles two regions. */
export const align16 = (n: number) => (n + 15) & ~15;

/**
 * One instance of the kernels with its own memory, grown on demand. Typed-array
 * views over the memory are remade after every growth (growing detaches them).
 */
export class KernelMemory {
  private readonly k: Exports;
  private buf: ArrayBuffer;
  u8!: Uint8Array;
  i8!: Int8Array;
  u16!: Uint16Array;
  i32!: Int32Array;
  u32!: Uint32Array;
  f32!: Float32Array;

  constructor() {
    compiled ??= new WebAssembly.Module(Buffer.from(VECTOR_KERNELS_WASM, "base64"));
    this.k = new WebAssembly.Instance(compiled).exports as unknown as Exports;
    this.buf = this.k.memory.buffer;
    this.remakeViews();
  }

  private remakeViews(): void {
    this.buf = this.k.memory.buffer;
    this.u8 = new Uint8Array(this.buf);
    this.i8 = new Int8Array(this.buf);
    this.u16 = new Uint16Array(this.buf);
    this.i32 = new Int32Array(this.buf);
    this.u32 = new Uint32Array(this.buf);
    this.f32 = new Float32Array(this.buf);
  }

  get bytes(): number {
    return this.buf.byteLength;
  }

  /** At least `bytes` of memory (grown only, never shrunk). */
  ensure(bytes: number): void {
    if (bytes <= this.buf.byteLength) return;
    if (bytes > MAX_BYTES) throw new Error(`the vector index needs ${Math.ceil(bytes / 2 ** 20)} MB, more than WebAssembly's 4 GB`);
    this.k.memory.grow(Math.ceil((bytes - this.buf.byteLength) / PAGE));
    this.remakeViews();
  }

  hamming(codes: number, words: number, n: number, qc: number, dist: number, hist: number): void {
    this.k.hamming(codes, words, n, qc, dist, hist);
  }

  within(dist: number, n: number, cutoff: number, out: number): number {
    return this.k.within(dist, n, cutoff, out);
  }

  /** out[j] = dot(query, vector in slot slots[j]); `slots` -1 means slots 0..count-1. */
  dots(vecs: number, dim: number, qq: number, slots: number, count: number, out: number): void {
    this.k.dots(vecs, dim, qq, slots, count, out);
  }

  /** out[j] (f32) = dot(the f32 vector at q, the f32 vector in slot slots[j]). */
  dotsF32(vecs: number, dim: number, q: number, slots: number, count: number, out: number): void {
    this.k.dotsF32(vecs, dim, q, slots, count, out);
  }
}
