// Worker entry: runs the built-in sentence encoder (Universal Sentence Encoder
// Lite on TensorFlow.js' wasm backend) off the request thread. The model files
// come from builtin-assets.ts, so this works the same from source and inside
// the compiled binary with no node_modules anywhere.
// The model's libraries are imported after the thread lowers its priority:
// evaluating TensorFlow.js costs ~150 ms of CPU per worker, which a request
// arriving at start-up should not compete with at the same priority.
import type { EmbeddingsModel } from "@energetic-ai/embeddings";
import { readFileSync } from "node:fs";
import { dieWithParent } from "../platform/parent-death";
import { lowerProcessPriority, lowerThreadPriority } from "../platform/thread-priority";
import { threadTimes } from "../platform/thread-time";
import { MODEL_FILES, WASM_FILES } from "./builtin-assets";
import type { KernelRegistry } from "./builtin-kernels";
import { envNumber } from "../env-number";

// @energetic-ai/core re-exports TensorFlow.js, whose type packages it does not
// ship; this is the part of its surface used here.
type WeightsGroup = { paths: string[]; weights: unknown[] };
interface Tf {
  setWasmPaths(files: Record<string, string>): void;
  setBackend(name: string): Promise<boolean>;
  ready(): Promise<void>;
  io: {
    getModelArtifactsForJSON(json: unknown, loadWeights: (manifest: WeightsGroup[]) => Promise<[unknown[], ArrayBuffer]>): Promise<unknown>;
    fromMemory(artifacts: unknown): unknown;
  };
  loadGraphModel(handler: unknown): Promise<ConstructorParameters<typeof EmbeddingsModel>[0]["model"]>;
}
declare const self: Worker;

// A worker thread, or a child process of its own (model-host.ts: passage work while serving, so
// that it can be stopped mid-chunk). The process talks over Bun's IPC channel and exits when its
// parent goes.
const asProcess = process.env.LETTUCE_MODEL_HOST === "1" && typeof process.send === "function";
// Stopped during requests, the process could not notice its parent's death: the kernel kills it then.
// Until it says so, the parent does not stop it (a host stopped before this line would outlive a killed server).
if (asProcess) process.send!({ type: "started", stoppable: dieWithParent(Number(process.env.LETTUCE_MODEL_HOST_PARENT)) } satisfies HostStarted);

// Passage embedding is background work: the request thread gets a core first (docs/semantic.md,
// "Background embedding"). The query worker embeds for a request in flight: it keeps normal priority.
if (asProcess) lowerProcessPriority();
else if (process.env.LETTUCE_EMBED_ROLE !== "query") lowerThreadPriority();
const plain = process.env.LETTUCE_EMBED_PLAIN === "1";

/** `stats`: measure the job (two reads of /proc per job; only when someone listens, see BuiltinEmbedder.onJob). */
export type WorkerRequest = { id: number; texts: string[]; stats?: boolean };
export type WorkerReply =
  | { type: "ready"; dim: number }
  | { type: "warmed"; calls: number; ms: number }
  | { type: "fatal"; error: string }
  | { type: "result"; id: number; dim: number; vectors: Float32Array; stats: JobStats | null }
  | { type: "error"; id: number; error: string };
/** A model process's first word to its parent (model-host.ts): whether the kernel will kill it with the parent. */
export type HostStarted = { type: "started"; stoppable: boolean };

async function loadModel(): Promise<EmbeddingsModel> {
  const core = await import("@energetic-ai/core");
  const { EmbeddingsModel: Model } = await import("@energetic-ai/embeddings");
  const { fuseBiasAdds, installFastKernels } = await import("./builtin-kernels");
  const { PieceTokenizer } = await import("./builtin-tokenizer");
  const tf = core as unknown as Tf;
  tf.setWasmPaths(WASM_FILES);
  // Backend first, model second: starting both at once (as initModel does) sometimes
  // fails with "Backend 'wasm' has not yet been initialized".
  await tf.setBackend("wasm");
  await tf.ready();
  // LETTUCE_EMBED_PLAIN=1 runs the library's own kernels and tokenizer (tests compare the two).
  if (!plain) installFastKernels(core as unknown as KernelRegistry);
  const json = JSON.parse(readFileSync(MODEL_FILES.modelJson, "utf8"));
  // Bias adds folded into the products before them (builtin-kernels.ts; LETTUCE_EMBED_FUSE=0 leaves the graph as shipped).
  if (!plain && process.env.LETTUCE_EMBED_FUSE !== "0") fuseBiasAdds(json.modelTopology.node);
  const artifacts = await tf.io.getModelArtifactsForJSON(json, async (manifest) => {
    const specs: unknown[] = [];
    const parts: Uint8Array[] = [];
    for (const group of manifest) {
      for (const p of group.paths) {
        const file = MODEL_FILES.shards[p];
        if (!file) throw new Error(`model weight file ${p} is not embedded`);
        parts.push(readFileSync(file));
      }
      specs.push(...group.weights);
    }
    const total = parts.reduce((n, p) => n + p.byteLength, 0);
    const data = new Uint8Array(total);
    let at = 0;
    for (const p of parts) {
      data.set(p, at);
      at += p.byteLength;
    }
    return [specs, data.buffer];
  });
  const model = await tf.loadGraphModel(tf.io.fromMemory(artifacts));
  const vocabulary = JSON.parse(readFileSync(MODEL_FILES.vocabJson, "utf8"));
  const embedder = new Model({ model, vocabulary });
  // The same tokens as the library's tokenizer, without its O(n²) copying (builtin-tokenizer.ts).
  if (!plain) (embedder as unknown as { tokenizer: unknown }).tokenizer = new PieceTokenizer(vocabulary);
  return embedder;
}

/** What one job cost this thread: CPU, time spent runnable but waiting for a core (its nice value at work), wall. */
export interface JobStats {
  cpuMs: number;
  waitMs: number;
  wallMs: number;
}

const post = (m: WorkerReply, transfer: ArrayBuffer[] = []) => (asProcess ? process.send!(m) : self.postMessage(m, transfer));

// One model call at a time: the warm-up's calls and the jobs' queue up in arrival order.
let turn: Promise<unknown> = Promise.resolve();
function inTurn<T>(fn: () => Promise<T>): Promise<T> {
  const run = turn.then(fn);
  turn = run.catch(() => undefined);
  return run;
}

// A fresh worker runs a query's embedding at ~2.5× the cost it settles at: measured, one short
// text took 18–24 ms for the first ~30 calls, ~10 ms by the 60th, ~8.5 ms from about the 200th
// (the runtime compiling the graph executor's JavaScript and the model's WebAssembly to its
// faster tiers as they get hot). A query worker lives until IDLE_MS of quiet, so without this most
// questions a user asks would meet a cold one. It warms itself with short made-up texts, one call
// at a time, and only after WARM_GAP_MS with no question (an agent's burst of questions warms it
// by itself): a question that arrives meanwhile goes first and waits at most for the call in
// progress. LETTUCE_EMBED_WARMUP sets the number of calls (0: none).
const WARM_TEXTS = ["how do I restore a deleted note", "weekly review checklist", "ideas for the garden this spring", "meeting notes from Tuesday", "what did we decide about the budget", "reading list", "travel plans and bookings", "the recipe with lentils", "project status and next steps", "why the sync failed"];
function warmCalls(): number {
  if (process.env.LETTUCE_EMBED_ROLE !== "query") return 0;
  return envNumber("LETTUCE_EMBED_WARMUP", 150, { min: 0, max: 1000, integer: true });
}

const WARM_GAP_MS = 30;
let lastJobAt = 0;

async function warmUp(model: EmbeddingsModel): Promise<void> {
  const calls = warmCalls();
  if (!calls) return;
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) {
    do await Bun.sleep(WARM_GAP_MS);
    while (performance.now() - lastJobAt < WARM_GAP_MS);
    await inTurn(() => model.embed([`${WARM_TEXTS[i % WARM_TEXTS.length]} ${i}`]));
  }
  post({ type: "warmed", calls, ms: Math.round(performance.now() - t0) });
}

const ready = loadModel().then(
  async (model) => {
    const probe = await model.embed(["ready"]);
    post({ type: "ready", dim: probe[0]!.length });
    void warmUp(model).catch(() => undefined);
    return model;
  },
  (e) => {
    post({ type: "fatal", error: (e as Error)?.message ?? String(e) });
    return null;
  },
);

async function onRequest(req: WorkerRequest): Promise<void> {
  const { id, texts } = req;
  lastJobAt = performance.now();
  const model = await ready;
  if (!model) return;
  await inTurn(() => runJob(model, id, texts, req.stats));
  lastJobAt = performance.now();
}
if (asProcess) {
  process.on("message", (m) => void onRequest(m as WorkerRequest));
  process.on("disconnect", () => process.exit(0));
} else self.onmessage = (ev: MessageEvent<WorkerRequest>) => void onRequest(ev.data);

async function runJob(model: EmbeddingsModel, id: number, texts: string[], withStats?: boolean): Promise<void> {
  try {
    const s0 = withStats ? threadTimes() : null;
    const t0 = performance.now();
    // The model reads only its first 128 tokens; longer input just costs tokenizing time.
    const out = await model.embed(texts.map((t) => t.slice(0, 2000)));
    const s1 = s0 && threadTimes();
    const stats = s0 && s1 ? { cpuMs: s1.cpuMs - s0.cpuMs, waitMs: s1.waitMs - s0.waitMs, wallMs: performance.now() - t0 } : null;
    const dim = out[0]?.length ?? 0;
    const flat = new Float32Array(out.length * dim);
    out.forEach((v, i) => flat.set(v, i * dim));
    post({ type: "result", id, dim, vectors: flat, stats }, [flat.buffer]);
  } catch (e) {
    post({ type: "error", id, error: (e as Error)?.message ?? String(e) });
  }
}
