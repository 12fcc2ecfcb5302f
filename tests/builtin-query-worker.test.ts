// Queries get a model worker of their own at normal priority (lib/providers/builtin.ts):
// a new question is embedded while the background build keeps the passage workers busy,
// by a thread that is not niced, and its vector is the one a passage worker gives for
// the same text. The real built-in model, through the real server, on a small vault.
// Also: the model graph with its bias adds folded into the products (builtin-kernels.ts)
// gives the shipped graph's vectors.
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BuiltinEmbedder } from "../lib/providers/builtin";
import { SemanticService } from "../lib/semantic/service";
import { BUILTIN_ENV } from "./helpers/builtin-model";
import { withEnv } from "./helpers/env";
import { startTestServer, tempDir, waitFor } from "./helpers/server";

const dirs: string[] = [];
const embedders: BuiltinEmbedder[] = [];
afterAll(() => {
  for (const e of embedders) e.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const TOPICS = ["glaciers carve valleys", "bread rises with yeast", "comets trail dust", "owls hunt at night", "tides follow the moon", "bees dance to share routes"];

/** Notes of a few sentences each, all different, enough that the build runs for a while. */
function makeVault(n: number): string {
  const root = tempDir();
  dirs.push(root);
  mkdirSync(join(root, "Notes"));
  for (let i = 0; i < n; i++) {
    const t = TOPICS[i % TOPICS.length]!;
    const body = Array.from({ length: 6 }, (_, k) => `Sentence ${k} of note ${i}: ${t}, observation ${i * 31 + k} and remark ${i * 7 + k}.`).join(" ");
    writeFileSync(join(root, "Notes", `Note ${i}.md`), `# Note ${i}\n\n${body}\n`);
  }
  return root;
}

/** This process's threads named Worker, with their nice values (Linux: /proc/self/task). */
function workerNices(): number[] {
  if (!existsSync("/proc/self/task")) return [];
  const out: number[] = [];
  for (const t of readdirSync("/proc/self/task")) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${t}/stat`, "utf8");
    } catch {
      continue; // the thread ended
    }
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    if (name !== "Worker") continue;
    // Fields after the name: state is field 3, nice is field 19 (index 16 from state).
    out.push(Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]));
  }
  return out;
}

/** The nice value of this process's main thread. */
function mainThreadNice(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
}

test("a new question during a background build is embedded by a worker at normal priority and answered; passage workers stay niced", async () => {
  // Several of the build's 128-passage batches: with one, every note is written at once and the
  // window in which the build runs with some notes embedded is a few milliseconds (a poll missed it).
  const root = makeVault(480);
  // No read workers (their jobs run in-line): they run at normal priority too, and hybrid search's keyword side
  // is one of their jobs, so the one normal-priority worker counted below is the query's.
  await withEnv({ ...BUILTIN_ENV, LETTUCE_EMBED_SYNC_LIMIT: "10", LETTUCE_EMBED_WORKERS: "1", LETTUCE_EMBED_QUERY_WORKER: undefined, LETTUCE_READ_WORKERS: "0" }, async () => {
    const s = await startTestServer({ root });
    try {
      const svc = SemanticService.for(s.vault);
      await svc.enableBackground();
      // The build is under way: some notes embedded. Read in-process: a request would pause the build.
      await waitFor(() => {
        const e = svc.progressNow();
        return e.state === "building" && e.notesEmbedded > 0 ? e : null;
      }, { timeoutMs: 300_000, intervalMs: 25, what: "the background build to embed its first notes" });
      const r = await s.call("semantic_search", { query: "which animals hunt in the dark", limit: 5 });
      expect(r.partial).toBeTruthy();
      expect(r.items.length).toBeGreaterThan(0);
      const nices = workerNices();
      const base = mainThreadNice();
      if (process.platform === "linux" && nices.length && base < 19) {
        // One passage worker (LETTUCE_EMBED_WORKERS=1) below this process's priority, and the query's worker at it
        // (the suite may itself run under `nice`).
        expect(nices.filter((n) => n > base).length).toBeGreaterThanOrEqual(1);
        expect(nices.filter((n) => n === base).length).toBe(1);
      }
      const info = (await s.call("get_vault_info")).embedding;
      expect(info.notesTotal).toBe(480);
    } finally {
      await s.close();
    }
  });
}, 600_000);

/** The largest difference between two vectors' components (their lengths must agree). */
function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let j = 0; j < a.length; j++) worst = Math.max(worst, Math.abs(a[j]! - b[j]!));
  return worst;
}

test("the query worker's vectors are the passage workers' for the same texts (within 1e-5), in the caller's order", async () => {
  const texts = [
    "owls hunt at night",
    "A glacier moves slowly downhill, carving valleys of ice over thousands of years.",
    "bread",
    "Tides follow the moon; the sea rises and falls twice a day on most coasts, and springs tides come at new and full moon.",
    "ünïcödé and emoji 🥬 in a passage",
  ];
  await withEnv({ LETTUCE_EMBED_QUERY_WORKER: undefined, LETTUCE_EMBED_CHUNK: undefined }, async () => {
    const e = new BuiltinEmbedder(1);
    embedders.push(e);
    const bulk = await e.embed(texts);
    const roles: boolean[] = [];
    e.onJob = (j) => roles.push(j.urgent);
    for (let i = 0; i < texts.length; i++) {
      const [q] = await e.embed([texts[i]!], { purpose: "query" });
      expect(q!.length).toBe(512);
      expect(maxAbsDiff(q!, bulk[i]!)).toBeLessThan(1e-5);
    }
    expect(roles.every((u) => u)).toBe(true);
  });
}, 300_000);

test("bias adds folded into the products give the graph-as-shipped's vectors within 1e-5", async () => {
  const texts = [
    "owls hunt at night",
    "A glacier moves slowly downhill, carving valleys of ice over thousands of years, and leaves moraines of till where it melts back.",
    "[[wikilink]] `code` **bold** #tag https://example.com/a?b=c",
  ];
  const run = (fuse: string) =>
    withEnv({ LETTUCE_EMBED_FUSE: fuse, LETTUCE_EMBED_PLAIN: undefined }, async () => {
      const e = new BuiltinEmbedder(1);
      embedders.push(e);
      try {
        return await e.embed(texts);
      } finally {
        e.close();
      }
    });
  const shipped = await run("0");
  const fused = await run("1");
  for (let i = 0; i < texts.length; i++) {
    expect(maxAbsDiff(fused[i]!, shipped[i]!)).toBeLessThan(1e-5);
    // Not the same vector by accident: the texts differ from each other by far more than that.
    if (i > 0) expect(Math.abs(fused[i]![0]! - fused[0]![0]!) + Math.abs(fused[i]![1]! - fused[0]![1]!)).toBeGreaterThan(1e-4);
  }
}, 300_000);

test("a fresh query worker warms itself with made-up texts, and a question that arrives meanwhile goes first", async () => {
  const questions = ["where do owls hunt", "how do tides follow the moon"];
  const plain = await withEnv({ LETTUCE_EMBED_QUERY_WORKER: undefined, LETTUCE_EMBED_WARMUP: "0" }, async () => {
    const e = new BuiltinEmbedder(1);
    embedders.push(e);
    let warmed = false;
    e.onWarmed = () => (warmed = true);
    const out = [];
    for (const q of questions) out.push((await e.embed([q], { purpose: "query" }))[0]!);
    await Bun.sleep(200);
    expect(warmed).toBe(false); // LETTUCE_EMBED_WARMUP=0: no warm-up at all
    e.close();
    return out;
  });
  await withEnv({ LETTUCE_EMBED_QUERY_WORKER: undefined, LETTUCE_EMBED_WARMUP: "100" }, async () => {
    const e = new BuiltinEmbedder(1);
    embedders.push(e);
    let warmedAt = 0;
    const warmed = new Promise<{ calls: number; ms: number }>((resolve) => (e.onWarmed = (w) => ((warmedAt = performance.now()), resolve(w))));
    // The first question starts the query worker; its warm-up begins once the model is loaded.
    const [first] = await e.embed([questions[0]!], { purpose: "query" });
    // The second arrives during the warm-up (100 calls take seconds) and is answered before it ends.
    const [second] = await e.embed([questions[1]!], { purpose: "query" });
    const answeredAt = performance.now();
    const w = await warmed;
    expect(w.calls).toBe(100);
    expect(answeredAt).toBeLessThan(warmedAt);
    // The warm-up changes nothing in the vectors.
    expect(maxAbsDiff(first!, plain[0]!)).toBe(0);
    expect(maxAbsDiff(second!, plain[1]!)).toBe(0);
  });
}, 300_000);
