// Proposals end to end through the real server: a propose token's writes are
// validated and queued without touching the vault; the agent lists and
// withdraws its own; a person approves (applied through the write path,
// re-checked against the note as it is now) or rejects.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createToken } from "../lib/store/tokens";
import { listEdits } from "../lib/write/edits";
import { AGENT_DIFF_CHARS, MAX_PENDING_PROPOSALS, MAX_WITHDRAWN_KEPT } from "../lib/write/limits";
import { approveProposal, getProposal, listProposals, rejectProposal } from "../lib/write/proposals";
import { connectClient, payload, startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const file = (p: string) => readFileSync(join(s.root, p), "utf8");
const propose = (name: string, args: Record<string, unknown>) => s.call(name, args, "propose");
async function proposeFail(name: string, args: Record<string, unknown>) {
  const res: any = await s.callRaw(name, args, "propose");
  expect(res.isError).toBe(true);
  return res;
}

describe("propose → list → approve", () => {
  test("apply_edits with a propose token queues a proposal and leaves the note alone", async () => {
    const before = file("Recipes/Menemen.md");
    const edits0 = listEdits(s.vault.stateDb).length;
    const res = await propose("apply_edits", { path: "Recipes/Menemen.md", edits: [{ find: "# Menemen", replace: "# Menemen (Turkish eggs)" }] });
    expect(res.status).toBe("pending");
    expect(typeof res.proposalId).toBe("number");
    expect(res.diff).toContain("-");
    expect(res.diff).toContain("+");
    expect(file("Recipes/Menemen.md")).toBe(before);
    expect(listEdits(s.vault.stateDb).length).toBe(edits0);

    const mine = await propose("list_my_proposals", { status: "pending" });
    expect(mine.items.map((p: any) => p.proposalId)).toContain(res.proposalId);
    expect(mine.items[0].tool).toBe("apply_edits");

    const out = await approveProposal(s.vault, res.proposalId);
    expect(out.path).toBe("Recipes/Menemen.md");
    expect(file("Recipes/Menemen.md")).toBe(before.replace("# Menemen", "# Menemen (Turkish eggs)"));
    const read = await s.call("read_note", { path: "Recipes/Menemen.md" }, "read");
    expect(read.hash).toBe(out.hash);
    const after = await propose("list_my_proposals", { status: "approved" });
    const p = after.items.find((x: any) => x.proposalId === res.proposalId);
    expect(p.editId).toBe(out.editId);
    const edit = listEdits(s.vault.stateDb)[0]!;
    expect(edit.proposalId).toBe(res.proposalId);
    expect(edit.agent).toBe("lettuce-tests");
  });

  test("every write tool queues for a propose token", async () => {
    const snapshot = () => ({ log: file("log.md"), lettuce: file("Projects/Lettuce.md") });
    const before = snapshot();
    const calls: [string, Record<string, unknown>][] = [
      ["write_note", { path: "Inbox/proposed.md", content: "# Proposed\n" }],
      ["patch_section", { path: "Projects/Lettuce.md", heading: "Status", mode: "append", content: "Proposed line." }],
      ["file_page", { path: "Concepts/Proposed page.md", title: "Proposed page", content: "x", citations: ["Local First"] }],
      ["append_log", { op: "query", title: "Proposed log entry" }],
      ["move_note", { from: "Garden/Compost.md", to: "Garden/Compost heap.md" }],
      ["delete_note", { path: "Garden/Frost Dates.md" }],
      ["complete_directive", { path: "Inbox/Meeting Notes 2026-03-02.md", line: 23 }],
    ];
    for (const [name, args] of calls) {
      const res = await propose(name, args);
      expect(res.status).toBe("pending");
    }
    expect(snapshot()).toEqual(before);
    expect(existsSync(join(s.root, "Inbox/proposed.md"))).toBe(false);
    expect(existsSync(join(s.root, "Garden/Compost.md"))).toBe(true);
    expect(existsSync(join(s.root, "Garden/Frost Dates.md"))).toBe(true);
    expect(existsSync(join(s.root, "Concepts/Proposed page.md"))).toBe(false);
  });

  test("an approved move rewrites links through the same write path", async () => {
    const { items } = await propose("list_my_proposals", { status: "pending" });
    const move = items.find((p: any) => p.tool === "move_note");
    await approveProposal(s.vault, move.proposalId);
    expect(existsSync(join(s.root, "Garden/Compost heap.md"))).toBe(true);
    expect(file("index.md")).toContain("[[Garden/Compost heap|Compost]]");
  });
});

describe("validation, withdraw, reject, stale", () => {
  test("a proposal is validated like a write: bad edits and immutable paths are refused, not queued", async () => {
    const bad = await proposeFail("apply_edits", { path: "Recipes/Menemen.md", edits: [{ find: "no such text", replace: "x" }] });
    expect(bad.kind).toBe("edit-no-match");
    const imm = await proposeFail("write_note", { path: "sources/Growing Lettuce in Containers.md", content: "x", overwrite: true });
    expect(imm.kind).toBe("immutable-path");
    const none = await proposeFail("apply_edits", { path: "Recipes/Menemen.md", edits: [{ find: "(Turkish eggs)", replace: "(Turkish eggs)" }] });
    expect(none.kind).toBe("no-change");
  });

  test("withdraw: own pending proposals only", async () => {
    const res = await propose("write_note", { path: "Inbox/withdrawn.md", content: "x\n" });
    const other = createToken(s.vault.stateDb, "other-proposer", "propose").token;
    const c = await connectClient(s.url, other);
    try {
      const foreign: any = await c.callTool({ name: "withdraw_proposal", arguments: { proposalId: res.proposalId } });
      expect(foreign.isError).toBe(true);
      expect(foreign.kind).toBe("proposal-not-found");
      const theirs = payload(await c.callTool({ name: "list_my_proposals", arguments: {} }));
      expect(theirs.total).toBe(0);
    } finally {
      await c.close();
    }
    const w = await propose("withdraw_proposal", { proposalId: res.proposalId });
    expect(w.status).toBe("withdrawn");
    const again = await proposeFail("withdraw_proposal", { proposalId: res.proposalId });
    expect(again.kind).toBe("proposal-not-pending");
    await expect(approveProposal(s.vault, res.proposalId)).rejects.toMatchObject({ kind: "proposal-not-pending" });
    expect(existsSync(join(s.root, "Inbox/withdrawn.md"))).toBe(false);
  });

  // A propose token proposing 2 MiB notes and withdrawing them in a loop grew state.db 2.4 MB a call, for good.
  test("a withdrawn proposal keeps no arguments and a cut diff; a token keeps its newest withdrawn ones", async () => {
    const token = createToken(s.vault.stateDb, "loop-proposer", "propose");
    const c = await connectClient(s.url, token.token);
    try {
      const big = "A line of a long note that an agent proposes and takes back.\n".repeat(5_000); // ~300 KB
      const res = payload(await c.callTool({ name: "write_note", arguments: { path: "Inbox/taken back.md", content: big } }));
      expect(getProposal(s.vault.stateDb, res.proposalId)!.diff.length).toBeGreaterThan(200_000 - 1);
      payload(await c.callTool({ name: "withdraw_proposal", arguments: { proposalId: res.proposalId } }));
      const p = getProposal(s.vault.stateDb, res.proposalId)!;
      expect(p.status).toBe("withdrawn");
      expect(p.args).toEqual({});
      expect(p.diff.length).toBeLessThan(AGENT_DIFF_CHARS + 100);
      expect(p.diff).toContain("cut when the proposal was withdrawn");
      // Many more withdrawn than are kept (as if from a loop): the next withdrawal trims the oldest.
      const ins = s.vault.stateDb.query(
        `INSERT INTO proposals(created_at, token, agent, tool, path, args, base, summary, diff, status, decided_at)
         VALUES ('2026-01-01T00:00:00Z', ?, 'loop', 'write_note', 'x.md', '{}', '{}', 'x', 'x', 'withdrawn', '2026-01-01T00:00:00Z')`,
      );
      s.vault.stateDb.transaction(() => {
        for (let i = 0; i < MAX_WITHDRAWN_KEPT + 50; i++) ins.run("loop-proposer");
      })();
      const next = payload(await c.callTool({ name: "write_note", arguments: { path: "Inbox/taken back too.md", content: "x\n" } }));
      payload(await c.callTool({ name: "withdraw_proposal", arguments: { proposalId: next.proposalId } }));
      const mine = listProposals(s.vault.stateDb, { token: "loop-proposer", status: "withdrawn", limit: 1 });
      expect(mine.total).toBe(MAX_WITHDRAWN_KEPT);
      expect(mine.items[0]!.id).toBe(next.proposalId);
      expect(getProposal(s.vault.stateDb, res.proposalId)).toBeNull(); // the oldest went first
    } finally {
      await c.close();
    }
  });

  test("an agent gets a big proposal's diff cut, and a page of diffs ends early; the person sees it whole", async () => {
    const token = createToken(s.vault.stateDb, "big-proposer", "propose").token;
    const c = await connectClient(s.url, token);
    try {
      const big = "A line of a long note that an agent proposes to write.\n".repeat(20_000); // ~1.1 MB
      let receiptBytes = 0;
      for (let i = 0; i < 12; i++) {
        const res: any = await c.callTool({ name: "write_note", arguments: { path: `Inbox/big-${i}.md`, content: big } });
        receiptBytes = Math.max(receiptBytes, res.content[0].text.length);
      }
      expect(receiptBytes).toBeLessThan(12_000); // was 210 KB
      const page = payload(await c.callTool({ name: "list_my_proposals", arguments: { includeDiff: true, limit: 500 } }));
      expect(page.total).toBe(12);
      expect(page.truncated).toBe(true);
      expect(JSON.stringify(page).length).toBeLessThan(80_000);
      expect(page.items[0].diff).toContain("more characters; the person reviewing it sees the whole diff");
      const rest = payload(await c.callTool({ name: "list_my_proposals", arguments: { includeDiff: true, offset: page.items.length } }));
      expect(page.items.length + rest.items.length).toBeLessThanOrEqual(12);
      // The person's copy is whole (up to the 200,000 characters kept with a proposal).
      const stored = s.vault.stateDb.query("SELECT length(diff) AS n FROM proposals WHERE token = 'big-proposer' LIMIT 1").get() as { n: number };
      expect(stored.n).toBeGreaterThan(100_000);
    } finally {
      await c.close();
    }
  });

  test("a token with too many pending proposals is refused with too-many-proposals", async () => {
    const token = createToken(s.vault.stateDb, "busy-proposer", "propose").token;
    const ins = s.vault.stateDb.query(
      "INSERT INTO proposals(created_at, token, agent, tool, path, args, base, summary, diff, status) VALUES (?, 'busy-proposer', 'a', 'append_log', 'log.md', '{}', '{}', 's', '', 'pending')",
    );
    for (let i = 0; i < MAX_PENDING_PROPOSALS; i++) ins.run(new Date().toISOString());
    const c = await connectClient(s.url, token);
    try {
      const res: any = await c.callTool({ name: "append_log", arguments: { op: "query", title: "one more" } });
      expect(res.isError).toBe(true);
      expect(res.kind).toBe("too-many-proposals");
    } finally {
      await c.close();
    }
  });

  test("calls sent at once cannot take a token past its pending limit", async () => {
    // The limit was counted before the plan was awaited: eight calls at once all saw room for one more.
    const token = createToken(s.vault.stateDb, "racing-proposer", "propose").token;
    const ins = s.vault.stateDb.query(
      "INSERT INTO proposals(created_at, token, agent, tool, path, args, base, summary, diff, status) VALUES (?, 'racing-proposer', 'a', 'append_log', 'log.md', '{}', '{}', 's', '', 'pending')",
    );
    for (let i = 0; i < MAX_PENDING_PROPOSALS - 1; i++) ins.run(new Date().toISOString());
    const c = await connectClient(s.url, token);
    try {
      // move_note's plan yields to other callers while it reads the notes that link to the moved one.
      mkdirSync(join(s.root, "Racers"), { recursive: true });
      for (let i = 0; i < 8; i++) {
        writeFileSync(join(s.root, `Inbox/race-${i}.md`), `race ${i}\n`);
        writeFileSync(join(s.root, `Racers/linker-${i}.md`), `[[race-${i}]]\n${"words ".repeat(100_000)}\n[[race-${i}]]\n`);
      }
      await s.vault.indexer.fullScan();
      const results: any[] = await Promise.all(
        Array.from({ length: 8 }, (_, i) => c.callTool({ name: "move_note", arguments: { from: `Inbox/race-${i}.md`, to: `Inbox/raced-${i}.md` } })),
      );
      expect(results.filter((r) => !r.isError).length).toBe(1);
      expect(results.filter((r) => r.isError).every((r) => r.kind === "too-many-proposals")).toBe(true);
      const pending = s.vault.stateDb.query("SELECT count(*) AS n FROM proposals WHERE token = 'racing-proposer' AND status = 'pending'").get() as { n: number };
      expect(pending.n).toBe(MAX_PENDING_PROPOSALS);
    } finally {
      await c.close();
    }
  });

  test("reject records the reason and applies nothing", async () => {
    const res = await propose("write_note", { path: "Inbox/rejected.md", content: "x\n" });
    await rejectProposal(s.vault, res.proposalId, "not needed");
    const p = getProposal(s.vault.stateDb, res.proposalId)!;
    expect(p.status).toBe("rejected");
    expect(p.reason).toBe("not needed");
    const mine = await propose("list_my_proposals", { status: "rejected" });
    expect(mine.items[0].reason).toBe("not needed");
    expect(existsSync(join(s.root, "Inbox/rejected.md"))).toBe(false);
  });

  test("a stale proposal is a conflict, and stays pending", async () => {
    const res = await propose("apply_edits", { path: "Recipes/Caesar Salad.md", edits: [{ find: "# Caesar Salad", replace: "# Cesar Salad" }] });
    const p0 = file("Recipes/Caesar Salad.md");
    writeFileSync(join(s.root, "Recipes/Caesar Salad.md"), p0 + "\nA person's edit.\n");
    await expect(approveProposal(s.vault, res.proposalId)).rejects.toMatchObject({ kind: "conflict" });
    expect(file("Recipes/Caesar Salad.md")).toBe(p0 + "\nA person's edit.\n");
    expect(getProposal(s.vault.stateDb, res.proposalId)!.status).toBe("pending");
  });

  test("a create proposal whose path was taken meanwhile is a conflict", async () => {
    const res = await propose("write_note", { path: "Inbox/raced.md", content: "agent\n" });
    await s.call("write_note", { path: "Inbox/raced.md", content: "someone else\n" });
    await expect(approveProposal(s.vault, res.proposalId)).rejects.toMatchObject({ kind: "conflict" });
    expect(file("Inbox/raced.md")).toBe("someone else\n");
  });

  test("log appends commute: an approved append_log lands on the log as it is now", async () => {
    const res = await propose("append_log", { op: "lint", title: "Queued lint", date: "2026-06-01" });
    await s.call("append_log", { op: "query", title: "Direct entry", date: "2026-06-02" });
    await approveProposal(s.vault, res.proposalId);
    const log = file("log.md");
    expect(log.indexOf("Direct entry")).toBeLessThan(log.indexOf("Queued lint"));
  });
});
