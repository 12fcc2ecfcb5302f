// MCP's cancellation utility (notifications/cancelled): a person pressing stop in a desktop client sends
// one for the call under way. The call was worked to its end before (a long poll parked for its whole
// timeout, a model call ran on) and its answer sent anyway. Now its tool sees the abort through its signal;
// over stdio a cancelled read gets no answer, over HTTP the request is answered at once. Calls are found by
// token and id, so one token cannot cancel another's.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { McpDispatcher, type Caller } from "../lib/server/mcp";
import { ALL_TOOLS } from "../tools";
import { BUN, MAIN } from "./helpers/cli";
import { copyVault, startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

const caller = (name: string): Caller => ({ token: { name, scope: "read" }, transport: "stdio" });
const poll = (id: number, cursor: unknown) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "await_directives", arguments: { cursor, timeout_ms: 20_000 } } });
const cancel = (requestId: unknown) => ({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId, reason: "stop pressed" } });
const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, Bun.sleep(ms).then(() => "still running" as const)]);

test("a cancelled call stops and gets no answer; another token's cancel of the same id does nothing", async () => {
  const mcp = new McpDispatcher(s.vault, ALL_TOOLS);
  const first: any = await mcp.handle({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "await_directives", arguments: { cursor: 0, timeout_ms: 1000 } } }, caller("a"));
  const cursor = JSON.parse(first.result.content[0].text).cursor;
  const parked = mcp.handle(poll(7, cursor), caller("a"));
  const other = mcp.handle(poll(7, cursor), caller("b"));
  await Bun.sleep(100);
  expect(await mcp.handle(cancel(7), caller("b"))).toBeNull(); // b's own call 7 is the one stopped
  expect(await within(other, 5000)).toBeNull();
  expect(await within(parked, 300)).toBe("still running");
  await mcp.handle(cancel(7), caller("a"));
  expect(await within(parked, 5000)).toBeNull();
  // Over HTTP the request is still answered (two clients sharing a token number their calls alike: one's late
  // cancel must not leave the other's request hanging), promptly, saying why.
  const http: Caller = { token: { name: "a", scope: "read" } };
  const viaHttp = mcp.handle(poll(8, cursor), http);
  await Bun.sleep(100);
  await mcp.handle(cancel(8), http);
  const answered: any = await within(viaHttp, 5000);
  expect(answered).not.toBe("still running");
  expect(answered.id).toBe(8);
  // The dispatcher goes on answering, and an id may be used again.
  const again: any = await mcp.handle({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "await_directives", arguments: { cursor: 0, timeout_ms: 1000 } } }, caller("a"));
  expect(again.result.isError ?? false).toBe(false);
});

test("through the server: the SDK client's abort of a call stops it there", async () => {
  const client = await s.client("read");
  const first: any = await client.callTool({ name: "await_directives", arguments: { cursor: 0, timeout_ms: 1000 } });
  const cursor = JSON.parse(first.content[0].text).cursor;
  const stop = new AbortController();
  const call = client.callTool({ name: "await_directives", arguments: { cursor, timeout_ms: 20_000 } }, undefined, { signal: stop.signal }).then(
    () => "answered",
    () => "aborted",
  );
  await Bun.sleep(300);
  const rows = async () => ((await s.call("query_audit_log", { tool: "await_directives", limit: 100 })) as unknown[]).length;
  const finished = await rows(); // the first call's row: the parked one has none until it ends
  stop.abort();
  expect(await call).toBe("aborted");
  // The server's side of the call ends too (its row in the audit log), not 20 s later.
  const deadline = Date.now() + 5000;
  while ((await rows()) === finished && Date.now() < deadline) await Bun.sleep(100);
  expect(await rows()).toBe(finished + 1);
});

test("over stdio: a cancelled long poll is not answered, and the process ends at once when stdin closes", async () => {
  const root = copyVault();
  const p = Bun.spawn([BUN, MAIN, "stdio", root], { stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  const lines: any[] = [];
  void (async () => {
    const dec = new TextDecoder();
    let buf = "";
    for await (const chunk of p.stdout) {
      buf += dec.decode(chunk, { stream: true });
      for (let nl = buf.indexOf("\n"); nl !== -1; nl = buf.indexOf("\n")) {
        lines.push(JSON.parse(buf.slice(0, nl)));
        buf = buf.slice(nl + 1);
      }
    }
  })();
  const send = (m: unknown) => p.stdin.write(JSON.stringify(m) + "\n");
  const answer = async (id: number) => {
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const hit = lines.find((l) => l.id === id);
      if (hit) return hit;
      await Bun.sleep(20);
    }
    throw new Error(`no answer to ${id}`);
  };
  try {
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
    await answer(1);
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "await_directives", arguments: { cursor: 0, timeout_ms: 1000 } } });
    const cursor = JSON.parse((await answer(2)).result.content[0].text).cursor;
    send(poll(3, cursor));
    await Bun.sleep(200);
    send(cancel(3));
    send({ jsonrpc: "2.0", id: 4, method: "ping" });
    await answer(4);
    const started = Date.now();
    p.stdin.end();
    await p.exited;
    // Without the cancel the parked poll held the process past stdin's end until its 2 s grace ran out.
    expect(Date.now() - started).toBeLessThan(1500);
    expect(lines.some((l) => l.id === 3)).toBe(false);
  } finally {
    p.kill();
    rmSync(root, { recursive: true, force: true });
  }
}, 60_000);
