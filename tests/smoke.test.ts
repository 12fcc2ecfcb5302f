import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

test("tools/list and a search through the SDK client", async () => {
  const c = await s.client("read");
  const { tools } = await c.listTools();
  expect(tools.map((t) => t.name)).toContain("search");
  const res = await s.call("search", { query: "cozum" });
  expect(res.items.length).toBeGreaterThan(0);
  const err: any = await s.callRaw("read_note", { path: "../etc/passwd" });
  expect(err.isError).toBe(true);
  expect(err.kind).toBe("path-invalid");
});
