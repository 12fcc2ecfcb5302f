// While serving on a machine with two cores or fewer with the model in
// threads, passage work goes to the built-in model in chunks of 4, not 16
// (lib/providers/builtin.ts, SERVING_CHUNK): a thread cannot stop inside a
// chunk, so a request that comes meanwhile finds it busy for a quarter as
// long. A model process (Linux, model-host.ts) is stopped at once, and keeps
// chunks of 16. The vectors are the ones chunks of 16 give, in the caller's
// order. The real model, in this process.
import { expect, test } from "bun:test";
import { availableParallelism } from "node:os";
import { isServing, markServing } from "../lib/offload/activity";
import { BuiltinEmbedder } from "../lib/providers/builtin";
import { withEnv } from "./helpers/env";

const TEXTS = Array.from(
  { length: 22 },
  (_, i) => `Passage ${i}: ${"glaciers carve valleys, tides follow the moon, owls hunt at night. ".repeat(1 + (i % 4))}`,
);

async function embedWithJobs(serving: boolean, host: "thread" | "process" = "thread"): Promise<{ vectors: Float32Array[]; jobs: number[] }> {
  const wasServing = isServing();
  markServing(serving);
  try {
    return await withEnv({ LETTUCE_EMBED_CHUNK: undefined, LETTUCE_EMBED_HOST: host }, async () => {
      const e = new BuiltinEmbedder(1);
      const jobs: number[] = [];
      e.onJob = (j) => {
        if (!j.urgent) jobs.push(j.texts);
      };
      try {
        return { vectors: await e.embed(TEXTS), jobs };
      } finally {
        e.close();
      }
    });
  } finally {
    markServing(wasServing);
  }
}

test.skipIf(availableParallelism() > 2)("serving with the model in threads, passage work reaches it 4 texts at a time, with the vectors chunks of 16 give", async () => {
  const idle = await embedWithJobs(false);
  const serving = await embedWithJobs(true);
  // Not serving (lettuce embed): chunks of 16 from the length-sorted batch; serving: chunks of at most 4, every text once.
  expect(idle.jobs.sort((a, b) => b - a)).toEqual([16, 6]);
  expect(Math.max(...serving.jobs)).toBe(4);
  expect(serving.jobs.reduce((a, b) => a + b, 0)).toBe(TEXTS.length);
  expect(serving.vectors.length).toBe(TEXTS.length);
  for (let i = 0; i < TEXTS.length; i++) {
    let worst = 0;
    for (let j = 0; j < 512; j++) worst = Math.max(worst, Math.abs(serving.vectors[i]![j]! - idle.vectors[i]![j]!));
    expect(worst).toBeLessThan(1e-5);
  }
  // In the caller's order, not the length order the chunks were cut in: each text nearest its own vector.
  const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, j) => s + x * b[j]!, 0);
  expect(dot(serving.vectors[1]!, idle.vectors[1]!)).toBeGreaterThan(dot(serving.vectors[1]!, idle.vectors[0]!));
}, 300_000);

test.skipIf(availableParallelism() > 2 || process.platform !== "linux")("serving with the model in a process (stopped at once for a request), passage work keeps chunks of 16", async () => {
  const serving = await embedWithJobs(true, "process");
  expect(serving.jobs.sort((a, b) => b - a)).toEqual([16, 6]);
  expect(serving.vectors.length).toBe(TEXTS.length);
}, 300_000);
