// A `.base` file far past the size a base may have (32 KB) is invalid and never parsed; the change journal
// used to hash it by reading it whole at every catch-up and every index pass that named it (a hostile 1 GB
// file: a gigabyte read each time, on the request thread). Bytes read are counted from /proc/self/io.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { closeSync, ftruncateSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";

const GB = 1024 ** 3;
const bytesRead = () => Number(/^rchar: (\d+)$/m.exec(readFileSync("/proc/self/io", "utf8"))![1]);
/** A sparse file: its size without its bytes on disk. */
function sparse(path: string, size: number): void {
  const fd = openSync(path, "w");
  ftruncateSync(fd, size);
  closeSync(fd);
}

describe("an oversized .base in the vault", () => {
  let s: TestServer;
  let root: string;
  beforeAll(async () => {
    root = tempDir();
    writeFileSync(join(root, "Note.md"), "# Note\n\nhello\n");
    sparse(join(root, "Huge.base"), GB);
    s = await startTestServer({ root });
  }, 60_000);
  afterAll(async () => {
    await s?.close();
    rmSync(root, { recursive: true, force: true });
  });

  test("is journaled as a database without being read, and a change to it is still seen", async () => {
    const before = bytesRead();
    const first = await s.call("get_changes_since", {}, "read");
    expect(first.changes.map((c: any) => [c.id, c.type])).toContainEqual(["Huge.base", "database"]);
    const schema = await s.callRaw("get_database_schema", { databaseId: "Huge.base" }, "read");
    expect(schema.isError).toBe(true);
    expect(JSON.parse(schema.content[0].text).kind).toBe("invalid-base");
    expect(bytesRead() - before).toBeLessThan(64 * 1024 * 1024);

    sparse(join(root, "Huge.base"), GB + 1);
    await s.vault.indexer.update(["Huge.base"]);
    const again = await s.call("get_changes_since", { cursor: first.nextCursor }, "read");
    // (Items recorded within the cursor's own second come again: the feed is at-least-once there.)
    expect(again.changes.map((c: any) => [c.id, c.changeType])).toContainEqual(["Huge.base", "updated"]);
    expect(bytesRead() - before).toBeLessThan(64 * 1024 * 1024);
  });
});
