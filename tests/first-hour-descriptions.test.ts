// What tools/list says a write tool returns is what it returns: the fields
// named in each description's "Returns {…}" are in a real result (delete_note
// and move_note once claimed a new content hash they do not have).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
let described: Map<string, string>;
beforeAll(async () => {
  s = await startTestServer();
  const { tools } = await (await s.client("write")).listTools();
  described = new Map(tools.map((t) => [t.name, t.description ?? ""]));
});
afterAll(() => s?.close());

function claimed(tool: string): string[] {
  const m = /Returns \{([^}]*)\}/.exec(described.get(tool)!);
  expect(m, `${tool} names its result`).not.toBeNull();
  return m![1]!.split(",").map((f) => f.trim().split(/\s/)[0]!);
}

test("write_note, move_note and delete_note return the fields their descriptions name, and no hash for a deleted note", async () => {
  const w = await s.call("write_note", { path: "Inbox/Described.md", content: "# Described\n" });
  for (const f of claimed("write_note")) expect(w).toHaveProperty(f);
  const m = await s.call("move_note", { from: "Inbox/Described.md", to: "Inbox/Moved.md" });
  for (const f of claimed("move_note")) expect(m).toHaveProperty(f);
  const d = await s.call("delete_note", { path: "Inbox/Moved.md" });
  for (const f of claimed("delete_note")) expect(d).toHaveProperty(f);
  expect(claimed("delete_note")).not.toContain("hash");
  expect(d.hash ?? null).toBeNull();
});
