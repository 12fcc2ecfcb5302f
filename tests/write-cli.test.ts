// The person's side, through the real CLI (`bun main.ts …`) next to a running
// server: `lettuce edits`, `lettuce revert`, `lettuce proposals`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { nameTwinsOnDisk } from "../lib/write/notes";
import { runLettuce } from "./helpers/cli";
import { startTestServer, waitFor, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ watch: true });
});
afterAll(() => s.close());

const file = (p: string) => readFileSync(join(s.root, p), "utf8");
const edits = async (...extra: string[]) => {
  const r = await runLettuce(["edits", s.root, "--json", ...extra]);
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as any[];
};

describe("lettuce edits and revert", () => {
  test("edits lists what agents did, newest first, and filters by path", async () => {
    await s.call("write_note", { path: "Inbox/cli.md", content: "# CLI\n\nfirst version\n" });
    const e2 = await s.call("apply_edits", { path: "Inbox/cli.md", edits: [{ find: "first version", replace: "second version" }] });
    await s.call("append_log", { op: "query", title: "CLI test" });
    const all = await edits();
    expect(all[0].tool).toBe("append_log");
    const mine = await edits("--path", "Inbox/cli.md");
    expect(mine.map((e) => e.tool)).toEqual(["apply_edits", "write_note"]);
    expect(mine[0].id).toBe(e2.editId);
    expect(mine[0].agent).toBe("lettuce-tests");
    const text = await runLettuce(["edits", s.root, "--path", "Inbox/cli.md"]);
    expect(text.stdout).toContain(`#${e2.editId}`);
    expect(text.stdout).toContain("apply_edits");
  });

  test("an agent's name and a note's path cannot send escape sequences to the person's terminal", async () => {
    // An agent names itself with sequences that erase a line and print a fake one.
    const evil = "good-agent\u001b[2K\r\u001b[1A\u001b[2Kfake line\u001b]0;PWNED\u0007";
    const { connectClient } = await import("./helpers/server");
    const c = await connectClient(s.url, s.tokens.write, evil);
    await c.callTool({ name: "write_note", arguments: { path: "Inbox/by-evil.md", content: "# Evil\n" } });
    await c.close();
    // Agents cannot name a note with controls (path-invalid); a file on disk can be, and is left out of
    // the index (lib/vault/unaddressable.ts) with a warning that shows its name escaped.
    const esc = join(s.root, "Inbox/esc\u001b[31mred.md");
    writeFileSync(esc, "# Esc\n\nescapemarker \u001b[2J\n");
    writeFileSync(join(s.root, "Inbox/after-esc.md"), "# After\n\naftermarker\n");
    await waitFor(async () => (await s.call("search", { query: "aftermarker" }, "read")).total === 1, { what: "the index" });
    expect((await s.call("search", { query: "escapemarker" }, "read")).total).toBe(0);
    try {
      for (const args of [["edits", s.root, "--limit", "3"], ["audit", s.root, "--limit", "3"], ["search", s.root, "escapemarker"], ["lint", s.root], ["doctor", s.root]]) {
        const r = await runLettuce(args);
        expect(r.stdout, args[0]).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
        expect(r.stderr, args[0]).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
        if (args[0] === "doctor") expect(r.stderr).toContain('left out "Inbox/esc\\u001b[31mred.md"');
      }
    } finally {
      rmSync(esc);
    }
    const [last] = await edits("--limit", "1");
    expect(last.agent).toBe("good-agent [2K [1A [2Kfake line ]0;PWNED"); // stored without its controls
  }, 60_000);

  test("revert restores the before-state and is itself on the timeline", async () => {
    const [edit] = await edits("--path", "Inbox/cli.md");
    const r = await runLettuce(["revert", s.root, String(edit.id)]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Reverted edit #${edit.id}`);
    expect(file("Inbox/cli.md")).toBe("# CLI\n\nfirst version\n");
    const [rev] = await edits("--path", "Inbox/cli.md");
    expect(rev.tool).toBe("revert");
    expect(rev.reverts).toBe(edit.id);
    // The running server's watcher re-indexes the reverted note.
    await waitFor(async () => (await s.call("search", { query: "first version" })).items.some((h: any) => h.path === "Inbox/cli.md"), { what: "reindex" });
    // Reverting it again says it is already undone, and by which edit (not "changed since", then with --force "already undone").
    for (const extra of [[], ["--force"]]) {
      const again = await runLettuce(["revert", s.root, String(edit.id), ...extra]);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain(`already undone by edit ${rev.id}`);
    }
    const [undone] = await edits("--path", "Inbox/cli.md", "--limit", "50").then((all) => all.filter((e: any) => e.id === edit.id));
    expect(undone.revertedBy).toBe(rev.id);
    // Once the revert is itself reverted, the edit stands again and can be reverted once more.
    const back = await runLettuce(["revert", s.root, String(rev.id)]);
    expect(back.code).toBe(0);
    const again = await runLettuce(["revert", s.root, String(edit.id)]);
    expect(again.code).toBe(0);
    expect(file("Inbox/cli.md")).toBe("# CLI\n\nfirst version\n");
  });

  test("revert refuses when the note changed since, unless --force (and the person's text stays recoverable)", async () => {
    const e = await s.call("apply_edits", { path: "Inbox/cli.md", edits: [{ find: "first version", replace: "agent version" }] });
    writeFileSync(join(s.root, "Inbox/cli.md"), "# CLI\n\nagent version\n\nA person added this.\n");
    const refused = await runLettuce(["revert", s.root, String(e.editId)]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("changed since");
    expect(file("Inbox/cli.md")).toContain("A person added this.");
    const forced = await runLettuce(["revert", s.root, String(e.editId), "--force"]);
    expect(forced.code).toBe(0);
    expect(file("Inbox/cli.md")).toBe("# CLI\n\nfirst version\n");
    const [rev] = await edits("--path", "Inbox/cli.md");
    const undo = await runLettuce(["revert", s.root, String(rev.id)]);
    expect(undo.code).toBe(0);
    expect(file("Inbox/cli.md")).toContain("A person added this.");
  });

  test("reverting a move moves it back and undoes the link rewrites; reverting a delete restores from .trash", async () => {
    const before = file("index.md");
    const m = await s.call("move_note", { from: "Recipes/Lettuce Soup.md", to: "Kitchen/Soup.md" });
    expect(file("index.md")).not.toBe(before);
    const r = await runLettuce(["revert", s.root, String(m.editId)]);
    expect(r.code).toBe(0);
    expect(existsSync(join(s.root, "Recipes/Lettuce Soup.md"))).toBe(true);
    expect(existsSync(join(s.root, "Kitchen/Soup.md"))).toBe(false);
    expect(file("index.md")).toBe(before);

    const content = file("Garden/Compost.md");
    const d = await s.call("delete_note", { path: "Garden/Compost.md" });
    expect(existsSync(join(s.root, "Garden/Compost.md"))).toBe(false);
    expect((await runLettuce(["revert", s.root, String(d.editId)])).code).toBe(0);
    expect(file("Garden/Compost.md")).toBe(content);
    expect(existsSync(join(s.root, d.trashPath))).toBe(false);
  });

  test("reverting a delete restores the deleted text, not whatever later landed on its trash name", async () => {
    await s.call("write_note", { path: "Inbox/twice.md", content: "ORIGINAL first text\n" });
    const first = await s.call("delete_note", { path: "Inbox/twice.md" });
    rmSync(join(s.root, ".trash"), { recursive: true, force: true }); // the person empties the trash
    await s.call("write_note", { path: "Inbox/twice.md", content: "SECOND text\n" });
    const second = await s.call("delete_note", { path: "Inbox/twice.md" });
    expect(second.trashPath).toBe(first.trashPath); // the same name, free again
    expect((await runLettuce(["revert", s.root, String(first.editId)])).code).toBe(0);
    expect(file("Inbox/twice.md")).toBe("ORIGINAL first text\n"); // from the timeline's copy
    expect(file(second.trashPath)).toBe("SECOND text\n"); // the later delete's copy stays in the trash
    rmSync(join(s.root, "Inbox/twice.md"));
    expect((await runLettuce(["revert", s.root, String(second.editId)])).code).toBe(0);
    expect(file("Inbox/twice.md")).toBe("SECOND text\n");
  });

  // A disk that keeps both Note.md and note.md: the name a revert puts back may meanwhile be taken by a
  // twin that differs only in letter case. move_note and write_note refuse to make such twins; so does revert.
  test("a revert does not make a twin that differs only in letter case", async () => {
    await s.call("write_note", { path: "Inbox/Case Twin.md", content: "moved away\n" });
    const m = await s.call("move_note", { from: "Inbox/Case Twin.md", to: "Inbox/Elsewhere.md" });
    writeFileSync(join(s.root, "Inbox/case twin.md"), "the person's new note\n");
    const r = await runLettuce(["revert", s.root, String(m.editId)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Inbox/case twin.md");
    expect(existsSync(join(s.root, "Inbox/Case Twin.md"))).toBe(false);
    expect(file("Inbox/Elsewhere.md")).toBe("moved away\n");

    const d = await s.call("delete_note", { path: "Inbox/Elsewhere.md" });
    writeFileSync(join(s.root, "Inbox/ELSEWHERE.md"), "another new note\n");
    const r2 = await runLettuce(["revert", s.root, String(d.editId)]);
    expect(r2.code).toBe(1);
    expect(r2.stderr).toContain("Inbox/ELSEWHERE.md");
    expect(existsSync(join(s.root, "Inbox/Elsewhere.md"))).toBe(false);
    // Once the twin is gone, the revert goes through.
    rmSync(join(s.root, "Inbox/ELSEWHERE.md"));
    expect((await runLettuce(["revert", s.root, String(d.editId)])).code).toBe(0);
    expect(file("Inbox/Elsewhere.md")).toBe("moved away\n");
    // A case-only move is reverted: the name it leaves is the note itself.
    const c = await s.call("move_note", { from: "Inbox/Elsewhere.md", to: "Inbox/elsewhere.md" });
    expect((await runLettuce(["revert", s.root, String(c.editId)])).code).toBe(0);
    expect(file("Inbox/Elsewhere.md")).toBe("moved away\n");
    expect(existsSync(join(s.root, "Inbox/elsewhere.md"))).toBe(false);
    // A case-only move, and then a third spelling beside the note: every twin counts, not the first found.
    const c2 = await s.call("move_note", { from: "Inbox/Elsewhere.md", to: "Inbox/elsewhere.md" });
    writeFileSync(join(s.root, "Inbox/ELSEWHERE.md"), "a third spelling\n");
    const r3 = await runLettuce(["revert", s.root, String(c2.editId)]);
    expect(r3.code).toBe(1);
    expect(r3.stderr).toContain("Inbox/ELSEWHERE.md");
    expect(existsSync(join(s.root, "Inbox/Elsewhere.md"))).toBe(false);
    // Whichever the folder lists first (the note itself, here elsewhere.md, came first on some disks).
    expect(nameTwinsOnDisk(s.root, "Inbox/Elsewhere.md").sort()).toEqual(["Inbox/ELSEWHERE.md", "Inbox/elsewhere.md"]);
  });

  test("an unknown id and a bad id are clear errors", async () => {
    const r = await runLettuce(["revert", s.root, "99999"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("No edit 99999");
    const bad = await runLettuce(["revert", s.root, "abc"]);
    expect(bad.code).toBe(2);
  });
});

describe("lettuce proposals", () => {
  test("list, show with a unified diff, approve (the server re-indexes it), reject", async () => {
    const p = await s.call("apply_edits", { path: "Recipes/Menemen.md", edits: [{ find: "# Menemen", replace: "# Menemen with peppers" }] }, "propose");
    const q = await s.call("write_note", { path: "Inbox/unwanted.md", content: "no\n" }, "propose");
    const list = await runLettuce(["proposals", s.root, "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(`#${p.proposalId}`);
    expect(list.stdout).toContain(`#${q.proposalId}`);

    const show = await runLettuce(["proposals", s.root, "show", String(p.proposalId)]);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("--- a/Recipes/Menemen.md");
    expect(show.stdout).toContain("+++ b/Recipes/Menemen.md");
    expect(show.stdout).toContain("@@");
    expect(show.stdout).toContain("-# Menemen\n");
    expect(show.stdout).toContain("+# Menemen with peppers\n");

    const ok = await runLettuce(["proposals", s.root, "approve", String(p.proposalId)]);
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    expect(file("Recipes/Menemen.md")).toContain("# Menemen with peppers\n");
    await waitFor(async () => (await s.call("read_note", { path: "Recipes/Menemen.md" })).title !== undefined && (await s.call("read_outline", { path: "Recipes/Menemen.md" }))[0].title === "Menemen with peppers", { what: "reindex" });
    const [edit] = await edits("--path", "Recipes/Menemen.md");
    expect(edit.proposalId).toBe(p.proposalId);

    const no = await runLettuce(["proposals", s.root, "reject", String(q.proposalId), "--reason", "not needed"]);
    expect(no.code).toBe(0);
    const rejected = JSON.parse((await runLettuce(["proposals", s.root, "list", "--status", "rejected", "--json"])).stdout);
    expect(rejected.map((x: any) => [x.id, x.reason])).toContainEqual([q.proposalId, "not needed"]);
    expect(existsSync(join(s.root, "Inbox/unwanted.md"))).toBe(false);
    const again = await runLettuce(["proposals", s.root, "approve", String(q.proposalId)]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already rejected");
  });

  // Two people (or a person in two terminals) deciding one proposal at once: a reject that lost the race to an
  // approve said "Rejected proposal #N" while the proposal was approved and applied (6 of 40 rounds; the
  // multi-process audit of 2026-12-05). Exactly one decision is reported as made.
  test("a reject racing an approve in another process never reports a decision it did not make", async () => {
    // Each round loses the race without the fix about one time in seven: 24 rounds catch it ~98 % of runs.
    for (let i = 0; i < 24; i++) {
      const { proposalId } = await s.call("append_log", { op: "query", title: `race ${i}` }, "propose");
      const [reject, approve] = await Promise.all([runLettuce(["proposals", s.root, "reject", String(proposalId)]), runLettuce(["proposals", s.root, "approve", String(proposalId)])]);
      const status = JSON.parse((await runLettuce(["proposals", s.root, "list", "--status", "all", "--json"])).stdout).find((x: any) => x.id === proposalId).status;
      expect([reject.code, approve.code].sort()).toEqual([0, 1]);
      expect(status).toBe(reject.code === 0 ? "rejected" : "approved");
      expect((reject.code === 0 ? approve : reject).stderr).toMatch(/already (approved|rejected)/);
    }
  }, 60_000);

  test("a stale proposal: show warns, approve refuses as a conflict", async () => {
    const p = await s.call("apply_edits", { path: "Recipes/Caesar Salad.md", edits: [{ find: "# Caesar Salad", replace: "# Caesar" }] }, "propose");
    writeFileSync(join(s.root, "Recipes/Caesar Salad.md"), file("Recipes/Caesar Salad.md") + "\nEdited by hand.\n");
    const show = await runLettuce(["proposals", s.root, "show", String(p.proposalId)]);
    expect(show.stdout).toContain("Approving now would fail (conflict)");
    const r = await runLettuce(["proposals", s.root, "approve", String(p.proposalId)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("changed since");
    expect(file("Recipes/Caesar Salad.md")).toContain("# Caesar Salad");
  });
});

describe("lettuce config", () => {
  test("immutablePaths: shown, changed while the server runs, refused when malformed", async () => {
    expect((await runLettuce(["config", s.root])).stdout).toBe("immutablePaths=sources/\nauditRetentionDays=90\nauditMaxRows=1000000\ncontextMode=off\n");
    const set = await runLettuce(["config", s.root, "immutablePaths", "sources, raw/clips/"]);
    expect(set).toMatchObject({ code: 0, stdout: "immutablePaths=sources/,raw/clips/\n" });
    expect((await s.call("get_vault_info", {}, "read")).immutablePaths).toEqual(["sources/", "raw/clips/"]);
    // Created once under the new prefix, then never changed.
    await s.call("write_note", { path: "raw/clips/Clip.md", content: "# Clip\n\nas clipped\n" });
    const again = await s.callRaw("apply_edits", { path: "raw/clips/Clip.md", edits: [{ find: "as clipped", replace: "edited" }] });
    expect(again).toMatchObject({ isError: true, kind: "immutable-path" });
    const bad = await runLettuce(["config", s.root, "immutablePaths", "../outside"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("'..' is not allowed");
    expect((await runLettuce(["config", s.root, "nope"])).code).toBe(2);
    // "" turns the rule off.
    expect((await runLettuce(["config", s.root, "immutablePaths", ""])).stdout).toBe('immutablePaths=""\n');
    await s.call("apply_edits", { path: "raw/clips/Clip.md", edits: [{ find: "as clipped", replace: "edited" }] });
    await runLettuce(["config", s.root, "immutablePaths", "sources/"]);
  });
});
