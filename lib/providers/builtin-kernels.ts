// Faster TensorFlow.js wasm kernels for the three operations that cost the
// built-in model most, measured on obsidian-hub's passages (see
// docs/semantic.md, "Why the built-in model was slow"):
//
// - BatchMatMul with a batch (the attention's QKᵀ and AV): tfjs-backend-wasm
//   4.5 sends every batched or transposed product to a plain C++ loop at
//   ~0.7 GFLOP/s, while a single [1, M, K]×[1, K, N] product goes to XNNPACK.
//   Here each batch item is one XNNPACK product (b transposed first in JS).
// - SplitV (the attention's q/k/v split): the wasm Slice copies the whole
//   input out of the heap for each part and then one row at a time through a
//   fresh typed-array view; here each row is one copyWithin inside the heap.
// - Add of a bias vector along the last axis: the wasm broadcast path is
//   generic; here it is one JS loop.
//
// Each override handles only its exact, common case and calls the library's
// own kernel for anything else, so results stay the library's (a test compares
// the vectors with and without these kernels on real passages).

/** The part of tfjs-backend-wasm's backend object these kernels use. */
interface WasmBackend {
  wasm: { HEAPU8: Uint8Array; cwrap(name: string, ret: null, args: string[]): (...a: unknown[]) => void };
  dataIdMap: { get(dataId: object): { id: number; memoryOffset: number } };
  makeOutput(shape: number[], dtype: string): TensorInfo;
  disposeData(dataId: object): boolean;
}
interface TensorInfo {
  dataId: object;
  shape: number[];
  dtype: string;
}
interface KernelArgs {
  inputs: Record<string, TensorInfo>;
  backend: WasmBackend;
  attrs: Record<string, unknown>;
}
interface KernelConfig {
  kernelName: string;
  backendName: string;
  kernelFunc: (args: KernelArgs) => TensorInfo | TensorInfo[];
  setupFunc?: unknown;
}
/** The part of @energetic-ai/core's (TensorFlow.js') API used to swap kernels. */
export interface KernelRegistry {
  getKernel(name: string, backend: string): KernelConfig | undefined;
  unregisterKernel(name: string, backend: string): void;
  registerKernel(config: KernelConfig): void;
}

const size = (shape: number[]) => shape.reduce((n, d) => n * d, 1);
/** The float32 heap, taken afresh after any allocation (a grown wasm memory detaches old views). */
const heapOf = (b: WasmBackend) => new Float32Array(b.wasm.HEAPU8.buffer);
const offsetOf = (b: WasmBackend, t: TensorInfo) => b.dataIdMap.get(t.dataId).memoryOffset >> 2;

function splitV(orig: KernelConfig["kernelFunc"]) {
  return (args: KernelArgs): TensorInfo | TensorInfo[] => {
    const { x } = args.inputs as { x: TensorInfo };
    const sizes = args.attrs.numOrSizeSplits;
    const rank = x.shape.length;
    const axis = Number(args.attrs.axis);
    const last = axis === -1 || axis === rank - 1;
    if (x.dtype !== "float32" || !last || !Array.isArray(sizes) || sizes.some((s) => typeof s !== "number" || s < 0)) return orig(args);
    const width = x.shape[rank - 1]!;
    if ((sizes as number[]).reduce((a, b) => a + b, 0) !== width) return orig(args);
    const rows = size(x.shape) / width;
    const outs = (sizes as number[]).map((s) => args.backend.makeOutput([...x.shape.slice(0, -1), s], "float32"));
    const heap = heapOf(args.backend);
    const src = offsetOf(args.backend, x);
    let col = 0;
    outs.forEach((o, k) => {
      const s = (sizes as number[])[k]!;
      const dst = offsetOf(args.backend, o);
      for (let r = 0; r < rows; r++) heap.copyWithin(dst + r * s, src + r * width + col, src + r * width + col + s);
      col += s;
    });
    return outs;
  };
}

function addBias(orig: KernelConfig["kernelFunc"]) {
  return (args: KernelArgs): TensorInfo | TensorInfo[] => {
    const { a, b } = args.inputs as { a: TensorInfo; b: TensorInfo };
    const n = b.shape.length === 1 ? b.shape[0]! : -1;
    if (a.dtype !== "float32" || b.dtype !== "float32" || a.shape.length < 2 || a.shape[a.shape.length - 1] !== n || n < 1) return orig(args);
    const out = args.backend.makeOutput(a.shape.slice(), "float32");
    const heap = heapOf(args.backend);
    const ao = offsetOf(args.backend, a);
    const bo = offsetOf(args.backend, b);
    const oo = offsetOf(args.backend, out);
    const total = size(a.shape);
    for (let i = 0; i < total; i += n) for (let j = 0; j < n; j++) heap[oo + i + j] = heap[ao + i + j]! + heap[bo + j]!;
    return out;
  };
}

function batchMatMul(orig: KernelConfig["kernelFunc"]) {
  let product: ((...a: unknown[]) => void) | null = null;
  return (args: KernelArgs): TensorInfo | TensorInfo[] => {
    const { a, b } = args.inputs as { a: TensorInfo; b: TensorInfo };
    const transposeA = !!args.attrs.transposeA;
    const transposeB = !!args.attrs.transposeB;
    const ra = a.shape.length;
    const rb = b.shape.length;
    if (a.dtype !== "float32" || b.dtype !== "float32" || transposeA || ra < 3 || ra !== rb) return orig(args);
    const outerA = a.shape.slice(0, -2);
    const outerB = b.shape.slice(0, -2);
    if (outerA.some((d, i) => d !== outerB[i])) return orig(args); // broadcasting: the library's path
    const batch = size(outerA);
    const M = a.shape[ra - 2]!;
    const K = a.shape[ra - 1]!;
    const N = transposeB ? b.shape[rb - 2]! : b.shape[rb - 1]!;
    if ((transposeB ? b.shape[rb - 1] : b.shape[rb - 2]) !== K) return orig(args);
    if (batch === 1 && !transposeB) return orig(args); // already XNNPACK's case
    const be = args.backend;
    product ??= be.wasm.cwrap("BatchMatMul", null, ["number", "array", "number", "number", "array", "number", "number", "number", "number"]);
    const out = be.makeOutput([...outerA, M, N], "float32");
    const aItem = be.makeOutput([1, M, K], "float32");
    const oItem = be.makeOutput([1, M, N], "float32");
    const aShape = new Uint8Array(new Int32Array([1, M, K]).buffer);
    const bShape = new Uint8Array(new Int32Array([1, K, N]).buffer);
    for (let z = 0; z < batch; z++) {
      // A fresh b for every item: XNNPACK keeps its packed weights per tensor id.
      const bItem = be.makeOutput([1, K, N], "float32");
      const heap = heapOf(be);
      const ao = offsetOf(be, a) + z * M * K;
      const bo = offsetOf(be, b) + z * K * N;
      heap.copyWithin(offsetOf(be, aItem), ao, ao + M * K);
      const bi = offsetOf(be, bItem);
      if (transposeB) {
        for (let n = 0; n < N; n++) for (let k = 0; k < K; k++) heap[bi + k * N + n] = heap[bo + n * K + k]!;
      } else heap.copyWithin(bi, bo, bo + K * N);
      product(be.dataIdMap.get(aItem.dataId).id, aShape, 3, be.dataIdMap.get(bItem.dataId).id, bShape, 3, false, false, be.dataIdMap.get(oItem.dataId).id);
      be.disposeData(bItem.dataId);
      const h = heapOf(be);
      const oo = offsetOf(be, oItem);
      h.copyWithin(offsetOf(be, out) + z * M * N, oo, oo + M * N);
    }
    be.disposeData(aItem.dataId);
    be.disposeData(oItem.dataId);
    return out;
  };
}

/** Swap in the faster kernels (idempotent; call after the wasm backend is ready). */
export function installFastKernels(tf: KernelRegistry): void {
  const swap = (name: string, make: (orig: KernelConfig["kernelFunc"]) => KernelConfig["kernelFunc"]) => {
    const cfg = tf.getKernel(name, "wasm");
    if (!cfg || (cfg as { lettuce?: boolean }).lettuce) return;
    tf.unregisterKernel(name, "wasm");
    tf.registerKernel({ ...cfg, kernelFunc: make(cfg.kernelFunc), lettuce: true } as KernelConfig);
  };
  swap("SplitV", splitV);
  swap("Add", addBias);
  swap("BatchMatMul", batchMatMul);
}

/** A node of the model's graph as model.json holds it (TensorFlow's GraphDef in JSON). */
interface GraphNode {
  name: string;
  op: string;
  input?: string[];
  attr?: Record<string, unknown>;
}

const bytes = (s: string) => [...s].map((c) => c.charCodeAt(0));

/**
 * Fold each bias add (and the ReLU after it) into the product before it, in the model's graph,
 * before it is loaded: Conv2D → BiasAdd becomes one _FusedConv2D, MatMul → [Reshape →] BiasAdd
 * [→ Relu] one _FusedMatMul, which XNNPACK runs with the bias (and clamp) inside the product
 * instead of two more passes over a [tokens, 1536] tensor (and, for a single query, two more
 * kernel dispatches each). A Reshape between them keeps the last axis, so adding the bias per
 * row before it is the same sum. Returns how many nodes were folded away.
 */
export function fuseBiasAdds(nodes: GraphNode[]): number {
  const base = (ref: string) => ref.replace(/^\^/, "").replace(/:\d+$/, "");
  const consumers = new Map<string, GraphNode[]>();
  for (const n of nodes) for (const i of n.input ?? []) (consumers.get(base(i)) ?? consumers.set(base(i), []).get(base(i))!).push(n);
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const only = (n: GraphNode): GraphNode | null => {
    const c = consumers.get(n.name) ?? [];
    return c.length === 1 ? c[0]! : null;
  };
  const drop = new Set<string>();
  const rename = new Map<string, string>();
  for (const n of nodes) {
    if (n.op !== "Conv2D" && n.op !== "MatMul") continue;
    let next = only(n);
    // MatMul → Reshape → BiasAdd (a Tensordot): the reshape keeps the last axis.
    const reshape = n.op === "MatMul" && next?.op === "Reshape" && base(next.input?.[0] ?? "") === n.name ? next : null;
    if (reshape) next = only(reshape);
    if (!next || next.op !== "BiasAdd" || base(next.input?.[0] ?? "") !== (reshape ?? n).name || (next.input?.length ?? 0) !== 2) continue;
    const bias = next.input![1]!;
    if (!byName.has(base(bias))) continue;
    const fused = ["BiasAdd"];
    let last = next;
    const relu = only(next);
    if (relu?.op === "Relu" && (relu.input?.length ?? 0) === 1) {
      fused.push("Relu");
      last = relu;
    }
    n.op = n.op === "Conv2D" ? "_FusedConv2D" : "_FusedMatMul";
    n.input = [n.input![0]!, n.input![1]!, bias];
    n.attr = { ...n.attr, fused_ops: { list: { s: fused.map(bytes) } }, num_args: { i: "1" } };
    // What read the bias add (or the ReLU) now reads the product (or the reshape of it).
    const target = (reshape ?? n).name;
    drop.add(next.name);
    rename.set(next.name, target);
    if (last !== next) {
      drop.add(last.name);
      rename.set(last.name, target);
    }
  }
  if (!drop.size) return 0;
  const kept = nodes.filter((n) => !drop.has(n.name));
  for (const n of kept) {
    n.input = n.input?.map((i) => {
      const ctl = i.startsWith("^") ? "^" : "";
      const to = rename.get(base(i));
      return to ? `${ctl}${to}` : i;
    });
  }
  nodes.splice(0, nodes.length, ...kept);
  return drop.size;
}
