// A vault with hundreds of pending directives and a long log.md: the lists read only the page they answer
// (pending_directives' limit, /api/work's first 100, a worker's await_directives past others' leases), and
// what they return is the page the whole list would give, leases and duplicate-text keys included.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";
import { loginSession, type WebSession } from "./web-helpers";

setDefaultTimeout(60_000);

const NOTES = 150;
const where = (d: { path: string; line: number }) => `${d.path}:${d.line}`;

describe("many directives", () => {
  let s: TestServer;
  let web: WebSession;
  beforeAll(async () => {
    const root = tempDir();
    mkdirSync(join(root, "Tasks"));
    // Each note holds the same directive text twice (their keys differ only by which copy they are) and one other.
    for (let i = 0; i < NOTES; i++) {
      const n = String(i).padStart(3, "0");
      writeFileSync(join(root, "Tasks", `T${n}.md`), `# T${n}\n\n> [!ai] Tidy this\n\ntext\n\n> [!ai] Tidy this\n\n> [!ai] Summarise ${n}\n`);
    }
    const days = Array.from({ length: 400 }, (_, i) => `## [2026-${String(1 + (i % 12)).padStart(2, "0")}-${String(1 + (i % 28)).padStart(2, "0")}] ingest | Item ${i}\n`);
    writeFileSync(join(root, "log.md"), `# Log\n\n${days.join("\n")}`);
    s = await startTestServer({ root, watch: true });
    web = await loginSession(s.vault, s.url);
  });
  afterAll(() => s?.close());

  test("pending_directives with a limit is the first part of the whole list", async () => {
    const all = await s.call("pending_directives", { limit: 1000 });
    expect(all).toHaveLength(NOTES * 3);
    expect(await s.call("pending_directives", { limit: 7 })).toEqual(all.slice(0, 7));
    expect(await s.call("pending_directives", { path: "Tasks/T003.md", limit: 2 })).toEqual(all.slice(9, 11));
  });

  test("a worker asking for 2 past another's 5 leases gets the next 2, and /api/work shows the leases and the whole count", async () => {
    const all = await s.call("pending_directives", { limit: 1000 });
    const a = await s.call("await_directives", { cursor: 0, worker: "A", limit: 5 });
    expect(a.directives.map(where)).toEqual(all.slice(0, 5).map(where));
    const b = await s.call("await_directives", { cursor: 0, worker: "B", limit: 2 });
    expect(b.directives.map(where)).toEqual(all.slice(5, 7).map(where));
    // A sees its own leases first again.
    expect((await s.call("await_directives", { cursor: 0, worker: "A", limit: 5 })).directives.map(where)).toEqual(all.slice(0, 5).map(where));

    const res = await web.fetch("/api/work");
    const w = (await res.json()) as any;
    expect(w.directives.total).toBe(NOTES * 3);
    expect(w.directives.items.map(where)).toEqual(all.slice(0, 100).map(where));
    const holders = w.directives.items.slice(0, 8).map((d: any) => d.lease?.worker ?? null);
    expect(holders).toEqual(["A", "A", "A", "A", "A", "B", "B", null]);
  });

  test("the ledger is newest first, and a new entry comes first once log.md changes", async () => {
    const text = readFileSync(join(s.root, "log.md"), "utf8");
    const entries = [...text.matchAll(/^## \[(\S+)\] ingest \| (.+)$/gm)].map((m, i) => ({ date: m[1]!, title: m[2]!, i }));
    const expected = entries.sort((x, y) => (x.date === y.date ? y.i - x.i : x.date < y.date ? 1 : -1)).map((e) => e.title);
    const first = await s.call("recent_activity", { limit: 1000 });
    expect(first.entries.map((e: any) => e.title)).toEqual(expected);
    // Asked twice, the same (the sorted ledger is kept, not sorted again, and not changed by a filter).
    await s.call("recent_activity", { op: "ingest", since: "2026-06-01", limit: 3 });
    expect((await s.call("recent_activity", { limit: 1000 })).entries).toEqual(first.entries);
    writeFileSync(join(s.root, "log.md"), `${text}\n## [2026-12-31] compile | Newest\n`);
    await s.vault.indexer.update(["log.md"]);
    const after = await s.call("recent_activity", { limit: 2 });
    expect(after.entries.map((e: any) => e.title)).toEqual(["Newest", expected[0]]);
    expect((await s.call("get_vault_info")).liveness.lastLogDate).toBe("2026-12-31");
    const w = (await (await web.fetch("/api/work")).json()) as any;
    expect(w.log.items[0].title).toBe("Newest");
    expect(w.log.total).toBe(401);
  });
});
