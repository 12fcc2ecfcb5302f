// `lettuce serve` embeds in the background and says how far it is: the log's
// progress lines count the passages the model really has to embed (not a guess
// from note sizes), and end with the real total. The model is the in-test
// Ollama-wire server, slowed so that the build takes a few seconds. Also the
// worker policy for the built-in model while serving.
import { afterAll, expect, test } from "bun:test";
import { availableParallelism } from "node:os";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isServing, markServing, requestStarted } from "../lib/offload/activity";
import { defaultWorkers } from "../lib/providers/builtin";
import { freePort, spawnLettuce } from "./helpers/cli";
import { withEnv } from "./helpers/env";
import { startModelServer } from "./helpers/model-server";
import { tempDir } from "./helpers/server";

const NOTES = 200;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test("serve logs counted progress while it embeds, and the real total at the end", async () => {
  const root = tempDir();
  dirs.push(root);
  mkdirSync(join(root, "Notes"));
  // One short passage per note, every one different: the passages to embed are exactly the notes.
  for (let i = 0; i < NOTES; i++) writeFileSync(join(root, "Notes", `N${i}.md`), `# N${i}\n\nShort note ${i} on topic${i}.\n`);
  // Large notes that say the same thing: a size-based guess counts many passages, the model embeds few.
  const filler = Array.from({ length: 40 }, () => "The same paragraph again, word for word, in every copy of this note.").join("\n\n");
  for (let i = 0; i < 5; i++) writeFileSync(join(root, `Copy ${i}.md`), `${filler}\n`);
  const m = startModelServer({ embedDelayMs: 250 });
  try {
    await withEnv({ LETTUCE_EMBED_PROVIDER: "ollama", OLLAMA_HOST: m.url, LETTUCE_LLM_PROVIDER: "none", LETTUCE_EMBED_LOG_MS: "200" }, async () => {
      const srv = spawnLettuce(["serve", root, "--port", String(freePort())]);
      try {
        await srv.waitForStdout(new RegExp(`embedding ${NOTES + 5} new or changed notes in the background`), 60_000);
        const line = await srv.waitForStdout(/Semantic index: ([\d,]+)\/([\d,]+) notes embedded, ([\d,]+) passages to go/, 60_000);
        const n = (s: string) => Number(s.replace(/,/g, ""));
        expect(n(line[2]!)).toBe(NOTES + 5);
        const done = await srv.waitForStdout(/Semantic index current: (\d+) notes embedded \((\d+) passages by the model\)/, 120_000);
        expect(Number(done[1])).toBe(NOTES + 5);
        // Every document text the model was sent, distinct: the real count the progress lines must start from.
        const sent = m.state.requests.filter((r) => r.path === "/api/embed").flatMap((r) => r.body.input as string[]);
        expect(new Set(sent).size).toBe(sent.length);
        expect(Number(done[2])).toBe(sent.length);
        // The first progress line's "to go" plus what had been embedded then is the real total.
        const first = /Semantic index: ([\d,]+)\/[\d,]+ notes embedded, ([\d,]+) passages to go/.exec(srv.stdout())!;
        expect(n(first[2]!)).toBeLessThanOrEqual(sent.length);
        // Before the first batch is written, "to go" is the whole real count.
        if (n(first[1]!) === 0) expect(n(first[2]!)).toBe(sent.length);
        const lines = [...srv.stdout().matchAll(/passages to go/g)];
        expect(lines.length).toBeGreaterThan(0);
      } finally {
        await srv.stop();
      }
    });
  } finally {
    await m.stop();
  }
}, 180_000);

test("the built-in model keeps to one worker while requests come on a 2-core machine, two on a larger one; LETTUCE_EMBED_WORKERS overrides", async () => {
  const was = isServing();
  try {
    await withEnv({ LETTUCE_EMBED_WORKERS: undefined, LETTUCE_EMBED_THREADS: undefined }, async () => {
      markServing(false);
      expect(defaultWorkers()).toBe(Math.min(2, availableParallelism()));
      markServing(true);
      const done = requestStarted();
      if (availableParallelism() <= 2) expect(defaultWorkers()).toBe(1);
      expect(defaultWorkers(2)).toBe(1);
      // Four cores or more: both workers still run, and two cores are left for requests.
      expect(defaultWorkers(4)).toBe(2);
      done();
      if (availableParallelism() <= 2) expect(defaultWorkers()).toBe(1); // a request just ended
      expect(defaultWorkers(2)).toBe(1);
      expect(defaultWorkers(1)).toBe(1);
    });
    await withEnv({ LETTUCE_EMBED_WORKERS: "3" }, async () => expect(defaultWorkers()).toBe(3));
  } finally {
    markServing(was);
  }
});

test("a request in flight holds background work back until it ends or turns into a long wait (a long-poll)", async () => {
  await withEnv({ LETTUCE_BACKGROUND_IDLE_MS: "50" }, async () => {
    const { shouldYield, whenQuiet } = await import("../lib/offload/activity");
    const end = requestStarted();
    expect(shouldYield()).toBe(true);
    const quiet = whenQuiet();
    // Still in flight, but waiting for minutes is not working: after 2 s the background goes on.
    await quiet;
    expect(shouldYield()).toBe(false);
    end();
    // A request that just ended holds it back for the quiet period.
    expect(shouldYield()).toBe(true);
    await whenQuiet();
    expect(shouldYield()).toBe(false);
  });
});
