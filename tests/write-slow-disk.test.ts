// A disk whose fsync is slow (a busy or network disk; here strace delays every fsync by 400 ms):
// a write must wait for its own fsyncs, never hold the callers that do not write.
import { afterAll, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { openStateDb } from "../lib/store/state-db";
import { createToken } from "../lib/store/tokens";
import { freePort, spawnLettuce, type LiveProcess } from "./helpers/cli";
import { copyVault } from "./helpers/server";

const strace = Bun.which("strace");
if (!strace) console.log("write-slow-disk: skipped: strace is not installed (it delays fsync to play a slow disk)");

const root = copyVault();
let server: LiveProcess | null = null;
afterAll(async () => {
  if (server) {
    // A SIGTERM to strace would detach it and leave the server running: stop the server, strace follows.
    const pid = server.proc.pid;
    for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean)) process.kill(Number(child), "SIGTERM");
    await server.stop().catch(() => {});
  }
  rmSync(root, { recursive: true, force: true });
}, 30_000);

test.skipIf(!strace)(
  "other callers are answered while a write waits for a slow disk's fsync",
  async () => {
    const db = openStateDb(root);
    const token = createToken(db, "slow-disk", "write").token;
    db.close();
    const port = freePort();
    const DELAY_US = 400_000;
    // fdatasync too: the temp files' own sync may be either, depending on the runtime.
    server = spawnLettuce(["serve", root, "--port", String(port)], {
      prefix: [strace!, "-f", "-qq", "--seccomp-bpf", "-o", "/dev/null", "-e", "trace=fsync,fdatasync", "-e", `inject=fsync,fdatasync:delay_enter=${DELAY_US}`],
    });
    await server.waitForStdout(/Index current/, 60_000);
    const post = (body: unknown) =>
      fetch(`http://127.0.0.1:${port}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<any>);
    await post({ jsonrpc: "2.0", id: 1, method: "ping" });

    for (let round = 0; round < 2; round++) {
      let busy = true;
      let worst = 0;
      const t0 = performance.now();
      const write = post({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "write_note", arguments: { path: `Slow ${round}/Note.md`, content: `# Note ${round}\n` } } }).finally(() => (busy = false));
      while (busy) {
        const t = performance.now();
        await post({ jsonrpc: "2.0", id: 3, method: "ping" });
        worst = Math.max(worst, performance.now() - t);
      }
      const r = await write;
      const took = performance.now() - t0;
      expect(r.result.isError).toBeUndefined();
      // The write itself waited for its fsyncs (the temp file's and its folder's)...
      expect(took).toBeGreaterThan(DELAY_US / 1000);
      // ...and a ping never waited for one. The folder's fsync on the request thread held pings ~400 ms.
      expect(worst).toBeLessThan(DELAY_US / 1000 / 2);
    }
  },
  90_000,
);
