// A client that streams its request bodies (Transfer-Encoding: chunked, no Content-Length) is charged
// against its token's request budget for what arrives, not the most its scope may send
// (lib/server/request-budget.ts): a write token's long-polls sent that way were charged 8 MB each, so
// the fifth in flight was refused. And what a refused client is told: HTTP 429 with Retry-After, and a
// JSON-RPC server error carrying kind rate-limited and retry_after_ms. Through a real server, with fetch.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startTestServer, type TestServer } from "./helpers/server";

setDefaultTimeout(60_000);

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" };

/** A body that fetch sends chunked: a stream, so no length is known up front. */
function streamed(text: string, pieces = 1): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  const size = Math.ceil(bytes.length / pieces);
  let at = 0;
  return new ReadableStream({
    pull(ctrl) {
      if (at >= bytes.length) return ctrl.close();
      ctrl.enqueue(bytes.subarray(at, at + size));
      at += size;
    },
  });
}

describe("chunked request bodies and the per-token request budget", () => {
  let s: TestServer;
  let cursor: number;
  const saved = process.env.LETTUCE_REQUEST_BYTES_PER_TOKEN;
  const post = (body: string | ReadableStream<Uint8Array>) =>
    fetch(s.url, { method: "POST", headers: { ...HEADERS, authorization: `Bearer ${s.tokens.write}` }, body, duplex: "half" } as RequestInit);
  const longPoll = (ms: number) => JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "await_directives", arguments: { cursor, timeout_ms: ms } } });

  beforeAll(async () => {
    s = await startTestServer();
    cursor = (await s.call("await_directives", { cursor: 0, timeout_ms: 1000 })).cursor;
  });
  afterAll(async () => {
    if (saved === undefined) delete process.env.LETTUCE_REQUEST_BYTES_PER_TOKEN;
    else process.env.LETTUCE_REQUEST_BYTES_PER_TOKEN = saved;
    await s?.close();
  });

  test("twelve long-polls of one write token sent chunked are all in flight at once", async () => {
    // Charged 8 MB each against 32 MB, four were let in and the rest answered 429.
    const answers = await Promise.all(Array.from({ length: 12 }, () => post(streamed(longPoll(1500))).then(async (r) => ({ status: r.status, body: (await r.json()) as any }))));
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
    for (const a of answers) expect(JSON.parse(a.body.result.content[0].text).timedOut).toBe(true);
  });

  test("a chunked body still counts what it sends: past the budget while others are in flight it is refused, alone it goes", async () => {
    process.env.LETTUCE_REQUEST_BYTES_PER_TOKEN = String(256 * 1024);
    try {
      const big = JSON.stringify({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "search", arguments: { query: "note", pad: "x".repeat(300 * 1024) } } });
      const parked = post(longPoll(1500));
      await Bun.sleep(200);
      const refused = await post(streamed(big, 10));
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toBe("1");
      expect((await parked).status).toBe(200);
      // Larger than the whole budget, with nothing else of the token in flight: let in (then judged on its own).
      const alone = await post(streamed(big, 10));
      expect(alone.status).toBe(200);
    } finally {
      delete process.env.LETTUCE_REQUEST_BYTES_PER_TOKEN;
    }
  });

  test("the refusal is a server error with kind rate-limited and retry_after_ms, beside Retry-After", async () => {
    // Three floors' worth: three requests of 64 KB or less, the fourth refused.
    process.env.LETTUCE_REQUEST_BYTES_PER_TOKEN = String(3 * 64 * 1024);
    try {
      const answers = await Promise.all(Array.from({ length: 4 }, () => post(longPoll(1500)).then(async (r) => ({ status: r.status, retry: r.headers.get("retry-after"), body: (await r.json()) as any }))));
      const no = answers.filter((a) => a.status === 429);
      expect(no.length).toBe(1);
      expect(no[0]!.retry).toBe("1");
      const error = no[0]!.body.error;
      // Not -32600 Invalid Request: the request was valid, and the same request sent again later succeeds.
      expect(error.code).toBe(-32000);
      expect(error.message).toMatch(/Too many requests of this token in flight/);
      expect(error.data).toEqual({ kind: "rate-limited", retry_after_ms: 1000 });
      expect(answers.filter((a) => a.status === 200).length).toBe(3);
    } finally {
      delete process.env.LETTUCE_REQUEST_BYTES_PER_TOKEN;
    }
  });

  test("a chunked body past what its scope may send is answered 413, as one with a Content-Length is", async () => {
    const readHeaders = { ...HEADERS, authorization: `Bearer ${s.tokens.read}` };
    const body = JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "search", arguments: { query: "x".repeat(1100 * 1024) } } });
    const res = await fetch(s.url, { method: "POST", headers: readHeaders, body: streamed(body, 20), duplex: "half" } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as any).error.message).toMatch(/the most a read token may send/);
    // And a small chunked body of that token is answered as usual.
    const ok = await fetch(s.url, { method: "POST", headers: readHeaders, body: streamed(JSON.stringify({ jsonrpc: "2.0", id: 10, method: "ping" }), 3), duplex: "half" } as RequestInit);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as any).result).toEqual({});
  });
});
