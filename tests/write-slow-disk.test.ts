// A disk whose fsync is slow (a busy or network disk; here strace delays every fsync by 400 ms):
// a write or a proposal must wait for its own fsyncs, never hold the callers that do not write.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { openStateDb } from "../lib/store/state-db";
import { createToken } from "../lib/store/tokens";
import { freePort, httpMcp, spawnLettuce, type LiveProcess } from "./helpers/cli";
import { copyVault } from "./helpers/server";

const strace = Bun.which("strace");
if (!strace) console.log("write-slow-disk: skipped: strace is not installed (it delays fsync to play a slow disk)");
const DELAY_MS = 400;

describe.skipIf(!strace)("a slow disk", () => {
  const root = copyVault();
  const port = freePort();
  const tokens: Record<string, string> = {};
  let server: LiveProcess | null = null;

  beforeAll(async () => {
    const db = openStateDb(root);
    for (const scope of ["write", "propose", "read"] as const) tokens[scope] = createToken(db, `slow-${scope}`, scope).token;
    db.close();
    // fdatasync too: the temp files' own sync may be either, depending on the runtime.
    server = spawnLettuce(["serve", root, "--port", String(port)], {
      // No background embedding: creating its cache at start fsyncs too, and is not what is measured here.
      env: { LETTUCE_EMBED_PROVIDER: "none" },
      prefix: [strace!, "-f", "-qq", "--seccomp-bpf", "-o", "/dev/null", "-e", "trace=fsync,fdatasync", "-e", `inject=fsync,fdatasync:delay_enter=${DELAY_MS * 1000}`],
    });
    await server.waitForStdout(/Index current/, 60_000);
    // A first start creates its stores (each creation fsyncs, on the slow disk 400 ms each): wait for that to end.
    for (let t0 = performance.now(), fast = 0; fast < 5 && performance.now() - t0 < 30_000; ) {
      const t = performance.now();
      await post(tokens.read!, { jsonrpc: "2.0", id: 1, method: "ping" });
      fast = performance.now() - t < 50 ? fast + 1 : 0;
      await Bun.sleep(100);
    }
  }, 90_000);

  afterAll(async () => {
    if (server) {
      // A SIGTERM to strace would detach it and leave the server running: stop the server, strace follows.
      const pid = server.proc.pid;
      for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean)) process.kill(Number(child), "SIGTERM");
      await server.stop().catch(() => {});
    }
    rmSync(root, { recursive: true, force: true });
  }, 30_000);

  const post = (token: string, body: unknown) => httpMcp(port, token).post(body);
  const call = (token: string, name: string, args: unknown) => post(token, { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name, arguments: args } });

  /** Run `work` while a reader pings; the call's answer, its time and the slowest ping. */
  async function whilePinging(work: () => Promise<any>): Promise<{ r: any; took: number; worst: number }> {
    let busy = true;
    let worst = 0;
    const t0 = performance.now();
    const running = work().finally(() => (busy = false));
    while (busy) {
      const t = performance.now();
      await post(tokens.read!, { jsonrpc: "2.0", id: 3, method: "ping" });
      worst = Math.max(worst, performance.now() - t);
    }
    const r = await running;
    return { r, took: performance.now() - t0, worst };
  }

  test("other callers are answered while a write waits for its fsyncs", async () => {
    for (let round = 0; round < 2; round++) {
      const { r, took, worst } = await whilePinging(() => call(tokens.write!, "write_note", { path: `Slow ${round}/Note.md`, content: `# Note ${round}\n` }));
      expect(r.result.isError).toBeUndefined();
      // The write itself waited for its fsyncs (the temp file's and its folder's)...
      expect(took).toBeGreaterThan(DELAY_MS);
      // ...and a ping never waited for one. The folder's fsync on the request thread held pings ~400 ms.
      expect(worst).toBeLessThan(DELAY_MS / 2);
    }
  }, 30_000);

  test("other callers are answered while a proposal and its withdrawal wait for state.db's fsync", async () => {
    const proposed = await whilePinging(() => call(tokens.propose!, "write_note", { path: "Proposed.md", content: "# Proposed\n" }));
    const receipt = JSON.parse(proposed.r.result.content[0].text);
    expect(receipt.status).toBe("pending");
    // The row is on the disk before the agent hears of it (the WAL's fsync)...
    expect(proposed.took).toBeGreaterThan(DELAY_MS);
    // ...and the pings did not wait for it: through the fsyncing connection they waited ~400 ms.
    expect(proposed.worst).toBeLessThan(DELAY_MS / 2);

    const withdrawn = await whilePinging(() => call(tokens.propose!, "withdraw_proposal", { proposalId: receipt.proposalId }));
    expect(JSON.parse(withdrawn.r.result.content[0].text).status).toBe("withdrawn");
    expect(withdrawn.took).toBeGreaterThan(DELAY_MS);
    expect(withdrawn.worst).toBeLessThan(DELAY_MS / 2);
  }, 30_000);
});
