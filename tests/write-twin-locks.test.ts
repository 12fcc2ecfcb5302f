// Two creates at once of one name in two Unicode normalisations (Café.md composed, and decomposed as a Mac
// writes it) took two locks, each found no note, and both wrote: twin notes. The per-note lock folds names
// the way twin detection does.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { KeyedLock } from "../lib/write/atomic";
import { foldName } from "../lib/vault/paths";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

describe("one lock for every spelling of a note", () => {
  test("NFC and NFD spellings of one path wait on one lock", async () => {
    const locks = new KeyedLock();
    const release = await locks.acquire(["Inbox/Caf\u00e9.md"]);
    let second = false;
    const waiting = locks.acquire(["inbox/CAFE\u0301.md"]).then((r) => {
      second = true;
      return r;
    });
    await Bun.sleep(20);
    expect(second).toBe(false);
    release();
    (await waiting)();
    expect(second).toBe(true);
    expect(locks.size).toBe(0);
  });

  test("creates sent at once in both normalisations make one note; the other is already-exists", async () => {
    const names = ["Caf\u00e9", "R\u00e9sum\u00e9", "Na\u0303o chegou", "\u00c5ngstr\u00f6m", "Cr\u00e8me br\u00fbl\u00e9e"];
    for (const name of names) {
      const [nfc, nfd] = [name.normalize("NFC"), name.normalize("NFD")];
      const clients = await Promise.all([s.client("write"), s.client("write")]);
      const results: any[] = await Promise.all([
        clients[0]!.callTool({ name: "write_note", arguments: { path: `Inbox/${nfc}.md`, content: "composed\n" } }),
        clients[1]!.callTool({ name: "write_note", arguments: { path: `Inbox/${nfd}.md`, content: "decomposed\n" } }),
      ]);
      const failed = results.filter((r) => r.isError);
      expect(failed.length).toBe(1);
      expect(failed[0].content[0].text).toContain("already-exists");
      const onDisk = readdirSync(join(s.root, "Inbox")).filter((n) => foldName(n) === foldName(`${name}.md`));
      expect(onDisk.length).toBe(1);
    }
  });
});
