// While `serve` runs, the built-in model's passage work runs in a child
// process (lib/providers/model-host.ts) so that it can be stopped the moment
// a request begins, mid-chunk, and go on once the server is quiet. Tested
// through a real server with the real model: the process's state and CPU
// time are read from /proc. Also: a host killed mid-chunk loses nothing, and
// a stopped host does not outlive its server. Linux only (elsewhere the model
// runs in threads, as before).
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isServing, markServing } from "../lib/offload/activity";
import { BuiltinEmbedder } from "../lib/providers/builtin";
import { hostKind } from "../lib/providers/model-host";
import { BUILTIN_ENV } from "./helpers/builtin-model";
import { freePort, spawnLettuce } from "./helpers/cli";
import { withEnv } from "./helpers/env";
import { connectClient, tempDir, waitFor } from "./helpers/server";

const linux = process.platform === "linux";
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface ProcInfo {
  pid: number;
  state: string;
  /** utime + stime, in clock ticks. */
  cpu: number;
}

/** The fields of a /proc stat file from the state on (field 3), or null if it is gone. */
function statFields(path: string): string[] | null {
  try {
    const stat = readFileSync(path, "utf8");
    // The command name is in parentheses and may hold spaces: fields count from the last ')'.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

function procInfo(pid: number): ProcInfo | null {
  const f = statFields(`/proc/${pid}/stat`);
  return f && { pid, state: f[0]!, cpu: Number(f[11]) + Number(f[12]) };
}

/** The nice value of each thread of `pid`. */
function threadNices(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((t) => {
    const f = statFields(`/proc/${pid}/task/${t}/stat`);
    return f ? [Number(f[16])] : [];
  });
}

/** The model hosts whose parent is `parent`: children started with LETTUCE_MODEL_HOST=1. */
function modelHosts(parent: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    if (Number(statFields(`/proc/${name}/stat`)?.[1]) !== parent) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, "utf8").split("\0").includes("LETTUCE_MODEL_HOST=1")) out.push(Number(name));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

/** Notes embedded as of the serve log's last progress line. */
function embeddedSoFar(log: string): number {
  const all = [...log.matchAll(/Semantic index: ([\d,]+)\/[\d,]+ notes embedded/g)];
  return all.length ? Number(all.at(-1)![1]!.replace(/,/g, "")) : 0;
}

/** A vault whose background embedding lasts well over a minute with the built-in model. */
function busyVault(): string {
  const root = tempDir();
  dirs.push(root);
  mkdirSync(join(root, "Notes"));
  const para = (i: number, k: number) => `Paragraph ${k} of note ${i}: glaciers carve valleys while tides follow the moon, and owls hunt at night over field ${i * 7 + k}.`;
  for (let i = 0; i < 400; i++) {
    const body = Array.from({ length: 8 }, (_, k) => `## Part ${k}\n\n${para(i, k)} ${para(i, k + 1)} ${para(i, k + 2)}`).join("\n\n");
    writeFileSync(join(root, "Notes", `Note ${i}.md`), `# Note ${i}\n\n${body}\n`);
  }
  return root;
}

describe.skipIf(!linux)("the built-in model's passage work in a process of its own", () => {
  test("where passage work runs: a process while serving on Linux, a thread otherwise and for queries; LETTUCE_EMBED_HOST overrides", async () => {
    await withEnv({ LETTUCE_EMBED_HOST: undefined }, async () => {
      expect(hostKind("bulk", true)).toBe("process");
      expect(hostKind("bulk", false)).toBe("thread");
      expect(hostKind("query", true)).toBe("thread");
    });
    await withEnv({ LETTUCE_EMBED_HOST: "thread" }, async () => expect(hostKind("bulk", true)).toBe("thread"));
    await withEnv({ LETTUCE_EMBED_HOST: "process" }, async () => {
      expect(hostKind("bulk", false)).toBe("process");
      expect(hostKind("query", false)).toBe("thread");
    });
  });

  test("through the server: the model process stops the moment a request begins, mid-chunk, and goes on once the server is quiet", async () => {
    const root = busyVault();
    // A long quiet period, so that the stop lasts long enough to be seen from outside.
    const srv = spawnLettuce(["serve", root, "--port", String(freePort())], { env: { ...BUILTIN_ENV, LETTUCE_BACKGROUND_IDLE_MS: "3000", LETTUCE_EMBED_LOG_MS: "1000" } });
    try {
      const url = (await srv.waitForStdout(/MCP endpoint: (http:\/\/\S+)/, 60_000))[1]!;
      const token = (await srv.waitForStdout(/shown only this once:\s+(\S+)/, 10_000))[1]!;
      await srv.waitForStdout(/embedding \d+ new or changed notes in the background/, 60_000);
      // The model is at work: its process exists and its CPU time grows.
      const host = (await waitFor(
        () => {
          const [pid] = modelHosts(srv.proc.pid);
          const a = pid ? procInfo(pid) : null;
          return a && a.state !== "T" && a.cpu > 50 ? a : null;
        },
        { timeoutMs: 90_000, intervalMs: 200, what: "a model process at work" },
      ))!;
      // Background work: every thread of the host (the runtime's own included) below the server's priority.
      const serverNice = threadNices(srv.proc.pid)[0]!;
      if (serverNice < 19) expect(Math.min(...threadNices(host.pid))).toBeGreaterThan(serverNice);
      const client = await connectClient(url, token);
      try {
        // Each call is a request; the first one (initialize) already stopped the model.
        const res = await client.callTool({ name: "search", arguments: { query: "glaciers", limit: 3 } });
        expect(res.isError).toBeFalsy();
        const held = procInfo(host.pid)!;
        expect(held.state).toBe("T");
        await Bun.sleep(1000);
        const later = procInfo(host.pid)!;
        expect(later.state).toBe("T");
        expect(later.cpu).toBe(held.cpu);
        // Quiet for LETTUCE_BACKGROUND_IDLE_MS: it goes on, and embeds more.
        const resumed = (await waitFor(
          () => {
            const p = procInfo(host.pid);
            return p && p.state !== "T" && p.cpu > held.cpu + 20 ? p : null;
          },
          { timeoutMs: 20_000, intervalMs: 100, what: "the model process going on" },
        ))!;
        expect(resumed.pid).toBe(host.pid);
      } finally {
        await client.close();
      }
      // The embedding moves on after the stop: the chunk held mid-way was finished, not lost.
      const atResume = embeddedSoFar(srv.stdout());
      await waitFor(() => (embeddedSoFar(srv.stdout()) > atResume ? true : null), { timeoutMs: 60_000, intervalMs: 200, what: "more notes embedded" });
    } finally {
      await srv.stop();
    }
  }, 240_000);

  test("a stopped model process does not outlive its server", async () => {
    const root = busyVault();
    const srv = spawnLettuce(["serve", root, "--port", String(freePort())], { env: { ...BUILTIN_ENV, LETTUCE_BACKGROUND_IDLE_MS: "5000" } });
    try {
      const url = (await srv.waitForStdout(/MCP endpoint: (http:\/\/\S+)/, 60_000))[1]!;
      const token = (await srv.waitForStdout(/shown only this once:\s+(\S+)/, 10_000))[1]!;
      // At work (past its start, where it asks the kernel to kill it with its parent): only then is it stopped.
      const pid = (await waitFor(
        () => {
          const [p] = modelHosts(srv.proc.pid);
          return p && (procInfo(p)?.cpu ?? 0) > 50 ? p : null;
        },
        { timeoutMs: 90_000, intervalMs: 200, what: "a model process at work" },
      ))!;
      const client = await connectClient(url, token);
      await client.callTool({ name: "search", arguments: { query: "owls" } });
      expect(procInfo(pid)!.state).toBe("T");
      // The server is killed outright, with no chance to clean up, while its model process is stopped.
      srv.proc.kill("SIGKILL");
      await waitFor(() => (!existsSync(`/proc/${pid}`) || procInfo(pid)?.state === "Z" ? true : null), { timeoutMs: 10_000, intervalMs: 100, what: "the model process gone" });
      await client.close().catch(() => undefined);
    } finally {
      await srv.stop();
    }
  }, 180_000);

  test("a model process stopped the instant it starts is held only once the kernel will kill it with its parent", async () => {
    // A parent that starts a host and asks for the stop at once, long before the host has run a line of its
    // own; it prints the host's pid once the host is stopped. Then the parent dies without cleaning up.
    const dir = tempDir();
    dirs.push(dir);
    const script = join(dir, "parent.ts");
    writeFileSync(
      script,
      `import { startModelHost } from ${JSON.stringify(join(import.meta.dir, "../lib/providers/model-host.ts"))};
const host = startModelHost("bulk", "process", { message() {}, error() {} });
host.pause();
setInterval(() => {}, 1000);
`,
    );
    const parent = Bun.spawn([process.execPath, script], { stdout: "ignore", stderr: "inherit", env: { ...process.env, LETTUCE_EMBED_HOST: "process" } });
    try {
      const pid = (await waitFor(
        () => {
          const [p] = modelHosts(parent.pid);
          return p && procInfo(p)?.state === "T" ? p : null;
        },
        { timeoutMs: 30_000, intervalMs: 20, what: "the host stopped" },
      ))!;
      parent.kill("SIGKILL");
      await waitFor(() => (!existsSync(`/proc/${pid}`) || procInfo(pid)?.state === "Z" ? true : null), { timeoutMs: 10_000, intervalMs: 100, what: "the host gone with its parent" });
    } finally {
      parent.kill("SIGKILL");
    }
  }, 60_000);

  test("a model process killed mid-chunk: a fresh one does the chunk again, and every vector is the one a thread gives", async () => {
    const texts = Array.from({ length: 48 }, (_, i) => `Passage ${i}: ${"tides follow the moon and owls hunt at night. ".repeat(2 + (i % 5))}`);
    const wasServing = isServing();
    markServing(true);
    try {
      const viaProcess = await withEnv({ LETTUCE_EMBED_HOST: "process", LETTUCE_EMBED_CHUNK: "4" }, async () => {
        const e = new BuiltinEmbedder(1);
        let killed = 0;
        let doneTexts = 0;
        // Once the first chunk is back, the next one is in the host's hands: kill the host while it computes it.
        e.onJob = (j) => {
          doneTexts += j.texts;
          if (killed) return;
          killed = -1;
          setTimeout(() => {
            const [pid] = modelHosts(process.pid);
            if (pid) process.kill((killed = pid), "SIGKILL");
          }, 15);
        };
        try {
          const out = e.embed(texts);
          const pid = await waitFor(() => (killed > 0 ? killed : null), { timeoutMs: 60_000, what: "the host killed" });
          const vectors = await out;
          // The killed chunk was done again, once: every text came back from a finished chunk exactly once.
          expect(doneTexts).toBe(texts.length);
          // A fresh host did the rest.
          expect(modelHosts(process.pid).filter((p) => p !== pid).length).toBeGreaterThan(0);
          return vectors;
        } finally {
          e.close();
        }
      });
      const viaThread = await withEnv({ LETTUCE_EMBED_HOST: "thread" }, async () => {
        const e = new BuiltinEmbedder(1);
        try {
          return await e.embed(texts);
        } finally {
          e.close();
        }
      });
      expect(viaProcess.length).toBe(texts.length);
      for (let i = 0; i < texts.length; i++) {
        let worst = 0;
        for (let j = 0; j < 512; j++) worst = Math.max(worst, Math.abs(viaProcess[i]![j]! - viaThread[i]![j]!));
        expect(worst).toBeLessThan(1e-5);
      }
      // close() let the hosts go.
      await waitFor(() => (modelHosts(process.pid).every((p) => procInfo(p)?.state === "Z" || !existsSync(`/proc/${p}`)) ? true : null), { timeoutMs: 10_000, what: "hosts gone after close" });
    } finally {
      markServing(wasServing);
    }
  }, 240_000);
});
