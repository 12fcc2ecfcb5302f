// A call's arguments are validated before the call waits its token's turn, so their size is bounded first:
// an 8 MB `edits: [1,1,…]` held the event loop for seconds and its -32602 message listed every item (287 MB
// and 4 GB of server memory from one request), and 50,000 filters took seconds to validate (the transport
// review of 2026-12-07). The spec's own kinds still answer within the bounds (too-many-edits past 100 edits).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_ARGUMENT_VALUES } from "../lib/tool-schema";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const call = async (name: string, args: unknown) => {
  const res = await s.rpc({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } });
  const text = await res.text();
  return { text, json: JSON.parse(text) };
};

describe("arguments past any real call's size", () => {
  test("a million invalid edits: one short -32602", async () => {
    const { text, json } = await call("apply_edits", { path: "Welcome.md", edits: Array(1_000_000).fill(1) });
    expect(json.error.code).toBe(-32602);
    expect(json.error.message).toContain(`more than ${MAX_ARGUMENT_VALUES} values`);
    expect(text.length).toBeLessThan(2_000);
  }, 30_000);

  test("50,000 filters of a wrong type: one short -32602", async () => {
    const filters: Record<string, unknown> = {};
    for (let i = 0; i < 50_000; i++) filters[`k${i}`] = { bad: i };
    const { text, json } = await call("query_database", { databaseId: "x.base", filters });
    expect(json.error.code).toBe(-32602);
    expect(text.length).toBeLessThan(2_000);
  }, 30_000);

  test("nesting 100,000 deep is counted without recursion", async () => {
    const deep = "[".repeat(100_000) + '"x"' + "]".repeat(100_000);
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":${deep}}}}`;
    const res = await s.rpc(body);
    const json: any = await res.json();
    expect(json.error?.code ?? json.result?.isError).toBeTruthy();
  }, 30_000);
});

describe("within the bound", () => {
  test("twenty invalid edits: the first ten spelled out, the rest counted", async () => {
    const { json } = await call("apply_edits", { path: "Welcome.md", edits: Array(20).fill(1) });
    expect(json.error.code).toBe(-32602);
    expect(json.error.message).toContain("and 10 more");
    expect(json.error.message.match(/✖/g)?.length).toBe(10);
  });

  test("150 well-formed edits are still the spec's too-many-edits", async () => {
    const edits = Array.from({ length: 150 }, (_, i) => ({ find: `nothing-${i}`, replace: "x" }));
    const { json } = await call("apply_edits", { path: "Welcome.md", edits });
    expect(json.result.isError).toBe(true);
    expect(json.result.kind).toBe("too-many-edits");
  });
});
