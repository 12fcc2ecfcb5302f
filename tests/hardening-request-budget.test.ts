// A token that opens many connections and sends each a request body but never its end must not fill the
// server's memory (lib/server/request-budget.ts): past its budget its requests are refused from their
// headers and their connections closed, other tokens are not held up, and the budget comes back when the
// connections go. Through a real `lettuce serve` in its own process, with raw sockets.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { declaredBodyBytes, MIN_CHARGE, RequestBudget } from "../lib/server/request-budget";
import { openStateDb } from "../lib/store/state-db";
import { createToken } from "../lib/store/tokens";
import { httpMcp, servedVault, type ServedVault } from "./helpers/cli";
import { copyVault } from "./helpers/server";
import { unfinishedBody, type UnfinishedBody } from "./helpers/raw-http";

setDefaultTimeout(120_000);

const MB = 1024 * 1024;

describe("the request budget on its own", () => {
  test("charges at least the floor, refuses past the budget, lets an oversize request in alone, and takes each charge back once", () => {
    const budget = new RequestBudget(() => 10 * MB);
    const a = budget.enter("t", 6 * MB)!;
    const b = budget.enter("t", 3 * MB)!;
    expect(budget.heldBy("t")).toBe(9 * MB);
    expect(budget.enter("t", 2 * MB)).toBeNull();
    // A request with no body still costs the floor: 16 of them fill the last megabyte.
    const small = Array.from({ length: MB / MIN_CHARGE }, () => budget.enter("t", 0));
    expect(small.every((leave) => leave !== null)).toBe(true);
    expect(budget.enter("t", 0)).toBeNull();
    // Another token is not refused for this one.
    expect(budget.enter("other", 9 * MB)).not.toBeNull();
    a();
    a();
    expect(budget.heldBy("t")).toBe(4 * MB);
    b();
    for (const leave of small) leave!();
    expect(budget.heldBy("t")).toBe(0);
    // A body bigger than the whole budget is let in when the token has nothing else in flight, and only then.
    const big = budget.enter("t", 50 * MB)!;
    expect(budget.enter("t", 0)).toBeNull();
    big();
    expect(budget.heldBy("t")).toBe(0);
  });

  test("a charge grows with what arrives, up to the budget unless the request is alone, and goes back whole", () => {
    const budget = new RequestBudget(() => 10 * MB);
    const a = budget.enter("t", 0)!;
    expect(budget.heldBy("t")).toBe(MIN_CHARGE);
    expect(a.grow(1000)).toBe(true);
    expect(budget.heldBy("t")).toBe(MIN_CHARGE);
    expect(a.grow(4 * MB)).toBe(true);
    const b = budget.enter("t", 5 * MB)!;
    expect(a.grow(6 * MB)).toBe(false);
    expect(budget.heldBy("t")).toBe(9 * MB);
    b();
    // Alone, it may grow past the budget, as it may enter past it.
    expect(a.grow(12 * MB)).toBe(true);
    a();
    expect(budget.heldBy("t")).toBe(0);
    expect(a.grow(MB)).toBe(false);
  });

  test("a request is charged what its headers say it will send", () => {
    const h = (o: Record<string, string>) => new Headers(o);
    expect(declaredBodyBytes(h({ "content-length": "1234" }), MB)).toBe(1234);
    // More than the scope allows is refused with 413 elsewhere; here it costs at most that.
    expect(declaredBodyBytes(h({ "content-length": String(50 * MB) }), MB)).toBe(MB);
    // Chunked: no length to go by; charged as it arrives (a grow of the charge).
    expect(declaredBodyBytes(h({ "transfer-encoding": "chunked" }), MB)).toBeNull();
    expect(declaredBodyBytes(h({ "content-length": "12, 12" }), MB)).toBe(MB);
    expect(declaredBodyBytes(h({}), MB)).toBe(0);
  });
});

/** Server memory as the kernel counts it (MB). */
function rssMb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
}

describe.if(process.platform === "linux")("request bodies that never end, through a real server", () => {
  let served: ServedVault;
  let other: ReturnType<typeof httpMcp>;
  let url: string;
  beforeAll(async () => {
    const root = copyVault();
    const db = openStateDb(root);
    const otherToken = createToken(db, "other-agent", "read").token;
    db.close();
    served = await servedVault(root, { scope: "read" });
    other = httpMcp(served.port, otherToken);
    url = `http://127.0.0.1:${served.port}/mcp`;
  });
  afterAll(async () => {
    await served?.close();
  });

  /** Open `n` unfinished requests of the served token one after another (as an attacker would), then let them land. */
  async function open(n: number, bytes: number, chunked = false): Promise<UnfinishedBody[]> {
    const held: UnfinishedBody[] = [];
    for (let i = 0; i < n; i++) held.push(await unfinishedBody(url, served.token, bytes, { chunked }));
    await Bun.sleep(3000);
    return held;
  }

  /** The refused ones: answered 429 with a JSON-RPC error and Retry-After, their connection closed by the server. */
  async function refused(held: UnfinishedBody[]): Promise<number> {
    const answers = await Promise.all(held.map((h) => Promise.race([h.answer, Bun.sleep(500).then(() => null)])));
    const no = answers.filter((a): a is string => a !== null && a.startsWith("HTTP/1.1 429"));
    for (const a of no) {
      expect(a).toMatch(/\r\nretry-after: 1\r\n/i);
      expect(JSON.parse(a.slice(a.indexOf("\r\n\r\n") + 4)).error.message).toMatch(/Too many requests of this token in flight/);
    }
    // Any other answer would mean a body that never ended was answered as if it had.
    expect(answers.filter((a) => a !== null && !a.startsWith("HTTP/1.1 429"))).toEqual([]);
    return no.length;
  }

  test("400 connections of one read token, each with 900 KB of a body that never ends, hold its budget, not 400 bodies; others go on, and the budget comes back when they close", async () => {
    const pid = served.server.proc.pid;
    const before = rssMb(pid);
    const held = await open(400, 900_000);
    try {
      // Without the budget these held ~460 MB until the connections idled out (120 s); the budget is 32 MB.
      expect(rssMb(pid) - before).toBeLessThan(150);
      // 37 bodies of 900 KB fit in 32 MiB; the rest are refused.
      expect(await refused(held)).toBe(400 - 37);
      // Another token is not held up.
      const t0 = performance.now();
      expect((await other.call("search", { query: "note" })).items.length).toBeGreaterThan(0);
      expect(performance.now() - t0).toBeLessThan(2000);
      // The flooding token itself is refused while its bodies hang (the ~250 KB left in its budget is too little).
      const res = await fetch(url, {
        method: "POST",
        headers: { authorization: `Bearer ${served.token}`, "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "search", arguments: { query: "x".repeat(400_000) } } }),
      });
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after")).toBe("1");
    } finally {
      for (const h of held) h.socket.destroy();
    }
    await Bun.sleep(500);
    expect((await served.mcp.ping()).result).toEqual({});
  });

  test("chunked bodies that never end are charged what they sent: at the floor 40 tiny ones all wait, 40 of 900 KB fill the budget", async () => {
    // Charged the most a read token may send (1 MB), 8 of the 40 tiny ones were refused; a chunked long-poll paid the same.
    const tiny = await open(40, 100, true);
    try {
      expect(await refused(tiny)).toBe(0);
    } finally {
      for (const h of tiny) h.socket.destroy();
    }
    await Bun.sleep(500);
    const pid = served.server.proc.pid;
    const before = rssMb(pid);
    const big = await open(40, 900_000, true);
    try {
      // 37 bodies of 900 KB fit in 32 MiB; the rest are refused as their bytes come in.
      expect(await refused(big)).toBeGreaterThanOrEqual(3);
      expect(rssMb(pid) - before).toBeLessThan(150);
    } finally {
      for (const h of big) h.socket.destroy();
    }
    await Bun.sleep(500);
    expect((await served.mcp.ping()).result).toEqual({});
  });
});
