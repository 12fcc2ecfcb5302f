// A synthetic vault from the shared generator (../shared/tools/gen-vault.mjs), in a fresh temp folder.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export function synthVault(notes: number, prefix: string, seed = 7): string {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const gen = resolve(import.meta.dir, "../../../shared/tools/gen-vault.mjs");
  const p = Bun.spawnSync(["node", gen, root, String(notes), String(seed)], { stdout: "ignore", stderr: "pipe" });
  if (p.exitCode !== 0) throw new Error(`gen-vault failed: ${p.stderr.toString()}`);
  return root;
}
