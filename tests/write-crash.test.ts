// kill -9 in the middle of a write loop: `lettuce serve` in its own process,
// four HTTP clients rewriting four notes with large, self-checking versions;
// the server is killed while writes are in flight, then restarted. Every note
// must hold one whole version (never a torn mix), at least the last one the
// server acknowledged, and the timeline must agree with the files.
import { loadText } from "../lib/write/edit-texts";
import { afterAll, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { openStateDb } from "../lib/store/state-db";
import { createToken } from "../lib/store/tokens";
import { freePort, runLettuce, spawnLettuce, type LiveProcess } from "./helpers/cli";
import { copyVault } from "./helpers/server";

const NOTES = 4;
const LINES = 400;
const version = (k: number) => `---\nversion: ${k}\n---\n\n# Version ${k}\n\n${`line ${k} of a long note that must never be torn\n`.repeat(LINES)}END ${k}\n`;
const VERSION_RE = new RegExp(`^---\\nversion: (\\d+)\\n---\\n\\n# Version \\1\\n\\n(?:line \\1 of a long note that must never be torn\\n){${LINES}}END \\1\\n$`);

const root = copyVault();
const procs: LiveProcess[] = [];
afterAll(async () => {
  for (const p of procs) await p.stop().catch(() => {});
  rmSync(root, { recursive: true, force: true });
});

async function serve(port: number): Promise<LiveProcess> {
  const p = spawnLettuce(["serve", root, "--port", String(port)]);
  procs.push(p);
  await p.waitForStdout(/Index current/, 30_000);
  return p;
}

function rpc(port: number, token: string, name: string, args: Record<string, unknown>) {
  return fetch(`http://127.0.0.1:${port}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
  }).then((r) => r.json() as Promise<any>);
}

test(
  "kill -9 mid-loop, restart: every note is an old or a new version, and the timeline agrees",
  async () => {
    const db = openStateDb(root);
    const token = createToken(db, "crash-test", "write").token;
    db.close();
    let port = freePort();
    const server = await serve(port);
    for (let n = 0; n < NOTES; n++) {
      const r = await rpc(port, token, "write_note", { path: `Crash/n${n}.md`, content: version(0) });
      expect(r.result.isError).toBeUndefined();
    }

    const acked = new Array(NOTES).fill(0);
    const sent = new Array(NOTES).fill(0);
    let total = 0;
    let dead = false;
    const loop = async (n: number) => {
      for (let k = 1; !dead; k++) {
        sent[n] = k;
        try {
          const r = await rpc(port, token, "write_note", { path: `Crash/n${n}.md`, content: version(k), overwrite: true });
          if (r.result?.isError) throw new Error(`write failed: ${JSON.stringify(r.result)}`);
          acked[n] = k;
          total++;
        } catch (e) {
          if (dead) return;
          throw e;
        }
      }
    };
    const loops = Array.from({ length: NOTES }, (_, n) => loop(n));
    while (total < 120) await Bun.sleep(5);
    // Stop sending new writes; the ones in flight are cut by the kill.
    dead = true;
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    await Promise.all(loops);

    // What the kill left behind (varies run to run): pending rows and temp files for recovery to settle.
    const left = openStateDb(root);
    const pending = (left.query("SELECT count(*) AS n FROM agent_edits WHERE state = 'pending'").get() as { n: number }).n;
    left.close();
    const temps = readdirSync(join(root, "Crash")).filter((f) => f.startsWith(".lettuce-tmp")).length;
    console.log(`crash: killed after ${total} acknowledged writes; ${pending} pending timeline rows, ${temps} temp files left`);

    port = freePort();
    const again = await serve(port);
    // Touching the write path once more recovers what the killed process left pending.
    const r = await rpc(port, token, "append_log", { op: "test", title: "after the crash" });
    expect(r.result.isError).toBeUndefined();

    for (let n = 0; n < NOTES; n++) {
      const text = readFileSync(join(root, `Crash/n${n}.md`), "utf8");
      const m = VERSION_RE.exec(text);
      expect(m).not.toBeNull();
      const v = Number(m![1]);
      expect(v).toBeGreaterThanOrEqual(acked[n]);
      expect(v).toBeLessThanOrEqual(sent[n]);
    }
    const strays = readdirSync(join(root, "Crash")).filter((f) => f.startsWith("."));
    expect(strays).toEqual([]);

    const list = await runLettuce(["edits", root, "--json", "--limit", "100000"]);
    expect(list.code).toBe(0);
    const edits = JSON.parse(list.stdout) as { id: number; path: string; afterHash: string; tool: string }[];
    const sha = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest("hex");
    for (let n = 0; n < NOTES; n++) {
      const path = `Crash/n${n}.md`;
      const latest = edits.find((e) => e.path === path)!;
      expect(latest.afterHash).toBe(sha(readFileSync(join(root, path), "utf8")));
      // Every acknowledged write is on the timeline.
      expect(edits.filter((e) => e.path === path).length).toBeGreaterThanOrEqual(acked[n] + 1);
    }
    const state = openStateDb(root);
    try {
      expect((state.query("SELECT count(*) AS n FROM agent_edits WHERE state = 'pending'").get() as { n: number }).n).toBe(0);
      for (const row of state.query("SELECT after_hash FROM agent_edits WHERE path LIKE 'Crash/%'").all() as { after_hash: string }[]) {
        expect(VERSION_RE.test(Buffer.from(loadText(state, row.after_hash)!).toString("utf8"))).toBe(true);
      }
    } finally {
      state.close();
    }
    await again.stop();
  },
  120_000,
);
