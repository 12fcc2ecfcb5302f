// A proposal is approved against the notes it was made against (its base). When the proposal's path resolves
// at approval to another spelling of that note (letter case, Unicode normalisation), the base must still be
// checked: approval replaced a person's note, and dropped a line a person added, with no conflict.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ToolError } from "../lib/errors";
import { expectationFor } from "../lib/write/plan";
import { approveProposal, getProposal, previewProposal } from "../lib/write/proposals";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const file = (p: string) => readFileSync(join(s.root, p), "utf8");

async function approveFails(id: number): Promise<ToolError> {
  const e = await approveProposal(s.vault, id).then(
    () => null,
    (err) => err,
  );
  expect(e).toBeInstanceOf(ToolError);
  return e as ToolError;
}

describe("a proposal's base holds for every spelling of its note", () => {
  test("a create approved after the person made the note under another case is a conflict", async () => {
    const res = await s.call("write_note", { path: "Inbox/Plan.md", content: "agent plan\n", overwrite: true }, "propose");
    const mine = "The person's own plan, written after the proposal\n";
    writeFileSync(join(s.root, "Inbox/plan.md"), mine);
    await s.vault.indexer.update(["Inbox/plan.md"]);

    const preview = await previewProposal(s.vault, getProposal(s.vault.stateDb, res.proposalId)!);
    expect("error" in preview && preview.error.kind).toBe("conflict");
    expect((await approveFails(res.proposalId)).kind).toBe("conflict");
    expect(file("Inbox/plan.md")).toBe(mine);
    expect(getProposal(s.vault.stateDb, res.proposalId)!.status).toBe("pending");
  });

  test("an edit approved after the person renamed the note to lower case and changed it is a conflict", async () => {
    const old = "Inbox/Meeting Notes 2026-03-02.md";
    const now = "Inbox/meeting notes 2026-03-02.md";
    const res = await s.call("patch_section", { path: old, heading: "Decisions", mode: "replace", content: "1. The agent's decision list" }, "propose");
    renameSync(join(s.root, old), join(s.root, now));
    const added = file(now).replace("3. No sync in v1.", "3. No sync in v1.\n4. A decision the person added after the proposal");
    writeFileSync(join(s.root, now), added);
    await s.vault.indexer.update([old, now]);

    expect((await approveFails(res.proposalId)).kind).toBe("conflict");
    expect(file(now)).toBe(added);

    // Only renamed since the proposal, its bytes as proposed against: the same note, and approval applies.
    renameSync(join(s.root, now), join(s.root, "Inbox/MEETING NOTES 2026-03-02.md"));
    await s.vault.indexer.update([now, "Inbox/MEETING NOTES 2026-03-02.md"]);
    const again = await s.call("patch_section", { path: old, heading: "Decisions", mode: "append", content: "5. Appended by the agent" }, "propose");
    renameSync(join(s.root, "Inbox/MEETING NOTES 2026-03-02.md"), join(s.root, now));
    await s.vault.indexer.update(["Inbox/MEETING NOTES 2026-03-02.md", now]);
    const out = await approveProposal(s.vault, again.proposalId);
    expect(out.path).toBe(now);
    expect(file(now)).toContain("4. A decision the person added after the proposal");
    expect(file(now)).toContain("5. Appended by the agent");
  });

  test("a path the base does not name in any spelling is never changed unchecked", () => {
    const base = { "Notes/Café.md": "h1", "Notes/New.md": null };
    expect(expectationFor(base, "notes/CAFE\u0301.md", undefined)).toBe("h1");
    expect(expectationFor(base, "notes/new.md", "ignored")).toBeNull();
    expect(expectationFor(undefined, "x.md", "h2")).toBe("h2");
    let err: unknown = null;
    try {
      expectationFor(base, "Notes/Other.md", undefined);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).kind).toBe("conflict");
  });
});
