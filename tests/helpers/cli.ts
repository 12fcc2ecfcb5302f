// Run the real `lettuce` CLI (bun main.ts …) as a child process.
import type { Subprocess } from "bun";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { openStateDb } from "../../lib/store/state-db";
import { createToken, type Scope } from "../../lib/store/tokens";
import { REPO } from "./server";
import { pidAlive } from "../../lib/platform/pid";

/** The Bun binary running these tests: the same one `npm ci` installs. */
export const BUN = process.execPath;
export const MAIN = join(REPO, "main.ts");

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI's environment: this process's, NO_COLOR, and `extra` (a variable given as undefined is left out). */
function childEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  return Object.fromEntries(Object.entries({ ...process.env, NO_COLOR: "1", ...extra }).filter((e): e is [string, string] => e[1] !== undefined));
}

/** Run `lettuce ARGS…` to completion (killed after timeoutMs). */
export async function runLettuce(args: string[], opts: { timeoutMs?: number; env?: Record<string, string | undefined>; cwd?: string } = {}): Promise<CliResult> {
  const proc = Bun.spawn([BUN, MAIN, ...args], {
    cwd: opts.cwd ?? REPO,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    env: childEnv(opts.env),
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), opts.timeoutMs ?? 30_000);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** A long-running `lettuce` process (serve) whose output can be awaited line by line. */
export interface LiveProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** Everything printed to stdout so far. */
  stdout(): string;
  stderr(): string;
  /** Wait until stdout matches `re` (or the process exits, or the time runs out). */
  waitForStdout(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** SIGTERM, then the exit code (SIGKILL after a grace period). */
  stop(): Promise<number>;
}

/** `prefix`: a command the process runs under (e.g. strace injecting faults). */
export function spawnLettuce(args: string[], opts: { cwd?: string; env?: Record<string, string | undefined>; prefix?: string[] } = {}): LiveProcess {
  const proc = Bun.spawn([...(opts.prefix ?? []), BUN, MAIN, ...args], {
    cwd: opts.cwd ?? REPO,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    env: childEnv(opts.env),
  });
  let out = "";
  let err = "";
  const pump = async (stream: ReadableStream<Uint8Array>, add: (s: string) => void) => {
    const dec = new TextDecoder();
    for await (const chunk of stream) add(dec.decode(chunk, { stream: true }));
  };
  void pump(proc.stdout, (s) => (out += s));
  void pump(proc.stderr, (s) => (err += s));
  let exited = false;
  void proc.exited.then(() => (exited = true));
  return {
    proc,
    stdout: () => out,
    stderr: () => err,
    async waitForStdout(re, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = out.match(re);
        if (m) return m;
        if (exited) {
          await Bun.sleep(20); // let the pumps drain
          const m2 = out.match(re);
          if (m2) return m2;
          throw new Error(`lettuce exited (${proc.exitCode}) before printing ${re}\nstdout:\n${out}\nstderr:\n${err}`);
        }
        if (Date.now() > deadline) throw new Error(`Timed out waiting for ${re}\nstdout:\n${out}\nstderr:\n${err}`);
        await Bun.sleep(20);
      }
    },
    async stop() {
      if (!exited) proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      const code = await proc.exited;
      clearTimeout(t);
      return code;
    },
  };
}

/** A TCP port that was free a moment ago (bound by Bun.serve on port 0, then released). */
export function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(null) });
  const port = s.port!;
  s.stop(true);
  return port;
}

/** A client of a `serve` on 127.0.0.1:`port` by plain HTTP POSTs with a token: a server in another process. */
export function httpMcp(port: number, token: string) {
  const post = (body: unknown): Promise<any> =>
    fetch(`http://127.0.0.1:${port}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    }).then((r) => r.json());
  /** tools/call's result: {content, isError?}. */
  const result = async (name: string, args: unknown = {}): Promise<any> => (await post({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name, arguments: args } })).result;
  return {
    post,
    ping: () => post({ jsonrpc: "2.0", id: 1, method: "ping" }),
    result,
    /** The tool's answer, parsed from its text (an error's too: {error, kind, …}). */
    call: async (name: string, args: unknown = {}): Promise<any> => JSON.parse((await result(name, args)).content[0].text),
  };
}

/** Whether process `pid` (not a child of this one) has exited within `ms`; a survivor is killed. */
export async function exitedWithin(pid: number, ms: number): Promise<boolean> {
  for (const t0 = Date.now(); pidAlive(pid) && Date.now() - t0 < ms; ) await Bun.sleep(200);
  if (!pidAlive(pid)) return true;
  process.kill(pid, "SIGKILL");
  return false;
}

export interface ServedVault {
  port: number;
  /** A token of the scope asked for ("" when none was asked for). */
  token: string;
  server: LiveProcess;
  mcp: ReturnType<typeof httpMcp>;
  /** Stop the server and remove the vault. */
  close(): Promise<void>;
}

/**
 * `lettuce serve root` in a child on a free port, with no background embedding, once its index is current;
 * `scope` makes a token first. The new hardening tests each wrote this start and stop out.
 */
export async function servedVault(root: string, opts: { scope?: Scope; env?: Record<string, string | undefined>; args?: string[] } = {}): Promise<ServedVault> {
  let token = "";
  if (opts.scope) {
    const db = openStateDb(root);
    token = createToken(db, `served-${opts.scope}`, opts.scope).token;
    db.close();
  }
  const port = freePort();
  const server = spawnLettuce(["serve", root, "--port", String(port), ...(opts.args ?? [])], { env: { LETTUCE_EMBED_PROVIDER: "none", ...opts.env } });
  const close = async () => {
    await server.stop().catch(() => {});
    rmSync(root, { recursive: true, force: true });
  };
  try {
    await server.waitForStdout(/Index current/, 60_000);
  } catch (e) {
    await close();
    throw e;
  }
  return { port, token, server, mcp: httpMcp(port, token), close };
}
