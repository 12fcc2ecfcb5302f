// A vault of 30,000 notes in its root folder (common in Zettelkasten vaults): each append_log listed the root
// twice on the server's one thread to find log.md (~150 ms a call), and each new note listed its folder to
// look for a twin in another letter case (file_page: three listings, up to 240 ms). The log is found in the
// index; a folder is listed off the event loop. A twin a person made a moment ago is still found.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { copyVault, startTestServer, tempDir, type TestServer } from "./helpers/server";
import { longestStall } from "./helpers/event-loop";

const NOTES = 30_000;

/** Until the server's own start-up work (recording 50,000 notes in the change journal) has let the loop be. */
async function quiet(): Promise<void> {
  for (let i = 0; i < 60; i++) if ((await longestStall(() => Bun.sleep(300))).stall < 15) return;
}

const stallOf = async (work: () => Promise<unknown>) => (await longestStall(work)).stall;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

describe("a vault of 30,000 notes in one folder", () => {
  let s: TestServer;
  beforeAll(async () => {
    const root = tempDir();
    for (let i = 0; i < NOTES; i++) writeFileSync(join(root, `202401${String(i).padStart(6, "0")} Zettel über Ideen ${i}.md`), `z ${i}\n`);
    writeFileSync(join(root, "Quelle.md"), "# Quelle\n");
    mkdirSync(join(root, "Warm"));
    s = await startTestServer({ root });
    // Every tool once first: the client connects, and modules load on first use.
    await s.call("append_log", { op: "query", title: "warm" });
    await s.call("file_page", { path: "Warm/Seite.md", title: "S", content: "c", citations: ["Quelle"] });
    await s.call("write_note", { path: "Warm/Notiz.md", content: "x\n" });
    await quiet();
  }, 120_000);
  afterAll(async () => {
    await s.close();
    rmSync(s.root, { recursive: true, force: true });
  });

  test("append_log, file_page and a new note hold no other caller", async () => {
    const stalls: Record<string, number[]> = { append_log: [], file_page: [], write_note: [] };
    for (let i = 0; i < 3; i++) {
      stalls.append_log!.push(await stallOf(() => s.call("append_log", { op: "query", title: `t${i}` })));
      stalls.file_page!.push(await stallOf(() => s.call("file_page", { path: `Seite ${i}.md`, title: `S${i}`, content: "c", citations: ["Quelle"] })));
      stalls.write_note!.push(await stallOf(() => s.call("write_note", { path: `Neue Notiz ${i}.md`, content: "x\n" })));
    }
    // Were 130-160 ms (append_log), 140-240 ms (file_page) and 55-90 ms (write_note); now about 10 ms each.
    const slow = Object.entries(stalls).filter(([, xs]) => median(xs) >= 40);
    expect(slow.map(([tool, xs]) => `${tool}: ${xs.map(Math.round).join(", ")} ms`)).toEqual([]);
    const log = readFileSync(join(s.root, "log.md"), "utf8");
    for (const t of ["warm", "t0", "t1", "t2", "S0", "S2"]) expect(log).toContain(`| ${t}\n`);
  });

  test("a twin a person made a moment ago, not yet indexed, is the note written", async () => {
    writeFileSync(join(s.root, "ÜBERSICHT.md"), "# the person's\n");
    const res = await s.call("write_note", { path: "übersicht.md", content: "replaced\n", overwrite: true });
    expect(res.path).toBe("ÜBERSICHT.md");
    expect(existsSync(join(s.root, "übersicht.md"))).toBe(false);
    expect(readFileSync(join(s.root, "ÜBERSICHT.md"), "utf8")).toBe("replaced\n");
  });

  test("the log a person renamed a moment ago, not yet re-indexed, is the one appended to", async () => {
    renameSync(join(s.root, "log.md"), join(s.root, "Log.md"));
    await s.call("append_log", { op: "query", title: "after the rename" });
    expect(readdirSync(s.root).filter((n) => n.toLowerCase() === "log.md")).toEqual(["Log.md"]);
    expect(readFileSync(join(s.root, "Log.md"), "utf8")).toContain("| after the rename\n");
  });
});

describe("a vault with no log yet", () => {
  let s: TestServer;
  beforeAll(async () => {
    const root = copyVault();
    rmSync(join(root, "log.md"));
    s = await startTestServer({ root });
  });
  afterAll(async () => {
    await s.close();
    rmSync(s.root, { recursive: true, force: true });
  });

  test("the log a person made a moment ago, in another letter case, is the one appended to", async () => {
    writeFileSync(join(s.root, "LOG.md"), "# Log\n\n## [2026-01-01] note | mine\n");
    await s.call("append_log", { op: "query", title: "the agent's" });
    expect(readdirSync(s.root).filter((n) => n.toLowerCase() === "log.md")).toEqual(["LOG.md"]);
    expect(readFileSync(join(s.root, "LOG.md"), "utf8")).toContain("| mine\n\n## [");
  });
});
