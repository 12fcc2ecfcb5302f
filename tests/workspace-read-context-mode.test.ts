// Context runs and the vault's contextMode, through the real server and the
// real CLI: `lettuce config <vault> contextMode off|smart|strict` is seen by
// a running server at once; in strict mode every write tool refuses a call
// without a live contextRunId of the same token (kind context-required), in
// smart mode the write goes through and says prepare_context is recommended.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { checkContextRun, CONTEXT_RUN_TTL_MS, issueContextRun } from "../lib/store/context-runs";
import { getProposal } from "../lib/write/proposals";
import { runLettuce } from "./helpers/cli";
import { withEnv } from "./helpers/env";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await withEnv({ LETTUCE_EMBED_PROVIDER: "none" }, () => startTestServer());
});
afterAll(() => s?.close());

async function setMode(mode: string) {
  const r = await runLettuce(["config", s.root, "contextMode", mode]);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain(`contextMode=${mode}`);
}
const runId = async (scope: "read" | "propose" | "write" = "write") => (await s.call("prepare_context", { task: "lettuce garden notes" }, scope)).contextRunId as string;
const exists = (p: string) => existsSync(join(s.root, p));

describe("contextMode", () => {
  test("off (the default): writes need no run and carry no notice", async () => {
    const show = await runLettuce(["config", s.root, "contextMode"]);
    expect(show.stdout.trim()).toBe("contextMode=off");
    const out = await s.call("write_note", { path: "Inbox/off.md", content: "# off\n" });
    expect(out.contextNotice).toBeUndefined();
    expect(exists("Inbox/off.md")).toBe(true);
  });

  test("every write tool takes an optional contextRunId", async () => {
    const { tools } = await (await s.client("write")).listTools();
    const writes = ["write_note", "apply_edits", "patch_section", "file_page", "append_log", "move_note", "delete_note", "complete_directive"];
    for (const name of writes) {
      const t = tools.find((x) => x.name === name)!;
      expect((t.inputSchema.properties as any).contextRunId.type).toBe("string");
      expect(t.inputSchema.required ?? []).not.toContain("contextRunId");
    }
  });

  test("strict: refused without a run, with another token's run, with a made-up one; accepted with its own", async () => {
    await setMode("strict");
    try {
      const none: any = await s.callRaw("write_note", { path: "Inbox/strict.md", content: "# strict\n" });
      expect(none.isError).toBe(true);
      expect(none.kind).toBe("context-required");
      expect(JSON.parse(none.content[0].text)).toMatchObject({ kind: "context-required", reason: "missing", contextMode: "strict" });
      expect(exists("Inbox/strict.md")).toBe(false);

      const foreign = await runId("read"); // a run, but of the read token
      const other: any = await s.callRaw("write_note", { path: "Inbox/strict.md", content: "# strict\n", contextRunId: foreign });
      expect(JSON.parse(other.content[0].text).reason).toBe("unknown");
      const madeUp: any = await s.callRaw("append_log", { op: "lint", title: "x", contextRunId: "ctx_AAAAAAAAAAAAAAAAAAAAAA" });
      expect(madeUp.kind).toBe("context-required");
      const before = existsSync(join(s.root, "log.md")) ? readFileSync(join(s.root, "log.md"), "utf8") : null;
      expect(before === null || !before.includes("| x")).toBe(true);

      const mine = await runId("write");
      const ok = await s.call("write_note", { path: "Inbox/strict.md", content: "# strict\n", contextRunId: mine });
      expect(ok.path).toBe("Inbox/strict.md");
      expect(ok.contextNotice).toBeUndefined();
      // The same run serves several writes while it lives.
      const edit = await s.call("apply_edits", { path: "Inbox/strict.md", edits: [{ find: "# strict", replace: "# strict mode" }], contextRunId: mine });
      expect(edit.hash).toBeString();
      expect(readFileSync(join(s.root, "Inbox/strict.md"), "utf8")).toBe("# strict mode\n");
      const del: any = await s.callRaw("delete_note", { path: "Inbox/strict.md" });
      expect(del.kind).toBe("context-required");
      expect(exists("Inbox/strict.md")).toBe(true);
    } finally {
      await setMode("off");
    }
  });

  test("strict applies to propose tokens too, and the run id is not stored with the proposal", async () => {
    await setMode("strict");
    try {
      const refused: any = await s.callRaw("write_note", { path: "Inbox/proposed.md", content: "# p\n" }, "propose");
      expect(refused.kind).toBe("context-required");
      const mine = await runId("propose");
      const queued = await s.call("write_note", { path: "Inbox/proposed.md", content: "# p\n", contextRunId: mine }, "propose");
      expect(queued.status).toBe("pending");
      const stored = getProposal(s.vault.stateDb, queued.proposalId)!;
      expect(stored.args).toEqual({ path: "Inbox/proposed.md", content: "# p\n", overwrite: false });
      expect(exists("Inbox/proposed.md")).toBe(false);
    } finally {
      await setMode("off");
    }
  });

  test("smart: a write without a run goes through and recommends prepare_context; with one, no notice", async () => {
    await setMode("smart");
    try {
      const bare = await s.call("write_note", { path: "Inbox/smart.md", content: "# smart\n" });
      expect(exists("Inbox/smart.md")).toBe(true);
      expect(bare.contextNotice).toContain("prepare_context");
      const stale = await s.call("write_note", { path: "Inbox/smart2.md", content: "# s\n", contextRunId: "ctx_nope" });
      expect(stale.contextNotice).toContain("not one prepare_context gave this token");
      const withRun = await s.call("write_note", { path: "Inbox/smart3.md", content: "# s\n", contextRunId: await runId() });
      expect(withRun.contextNotice).toBeUndefined();
    } finally {
      await setMode("off");
    }
  });

  test("config refuses an unknown mode with a usage error and keeps the old one", async () => {
    const bad = await runLettuce(["config", s.root, "contextMode", "paranoid"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("contextMode is one of off, smart, strict");
    expect((await runLettuce(["config", s.root, "contextMode"])).stdout.trim()).toBe("contextMode=off");
  });
});

describe("context runs", () => {
  test("a run lives 30 minutes, belongs to one token and one vault", () => {
    const vaultA = {};
    const vaultB = {};
    const t0 = 1_000_000;
    const run = issueContextRun(vaultA, "alice", t0);
    expect(checkContextRun(vaultA, "alice", run.id, t0 + CONTEXT_RUN_TTL_MS - 1)).toMatchObject({ ok: true });
    expect(checkContextRun(vaultA, "alice", run.id, t0 + CONTEXT_RUN_TTL_MS)).toEqual({ ok: false, reason: "expired" });
    expect(checkContextRun(vaultA, "bob", run.id, t0)).toEqual({ ok: false, reason: "unknown" });
    expect(checkContextRun(vaultB, "alice", run.id, t0)).toEqual({ ok: false, reason: "unknown" });
    expect(checkContextRun(vaultA, "alice", undefined, t0)).toEqual({ ok: false, reason: "missing" });
  });

  test("a flood of runs stays bounded: the oldest go first", () => {
    const vault = {};
    const first = issueContextRun(vault, "t", 0);
    for (let i = 0; i < 10_050; i++) issueContextRun(vault, "t", 1);
    expect(checkContextRun(vault, "t", first.id, 2).ok).toBe(false);
  });
});
