// Item 13 of the hardening issue: JSON-RPC ids, media types and batches on
// the real HTTP endpoint. A request with a bad id is refused (never run
// silently), a big id comes back byte for byte, wrong Content-Type / Accept
// get 415 / 406, and batches are refused where the protocol has none and
// capped where it has them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { MAX_BATCH } from "../lib/server/jsonrpc";
import { BUN, MAIN } from "./helpers/cli";
import { copyVault, REPO, startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const writeCall = (id: unknown, path: string) =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"tools/call","params":{"name":"write_note","arguments":{"path":${JSON.stringify(path)},"content":"# x\\n"}}}`;

describe("ids", () => {
  test("null, boolean, array and object ids get -32600 and the call is not run", async () => {
    const cases: Record<string, unknown> = { null: null, true: true, false: false, array: [1], object: { a: 1 } };
    for (const [what, id] of Object.entries(cases)) {
      const path = `Inbox/bad-id-${what}.md`;
      const res = await s.rpc(writeCall(id, path));
      expect(res.status, what).toBe(200);
      const json: any = await res.json();
      expect(json, what).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
      expect(json.error.message).toMatch(/id/);
      expect(existsSync(join(s.root, path)), `${what}: must not have run`).toBe(false);
    }
    // A notification (no id at all) still gets 202 and no body.
    const note = await s.rpc({ jsonrpc: "2.0", method: "notifications/initialized" });
    expect(note.status).toBe(202);
  });

  // Not a JSON-RPC message at all: an input the server cannot accept, which the transport answers with an HTTP
  // error status (the MCP SDK's server gives 400); it was 200 with the same -32600.
  test("a body that is not a JSON object (null, a number, a string, true) gets 400 and -32600", async () => {
    for (const body of ["null", "42", '"ping"', "true"]) {
      const res = await s.rpc(body);
      expect(res.status, body).toBe(400);
      expect(await res.json(), body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
    }
  });

  test("ids are echoed exactly as sent: integers past 2^53, negative, fractional, strings", async () => {
    for (const raw of ["12345678901234567890", "9007199254740993", "-98765432109876543210", "1.5", "0", "42", '"abc"', '"12345678901234567890"']) {
      const res = await s.rpc(`{"jsonrpc":"2.0","id":${raw},"method":"ping"}`);
      const text = await res.text();
      expect(text, raw).toContain(`"id":${raw}`);
      expect(JSON.parse(text).result, raw).toEqual({});
    }
    // Another spelling of a number JS holds exactly comes back as the same number.
    expect(((await (await s.rpc(`{"jsonrpc":"2.0","id":1e3,"method":"ping"}`)).json()) as any).id).toBe(1000);
  });

  test("a big id on a search answer (put together from the read worker's ready-made text) is echoed too", async () => {
    const res = await s.rpc(`{"jsonrpc":"2.0","id":123456789012345678901,"method":"tools/call","params":{"name":"search","arguments":{"query":"lettuce \\"soup\\"","limit":2}}}`);
    const text = await res.text();
    expect(text.startsWith('{"jsonrpc":"2.0","id":123456789012345678901,"result":')).toBe(true);
    const page = JSON.parse(JSON.parse(text).result.content[0].text);
    expect(page).toMatchObject({ offset: 0, limit: 2 });
    expect(page.items[0].path).toBe("Recipes/Lettuce Soup.md");
  });

  test("a big id inside a batch and on a tool error is echoed too", async () => {
    const res = await s.rpc(`[{"jsonrpc":"2.0","id":123456789012345678901,"method":"ping"},{"jsonrpc":"2.0","id":98765432109876543211,"method":"nope"}]`);
    const text = await res.text();
    expect(text).toContain('"id":123456789012345678901');
    expect(text).toContain('"id":98765432109876543211');
  });
});

describe("media types", () => {
  test("a Content-Type other than JSON gets 415", async () => {
    for (const ct of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""]) {
      const res = await s.rpc({ jsonrpc: "2.0", id: 1, method: "ping" }, { "content-type": ct });
      expect(res.status, ct || "(empty)").toBe(415);
    }
    for (const ct of ["application/json", "application/json; charset=utf-8", "Application/JSON"]) {
      const res = await s.rpc({ jsonrpc: "2.0", id: 1, method: "ping" }, { "content-type": ct });
      expect(res.status, ct).toBe(200);
    }
  });

  test("an Accept without JSON or event-stream gets 406", async () => {
    for (const accept of ["text/html", "image/png, text/plain"]) {
      const res = await s.rpc({ jsonrpc: "2.0", id: 1, method: "ping" }, { accept });
      expect(res.status, accept).toBe(406);
    }
    for (const accept of ["application/json", "text/event-stream", "application/json, text/event-stream", "*/*"]) {
      const res = await s.rpc({ jsonrpc: "2.0", id: 1, method: "ping" }, { accept });
      expect(res.status, accept).toBe(200);
    }
  });

  test("the checks come after authentication: no token is still a flat 401", async () => {
    const res = await fetch(s.url, { method: "POST", headers: { "content-type": "text/plain" }, body: "x" });
    expect(res.status).toBe(401);
  });
});

describe("batches", () => {
  const pings = (n: number) => Array.from({ length: n }, (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "ping" }));

  test("refused for protocol versions without batching (2025-06-18 and later)", async () => {
    for (const v of ["2025-06-18", "2025-11-25"]) {
      const res = await s.rpc(pings(2), { "mcp-protocol-version": v });
      expect(res.status, v).toBe(400);
      const json: any = await res.json();
      expect(json).toMatchObject({ id: null, error: { code: -32600 } });
      expect(json.error.message).toMatch(/batch/i);
    }
    // The same batch under 2025-03-26 (or with no header, which means 2025-03-26) runs.
    for (const headers of [{ "mcp-protocol-version": "2025-03-26" }, {}] as Record<string, string>[]) {
      const res = await s.rpc(pings(2), headers);
      expect(res.status).toBe(200);
      expect(((await res.json()) as any[]).map((r) => r.id)).toEqual([1, 2]);
    }
  });

  test(`capped at ${MAX_BATCH} messages; a full batch runs every item in order`, async () => {
    const over = await s.rpc(pings(MAX_BATCH + 1));
    expect(over.status).toBe(400);
    expect(((await over.json()) as any).error.message).toMatch(String(MAX_BATCH));
    const calls = Array.from({ length: MAX_BATCH }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "search", arguments: { query: "lettuce", limit: 1 } } }));
    const res = await s.rpc(calls);
    const out = (await res.json()) as any[];
    expect(out.map((r) => r.id)).toEqual(calls.map((c) => c.id));
    for (const r of out) expect(JSON.parse(r.result.content[0].text).items.length).toBe(1);
  });

  test("a ping sent while a batch runs is answered before the batch finishes", async () => {
    const calls = Array.from({ length: MAX_BATCH }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "lint", arguments: {} } }));
    const order: string[] = [];
    const batch = s.rpc(calls).then(async (r) => {
      await r.text();
      order.push("batch");
    });
    await Bun.sleep(5);
    const ping = s.rpc({ jsonrpc: "2.0", id: "p", method: "ping" }).then(async (r) => {
      expect(((await r.json()) as any).result).toEqual({});
      order.push("ping");
    });
    await Promise.all([batch, ping]);
    expect(order).toEqual(["ping", "batch"]);
  });
});

describe("stdio", () => {
  test("lines split by bytes: characters across chunks, CRLF, and a line past the cap dropped as it comes", async () => {
    const { PassThrough } = await import("node:stream");
    const { boundedLines } = await import("../lib/server/stdio");
    const input = new PassThrough();
    const got: string[] = [];
    let tooLong = 0;
    const done = boundedLines(input, 16, (l) => got.push(l), () => tooLong++);
    const euro = Buffer.from("€"); // three bytes, split over two chunks
    input.write(Buffer.concat([Buffer.from("a"), euro.subarray(0, 1)]));
    input.write(Buffer.concat([euro.subarray(1), Buffer.from("b\r\nsecond\n")]));
    input.write("x".repeat(10));
    input.write("x".repeat(10)); // past 16 bytes: dropped
    input.write("xx\nafter\ntail");
    input.end();
    await done;
    expect(got).toEqual(["a€b\r", "second", "after", "tail"]);
    expect(tooLong).toBe(1);
  });

  test("a line without end is refused without being held in memory", async () => {
    const root = copyVault();
    try {
      const proc = Bun.spawn([BUN, MAIN, "stdio", root], { cwd: REPO, stdin: "pipe", stdout: "pipe", stderr: "pipe", env: { ...process.env, LETTUCE_EMBED_PROVIDER: "none" } });
      const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${proc.pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
      proc.stdin.write(`{"jsonrpc":"2.0","id":1,"method":"ping"}\n`);
      await proc.stdin.flush();
      await Bun.sleep(500);
      const base = rss();
      let peak = base;
      const mb = "x".repeat(1 << 20);
      for (let i = 0; i < 160; i++) {
        proc.stdin.write(mb);
        await proc.stdin.flush();
        if (i % 16 === 0) peak = Math.max(peak, rss());
      }
      proc.stdin.write(`\n{"jsonrpc":"2.0","id":"after","method":"ping"}\n`);
      await proc.stdin.end();
      peak = Math.max(peak, rss());
      const out = (await new Response(proc.stdout).text()).trim().split("\n").map((l) => JSON.parse(l));
      expect(out.find((m: any) => m.error)?.error).toMatchObject({ code: -32700, message: expect.stringMatching(/longer than/) });
      expect(out.find((m: any) => m.id === "after")).toMatchObject({ result: {} });
      expect(peak - base).toBeLessThan(100); // held whole, 160 MB of text was 300+ MB
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);

  // The same rules over `lettuce stdio`, one message per line: a big id is echoed as written,
  // a line that is not JSON gets -32700 and a bad id -32600 (not silence), and answers to what
  // was asked before stdin closed still arrive.
  test("big ids are echoed exactly, bad lines and bad ids are answered, nothing is dropped", async () => {
    const root = copyVault();
    try {
      const proc = Bun.spawn([BUN, MAIN, "stdio", root, "--scope", "write"], { cwd: REPO, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
      const lines = [
        `{"jsonrpc":"2.0","id":123456789012345678901,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
        `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
        `{not json`,
        writeCall(null, "Inbox/stdio-null-id.md"),
        `{"jsonrpc":"2.0","id":98765432109876543211,"method":"tools/call","params":{"name":"search","arguments":{"query":"lettuce","limit":1}}}`,
        `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
        `{"jsonrpc":"2.0","id":"last","method":"ping"}`,
      ];
      proc.stdin.write(lines.join("\n") + "\n");
      await proc.stdin.end();
      const out = (await new Response(proc.stdout).text()).trim().split("\n");
      expect(await proc.exited).toBe(0);
      expect(out.length).toBe(6); // everything but the notification
      const find = (re: RegExp) => out.find((l) => re.test(l));
      expect(find(/"id":123456789012345678901,"result":\{"protocolVersion":"2025-06-18"/)).toBeDefined();
      expect(find(/^\{"jsonrpc":"2.0","id":98765432109876543211,"result":/)).toBeDefined();
      const errors = out.map((l) => JSON.parse(l)).filter((m: any) => m.error);
      expect(errors.map((m: any) => m.error.code).sort()).toEqual([-32700, -32600, -32600].sort());
      expect(errors.find((m: any) => m.error.code === -32600 && /batch/.test(m.error.message))).toBeDefined(); // no batches in 2025-06-18
      expect(find(/"id":"last","result":\{\}/)).toBeDefined();
      expect(existsSync(join(root, "Inbox/stdio-null-id.md"))).toBe(false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

// The soak audit of 2026-12-05: every client that went away halfway through sending its body left a
// 33-line DOMException stack in the server's log (411 of them, most of a 45-minute log).
test("a client that disconnects while sending its body leaves no stack in the server's log", async () => {
  const { copyVault } = await import("./helpers/server");
  const { freePort, runLettuce, spawnLettuce } = await import("./helpers/cli");
  const root = copyVault();
  const token = JSON.parse((await runLettuce(["token", "create", root, "--scope", "read", "--name", "half", "--json"])).stdout).token as string;
  const port = freePort();
  const srv = spawnLettuce(["serve", root, "--port", String(port)], { env: { LETTUCE_EMBED_PROVIDER: "none" } });
  try {
    await srv.waitForStdout(/Index current/, 30_000);
    for (let i = 0; i < 3; i++) {
      const sock = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
      sock.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: 5000\r\n\r\n{"jsonrpc"`);
      await Bun.sleep(200);
      sock.end();
    }
    await Bun.sleep(500);
    // The server still answers, and said nothing of the clients that left.
    const ok = await fetch(`http://127.0.0.1:${port}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(ok.status).toBe(200);
    expect(srv.stderr()).not.toContain("DOMException");
    expect(srv.stderr()).not.toMatch(/\n\s+at /);
  } finally {
    await srv.stop();
  }
}, 60_000);
