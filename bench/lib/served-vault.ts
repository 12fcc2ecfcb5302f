// A copy of a vault, indexed and served on a free loopback port with a read
// token: what the in-process benchmarks (lint, wake) measure against.
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHttpServer, type RunningServer } from "../../lib/server/serve";
import { createToken } from "../../lib/store/tokens";
import { VaultContext } from "../../lib/vault-context";

export interface ServedVault {
  root: string;
  vault: VaultContext;
  server: RunningServer;
  token: string;
  indexMs: number;
  close(): Promise<void>;
}

export async function serveVaultCopy(src: string, label: string, opts: { watch?: boolean } = {}): Promise<ServedVault> {
  const root = mkdtempSync(join(tmpdir(), `lettuce-${label}-`));
  cpSync(src, root, { recursive: true, filter: (s) => !s.includes("/.lettuce") });
  const vault = VaultContext.open(root);
  const t0 = performance.now();
  await vault.indexer.fullScan();
  const indexMs = performance.now() - t0;
  if (opts.watch) vault.startWatching();
  const server = startHttpServer(vault, { port: 0, host: "127.0.0.1" });
  const token = createToken(vault.stateDb, "bench", "read").token;
  return {
    root,
    vault,
    server,
    token,
    indexMs,
    async close() {
      await server.stop();
      vault.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
