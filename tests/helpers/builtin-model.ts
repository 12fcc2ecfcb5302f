// For tests that run the real built-in embedding model through the server:
// the environment that selects it (and no chat model), set for a describe
// block and put back after, and a word-overlap measure computed from the
// files, to check the model's answers against something it did not produce.
import { afterAll, beforeAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SemanticService } from "../../lib/semantic/service";
import { startTestServer, type TestServer } from "./server";

export const BUILTIN_ENV = { LETTUCE_EMBED_PROVIDER: "builtin", LETTUCE_LLM_PROVIDER: "none" };

/** Sets BUILTIN_ENV; returns the function that restores what was there before. */
export function useBuiltinModel(): () => void {
  const saved: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(BUILTIN_ENV)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}

/**
 * The server on `root`, every note embedded up front in this process: on a loaded
 * machine the built-in model can take longer than an MCP request may wait; the
 * tool calls then answer from the stored vectors.
 */
export async function serveEmbedded(root: string): Promise<TestServer> {
  const s = await startTestServer({ root });
  await SemanticService.for(s.vault).reconcileNow();
  return s;
}

/**
 * For a describe block: a temp vault that `fill` builds, served with the built-in model
 * and every note embedded up front (serveEmbedded); the server, the folder and the
 * environment are put back after the block. Read `.s` and `.root` inside tests.
 */
export function useEmbeddedVault(prefix: string, fill: (root: string) => void): { readonly s: TestServer; readonly root: string } {
  let restoreEnv = () => {};
  const v = {} as { s: TestServer; root: string };
  beforeAll(async () => {
    restoreEnv = useBuiltinModel();
    v.root = mkdtempSync(join(tmpdir(), prefix));
    fill(v.root);
    v.s = await serveEmbedded(v.root);
  }, 900_000);
  afterAll(async () => {
    await v.s?.close();
    if (v.root) rmSync(v.root, { recursive: true, force: true });
    restoreEnv();
  });
  return v;
}

/** Share of distinct words two texts have in common (Jaccard). */
export function wordOverlap(a: string, b: string): number {
  const words = (t: string) => new Set(t.toLowerCase().match(/[a-z0-9]+/g) ?? []);
  const x = words(a);
  const y = words(b);
  let common = 0;
  for (const w of x) if (y.has(w)) common++;
  return common / (x.size + y.size - common);
}
