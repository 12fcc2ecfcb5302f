// A proposal's diff is computed on the server's one thread: a note replaced by thousands of different lines
// held every other caller for seconds (57 s at 300 KB). The diff is bounded; past the bound the changed
// region is shown whole and labelled, and it is still a correct patch.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyPatch, createTwoFilesPatch } from "diff";
import { changeDiff, getProposal, previewProposal } from "../lib/write/proposals";
import { startTestServer, type TestServer } from "./helpers/server";
import { longestStall } from "./helpers/event-loop";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const lines = (tag: string, n: number, from = 0) => Array.from({ length: n }, (_, i) => `${tag} ${from + i} ${((i * 7919) % 10007).toString(36)}\n`).join("");

describe("a proposal's diff is bounded", () => {
  test("replacing 3,000 lines with different ones answers at once and holds no other caller", async () => {
    const head = lines("kept at the start", 100);
    const tail = lines("kept at the end", 100, 100);
    const before = head + lines("old", 3_000) + tail;
    const after = head + lines("new", 3_000) + tail;
    writeFileSync(join(s.root, "Inbox/long.md"), before);
    await s.vault.indexer.update(["Inbox/long.md"]);
    await s.call("read_note", { path: "Projects/Lettuce.md" }, "read"); // the read client is connected before timing

    let otherMs = 0;
    const { result: res, stall } = await longestStall(async () => {
      const other = (async () => {
        await Bun.sleep(20);
        const t = performance.now();
        await s.call("read_note", { path: "Projects/Lettuce.md" }, "read");
        otherMs = performance.now() - t;
      })();
      const r = await s.call("write_note", { path: "Inbox/long.md", content: after, overwrite: true }, "propose");
      await other;
      return r;
    });
    expect(res.status).toBe("pending");
    expect(stall).toBeLessThan(500); // was 5 s and more
    expect(otherMs).toBeLessThan(500);

    const { diff } = getProposal(s.vault.stateDb, res.proposalId)!;
    expect(diff.split("\n")[0]).toContain("not compared line by line, too many changes");
    expect(diff).toContain("the 3000 old lines between the unchanged start and end are shown removed, the 3000 new ones added");
    // The shared start and end are context, not change: the hunk holds 4 lines of each around the 3,000.
    expect(diff).toContain("@@ -97,3008 +97,3008 @@\n kept at the start 96 ");
    // And it is a correct patch: applied to the note as it was, it gives the proposed text.
    expect(applyPatch(before, diff.slice(diff.indexOf("\n") + 1))).toBe(after);

    // The person's views of it (web detail, `lettuce proposals show`, the edit-detail view) are bounded too.
    const t = performance.now();
    const preview = await previewProposal(s.vault, getProposal(s.vault.stateDb, res.proposalId)!);
    const direct = changeDiff({ action: "write", path: "Inbox/long.md", before: Buffer.from(before), after: Buffer.from(after) });
    expect(performance.now() - t).toBeLessThan(1_000);
    expect("diff" in preview && preview.diff).toContain("not compared line by line");
    expect(direct).toContain("@@ -97,3008 +97,3008 @@");
  }, 60_000);

  test("a small change still gets the exact line-by-line diff", async () => {
    const before = lines("line", 40);
    writeFileSync(join(s.root, "Inbox/short.md"), before);
    await s.vault.indexer.update(["Inbox/short.md"]);
    const res = await s.call("apply_edits", { path: "Inbox/short.md", edits: [{ find: "line 20 ", replace: "LINE TWENTY " }] }, "propose");
    const after = before.replace("line 20 ", "LINE TWENTY ");
    const exact = createTwoFilesPatch("a/Inbox/short.md", "b/Inbox/short.md", before, after).replace(/^=+\n/, "");
    expect(getProposal(s.vault.stateDb, res.proposalId)!.diff).toBe(exact);
    expect(exact).toContain("@@ -17,9 +17,9 @@");
  });

  test("a created or deleted note is shown whole, unlabelled, as jsdiff would", () => {
    const big = lines("x", 5_000);
    const made = changeDiff({ action: "write", path: "a.md", before: null, after: Buffer.from(big + "no newline") });
    expect(made).toBe(createTwoFilesPatch("/dev/null", "b/a.md", "", big + "no newline").replace(/^=+\n/, ""));
    const gone = changeDiff({ action: "delete", path: "a.md", trash: ".trash/a.md", before: Buffer.from("one\ntwo\n"), after: null });
    expect(gone).toBe("delete a.md (moved to .trash/a.md)\n--- a/a.md\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-one\n-two\n");
  });
});
