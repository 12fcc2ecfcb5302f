// Test harness: a real vault copied to a temp dir, the real server on an
// ephemeral 127.0.0.1 port, and the official MCP SDK client.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startHttpServer, type RunningServer } from "../../lib/server/serve";
import { createToken, type Scope } from "../../lib/store/tokens";
import { VaultContext } from "../../lib/vault-context";

export const REPO = resolve(import.meta.dir, "../..");
export const EXAMPLE_VAULT = join(REPO, "examples/vault");
export { CORPORA, OBSIDIAN_HELP } from "./corpora";

/** A fresh empty temp dir; the caller removes it (rmSync(dir, {recursive: true, force: true})). */
export function tempDir(prefix = "lettuce-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A temp vault of `notes` small notes in Notes/, each linking to the next (a ring); its path is pushed onto `dirs` for removal. */
export function ringVault(notes: number, dirs: string[]): string {
  const root = tempDir();
  dirs.push(root);
  mkdirSync(join(root, "Notes"));
  for (let i = 0; i < notes; i++) writeFileSync(join(root, "Notes", `N${i}.md`), `# N${i}\n\nNote ${i} links to [[N${(i + 1) % notes}]].\n`);
  return root;
}

/** Copy a vault into a fresh temp dir (never write into examples/ or ../shared). */
export function copyVault(src: string = EXAMPLE_VAULT): string {
  const dir = tempDir();
  cpSync(src, dir, { recursive: true, filter: (s) => !s.includes("/.lettuce") });
  return dir;
}

/** An SDK client connected over Streamable HTTP with a bearer token (close it when done). */
export async function connectClient(url: string, token: string, name = "lettuce-tests"): Promise<Client> {
  const c = new Client({ name, version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return c;
}

/** The JSON payload of a successful tool result (Lettuce returns one text part holding JSON). */
export function payload(res: any): any {
  if (res.isError) throw new Error(`tool failed (${res.kind}): ${res.content?.[0]?.text}`);
  return JSON.parse(res.content[0].text);
}

/**
 * Poll until `check` returns a truthy value or the deadline passes; returns that value.
 * For things that happen "soon" (watcher, spawned servers): never a fixed sleep.
 */
export async function waitFor<T>(check: () => T | Promise<T>, opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {}): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`Timed out waiting for ${opts.what ?? "condition"}${last ? `: ${(last as Error).message ?? last}` : ""}`);
    }
    await Bun.sleep(opts.intervalMs ?? 25);
  }
}

export interface TestServer {
  root: string;
  vault: VaultContext;
  running: RunningServer;
  url: string;
  tokens: Record<Scope, string>;
  client(scope?: Scope): Promise<Client>;
  /** Call a tool and return the parsed JSON payload; throws on isError. */
  call(name: string, args?: Record<string, unknown>, scope?: Scope): Promise<any>;
  /** Call a tool and return the raw result (for error cases). */
  callRaw(name: string, args?: Record<string, unknown>, scope?: Scope): Promise<any>;
  rpc(body: unknown, headers?: Record<string, string>): Promise<Response>;
  close(): Promise<void>;
}

export async function startTestServer(opts: { src?: string; root?: string; watch?: boolean } = {}): Promise<TestServer> {
  const root = opts.root ?? copyVault(opts.src);
  const vault = VaultContext.open(root);
  await vault.indexer.fullScan();
  if (opts.watch) vault.startWatching();
  const running = startHttpServer(vault, { port: 0, host: "127.0.0.1" });
  const tokens = {} as Record<Scope, string>;
  for (const scope of ["read", "propose", "write"] as Scope[]) {
    tokens[scope] = createToken(vault.stateDb, `test-${scope}-${Math.random().toString(36).slice(2, 8)}`, scope).token;
  }
  const clients: Client[] = [];
  const byScope = new Map<Scope, Client>();
  const client = async (scope: Scope = "write") => {
    const c = await connectClient(running.url, tokens[scope]);
    clients.push(c);
    return c;
  };
  const cached = async (scope: Scope) => {
    let c = byScope.get(scope);
    if (!c) {
      c = await client(scope);
      byScope.set(scope, c);
    }
    return c;
  };
  // The SDK client gives up on a request after 60 s by default; under CI load a first embedding pass can
  // take longer while the server works fine. Each test's own timeout still bounds a real hang.
  const callRaw = async (name: string, args: Record<string, unknown> = {}, scope: Scope = "write") =>
    (await cached(scope)).callTool({ name, arguments: args }, undefined, { timeout: 600_000 });
  return {
    root,
    vault,
    running,
    url: running.url,
    tokens,
    client,
    callRaw,
    async call(name, args = {}, scope = "write") {
      const res: any = await callRaw(name, args, scope);
      if (res.isError) throw new Error(`${name} failed (${res.kind}): ${res.content?.[0]?.text}`);
      return JSON.parse(res.content[0].text);
    },
    rpc(body, headers = {}) {
      return fetch(running.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${tokens.write}`, ...headers },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
    },
    async close() {
      for (const c of clients) await c.close().catch(() => {});
      await running.stop();
      vault.close();
      if (!opts.root) rmSync(root, { recursive: true, force: true });
    },
  };
}
