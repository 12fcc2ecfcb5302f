// list_folders answers a plain array (the spec's shape), so a deep tree answers long paths: 8 chains of
// folders 1,800 deep are 14,400 folders and 26 MB of JSON. Serialised on the event loop, that answer held
// other callers up to 0.5 s (the review of 2026-12-07); the read worker hands it over as JSON text.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { longestStall } from "./helpers/event-loop";
import { copyVault, startTestServer, type TestServer } from "./helpers/server";

describe("list_folders of a very deep tree", () => {
  let s: TestServer;
  let root = "";
  beforeAll(async () => {
    root = copyVault();
    for (let c = 0; c < 8; c++) mkdirSync(join(root, `chain${c}`, ...Array.from({ length: 1800 }, () => "d")), { recursive: true });
    s = await startTestServer({ root });
  }, 120_000);
  afterAll(async () => {
    await s?.close();
    rmSync(root, { recursive: true, force: true });
  });

  test("the answer is whole, and built off the event loop", async () => {
    const ask = async () => {
      const res = await s.rpc({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_folders", arguments: {} } });
      return (await res.arrayBuffer()).byteLength;
    };
    await ask(); // the tree walked once; the worker keeps it
    const { result: bytes, stall } = await longestStall(ask);
    expect(bytes).toBeGreaterThan(20_000_000);
    expect(stall).toBeLessThan(100);
  }, 120_000);
});
