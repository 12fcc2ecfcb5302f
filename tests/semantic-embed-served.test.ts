// `lettuce embed` while `lettuce serve` embeds the same vault with the same model: the CLI waits for
// the server instead of sending every passage to the model a second time. The model is the in-test
// Ollama-wire server, slowed so that the server's build takes a few seconds.
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, runLettuce, spawnLettuce } from "./helpers/cli";
import { startModelServer } from "./helpers/model-server";
import { tempDir } from "./helpers/server";

const NOTES = 200;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A vault of NOTES short notes, each one passage, and the in-test model server (slowed) with the env that selects it. */
function vaultAndModel(embedDelayMs: number) {
  const root = tempDir();
  dirs.push(root);
  mkdirSync(join(root, "Notes"));
  for (let i = 0; i < NOTES; i++) writeFileSync(join(root, "Notes", `N${i}.md`), `# N${i}\n\nShort note ${i} on topic${i}.\n`);
  const m = startModelServer({ embedDelayMs });
  const env = { LETTUCE_EMBED_PROVIDER: "ollama", OLLAMA_HOST: m.url, LETTUCE_LLM_PROVIDER: "none", LETTUCE_EMBED_MODEL: undefined };
  return { root, m, env };
}

test("embed waits for a serving server that embeds with the same model; --rebuild refuses; alone it embeds itself", async () => {
  const { root, m, env } = vaultAndModel(300);
  const sent = () => m.state.requests.filter((r) => r.path === "/api/embed").flatMap((r) => r.body.input as string[]);
  try {
    const srv = spawnLettuce(["serve", root, "--port", String(freePort())], { env });
    try {
      await srv.waitForStdout(/embedding \d+ new or changed notes in the background/, 60_000);
      // serve.json names the model once the background build has started.
      for (let i = 0; i < 100 && !JSON.parse(readFileSync(join(root, ".lettuce", "serve.json"), "utf8")).embedder; i++) await Bun.sleep(50);
      expect(JSON.parse(readFileSync(join(root, ".lettuce", "serve.json"), "utf8")).embedder).toContain("nomic-embed-text");

      const rebuild = await runLettuce(["embed", root, "--rebuild"], { env });
      expect(rebuild.code).toBe(1);
      expect(rebuild.stderr).toMatch(/stop it before --rebuild/);

      // Still building when the CLI starts: it has something to wait for.
      const before = sent().length;
      const embed = await runLettuce(["embed", root, "--json"], { env, timeoutMs: 120_000 });
      expect(embed.code, embed.stderr).toBe(0);
      // Every passage went to the model once: the CLI left them to the server.
      const texts = sent();
      expect(texts.length).toBeGreaterThanOrEqual(NOTES);
      expect(before).toBeLessThan(NOTES);
      expect(new Set(texts).size).toBe(texts.length);
      expect(embed.stderr).toMatch(/waiting for it/);
      const summary = JSON.parse(embed.stdout.trim().split("\n").at(-1)!);
      expect(summary.embeddedByServer).toBeGreaterThan(0);
      expect(summary.embedded).toBe(0);
    } finally {
      await srv.stop();
    }
    // No server: embed does the work itself (a changed note), and names no server.
    writeFileSync(join(root, "Notes", "N0.md"), "# N0\n\nChanged text for the first note.\n");
    const alone = await runLettuce(["embed", root, "--json"], { env, timeoutMs: 120_000 });
    expect(alone.code, alone.stderr).toBe(0);
    const after = JSON.parse(alone.stdout.trim().split("\n").at(-1)!);
    expect(after.embeddedByServer).toBeUndefined();
    expect(after.embedded).toBeGreaterThan(0);
  } finally {
    await m.stop();
  }
}, 240_000);

// The server's background pass stops on a model error and keeps its backlog until the watcher sees a change:
// the CLI must not wait for it forever.
test("embed stops waiting for a server that embeds nothing, and embeds the rest itself", async () => {
  const { root, m, env } = vaultAndModel(100);
  try {
    const srv = spawnLettuce(["serve", root, "--port", String(freePort())], { env });
    try {
      await srv.waitForStdout(/embedding \d+ new or changed notes in the background/, 60_000);
      m.state.failNext = { count: 1_000_000, status: 400 };
      await srv.waitForStdout(/background embedding stopped/, 60_000);
      m.state.failNext = { count: 0, status: 400 };
      const embed = await runLettuce(["embed", root, "--json"], { env: { ...env, LETTUCE_EMBED_FOLLOW_STALL_MS: "1500" }, timeoutMs: 120_000 });
      expect(embed.code, embed.stderr).toBe(0);
      expect(embed.stderr).toMatch(/embedding the rest here/);
      const summary = JSON.parse(embed.stdout.trim().split("\n").at(-1)!);
      expect(summary.embeddedByServer).toBeUndefined();
      expect(summary.embedded).toBeGreaterThan(0);
    } finally {
      await srv.stop();
    }
  } finally {
    await m.stop();
  }
}, 240_000);
