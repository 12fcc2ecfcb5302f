// A token that asks for a big note's answer many times over and never reads the answers must not fill
// the server's memory (lib/server/answer-budget.ts): its note-sized answers wait for its own earlier ones
// to be read, other tokens do not wait for it, and the reservations come back when the client goes away.
// Through a real `lettuce serve` in its own process, with sockets that never read.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AnswerBudget, SMALL_ANSWER_BYTES } from "../lib/server/answer-budget";
import { openStateDb } from "../lib/store/state-db";
import { createToken } from "../lib/store/tokens";
import { httpMcp, servedVault, type ServedVault } from "./helpers/cli";
import { copyVault } from "./helpers/server";
import { neverReads } from "./helpers/raw-http";

setDefaultTimeout(120_000);

const MB = 1024 * 1024;

describe("the answer budget on its own", () => {
  test("grants within the budget, queues past it in order, lets an oversize answer through alone, and forgets a waiter that gave up", async () => {
    const budget = new AnswerBudget(() => 10 * MB);
    const a = budget.ledger("t");
    const b = budget.ledger("t");
    const c = budget.ledger("t");
    await a.reserve(6 * MB);
    await b.reserve(3 * MB);
    expect(budget.heldBy("t")).toBe(9 * MB);
    // Past the budget: waits until a gives its bytes back.
    let cGot = false;
    const cWait = c.reserve(2 * MB).then(() => (cGot = true));
    await Bun.sleep(20);
    expect(cGot).toBe(false);
    // Another token is not held up by this one.
    await budget.ledger("other").reserve(9 * MB);
    // A waiter that gives up leaves the queue; the one behind it is not stuck behind it.
    const gaveUp = new AbortController();
    const d = budget.ledger("t");
    const dWait = d.reserve(2 * MB, gaveUp.signal).then(
      () => "granted",
      () => "gave up",
    );
    gaveUp.abort(new Error("client went away"));
    expect(await dWait).toBe("gave up");
    a.release();
    await cWait;
    expect(budget.heldBy("t")).toBe(5 * MB);
    // Idempotent.
    a.release();
    expect(budget.heldBy("t")).toBe(5 * MB);
    b.release();
    c.release();
    expect(budget.heldBy("t")).toBe(0);
    // An answer bigger than the whole budget goes when the token holds nothing else.
    const big = budget.ledger("t");
    await big.reserve(50 * MB);
    expect(budget.heldBy("t")).toBe(50 * MB);
    big.release();
    // Small answers are not reserved at all.
    const small = budget.ledger("t");
    await small.reserve(SMALL_ANSWER_BYTES - 1);
    small.hold(SMALL_ANSWER_BYTES - 1);
    expect(small.bytes).toBe(0);
  });

  test("an answer made is counted whatever the budget, and the door stays shut while the token is at its budget", async () => {
    const budget = new AnswerBudget(() => 10 * MB);
    const made = budget.ledger("t");
    made.hold(12 * MB);
    expect(budget.heldBy("t")).toBe(12 * MB);
    let opened = false;
    const next = budget.ledger("t");
    const door = next.door().then(() => (opened = true));
    await Bun.sleep(20);
    expect(opened).toBe(false);
    // The door lets nothing in that it holds: a call that makes a small answer never streams.
    made.release();
    await door;
    expect(next.bytes).toBe(0);
    // Under the budget the door is open at once.
    const third = budget.ledger("t");
    third.hold(2 * MB);
    await budget.ledger("t").door();
  });
});

/** Server memory as the kernel counts it (MB). */
function rssMb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
}

/** `lettuce serve` on a copy of the example vault that `prepare` adds to, with a read token and another token's client. */
async function servedWithOther(prepare: (root: string) => void): Promise<{ served: ServedVault; other: ReturnType<typeof httpMcp> }> {
  const root = copyVault();
  prepare(root);
  const db = openStateDb(root);
  const otherToken = createToken(db, "other-agent", "read").token;
  db.close();
  const served = await servedVault(root, { scope: "read" });
  return { served, other: httpMcp(served.port, otherToken) };
}

const onLinux = process.platform === "linux";

describe.if(onLinux)("answers that are never read, through a real server", () => {
  let served: ServedVault;
  let other: ReturnType<typeof httpMcp>;
  let big: string;
  let root: string;
  beforeAll(async () => {
    ({ served, other } = await servedWithOther((dir) => {
      root = dir;
      // 24 MB of plain text: a person's log, a note like any other (notes go up to 64 MiB).
      big = "# Big log\n\n" + "2026-12-06 12:00:01 the quick brown fox jumps over the lazy dog\n".repeat(Math.ceil((24 * MB) / 64));
      writeFileSync(join(dir, "Big log.md"), big);
      // Pairs of UTF-16 units on both sides of every 1 MiB chunk boundary: one note or the other has a pair cut by it.
      for (const lead of ["", "a"]) writeFileSync(join(dir, `Faces${lead.length}.md`), `${lead}# Faces\n\n${"😀".repeat(800_000)}\n`);
    }));
  });
  afterAll(async () => {
    await served?.close();
  });

  test("sixteen never-read answers of a 24 MB note hold one token's budget, not sixteen answers; other tokens read it meanwhile, and the budget comes back when the sockets close", async () => {
    const pid = served.server.proc.pid;
    const before = rssMb(pid);
    const sockets = await Promise.all(Array.from({ length: 16 }, (_, i) => neverReads(`http://127.0.0.1:${served.port}/mcp`, served.token, i + 1, "read_note", { path: "Big log.md" })));
    try {
      await Bun.sleep(4000);
      const grown = rssMb(pid) - before;
      // Sixteen answers of 24 MB each, held as text and as bytes, grew it by ~890 MB (measured without the budget);
      // the budget lets two be made (64 MB) while the rest wait.
      expect(grown).toBeLessThan(400);
      // Another token is not held up: it reads the whole note.
      const t0 = performance.now();
      const got = await other.call("read_note", { path: "Big log.md" });
      expect(got.content).toBe(big);
      expect(performance.now() - t0).toBeLessThan(20_000);
      // The server answers the stalled token too (its further tool calls wait behind its own, as any flood's do).
      const p0 = performance.now();
      expect((await served.mcp.ping()).result).toEqual({});
      expect(performance.now() - p0).toBeLessThan(2000);
    } finally {
      for (const s of sockets) s.destroy();
    }
    // Its reservations come back once those clients are gone: the same token reads the big note again, at once.
    const a0 = performance.now();
    const again = await served.mcp.call("read_note", { path: "Big log.md" });
    expect(again.content).toBe(big);
    expect(performance.now() - a0).toBeLessThan(10_000);
  });

  test("a streamed answer arrives whole: the same text, no pair of UTF-16 units cut at a chunk's edge", async () => {
    for (const n of [0, 1]) {
      const path = `Faces${n}.md`;
      const file = readFileSync(join(root, path), "utf8");
      const [a, b] = await Promise.all([other.call("read_note", { path }), other.call("get_page", { pageId: path })]);
      expect(a.content).toBe(file);
      expect(a.content.includes("\uFFFD")).toBe(false);
      expect(b.content.includes("\uFFFD")).toBe(false);
      expect(b.content.endsWith(`${"😀".repeat(10)}\n`)).toBe(true);
    }
  });
});

describe.if(onLinux)("answers that no tool reserves for, never read, through a real server", () => {
  let served: ServedVault;
  let other: ReturnType<typeof httpMcp>;
  beforeAll(async () => {
    // 4 MB that no tool reserves for before reading (an attachment): counted once its answer is made.
    ({ served, other } = await servedWithOther((dir) => writeFileSync(join(dir, "assets/blob.bin"), randomBytes(4 * MB))));
  });
  afterAll(async () => {
    await served?.close();
  });

  test("96 never-read attachments hold the token's budget and a few calls' worth, not 96 answers", async () => {
    const pid = served.server.proc.pid;
    const before = rssMb(pid);
    const sockets = await Promise.all(Array.from({ length: 96 }, (_, i) => neverReads(`http://127.0.0.1:${served.port}/mcp`, served.token, i + 1, "read_attachment", { path: "assets/blob.bin" })));
    try {
      await Bun.sleep(4000);
      // Each answer is 5.6 MB of base64 in JSON: 96 of them held ~500 MB (measured without the count; ~75 MB with it).
      expect(rssMb(pid) - before).toBeLessThan(250);
      const got = await other.call("read_attachment", { path: "assets/blob.bin" });
      expect(got.size).toBe(4 * MB);
    } finally {
      for (const s of sockets) s.destroy();
    }
    const again = await served.mcp.call("read_attachment", { path: "assets/blob.bin" });
    expect(again.size).toBe(4 * MB);
  });
});
