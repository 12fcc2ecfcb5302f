// `lettuce review`: the real CLI against a temp vault, checked against
// state.db and the note's bytes; and what the server then says about trust.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { reviewOf } from "../lib/store/reviews";
import { runLettuce } from "./helpers/cli";
import { withEnv } from "./helpers/env";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";
import { addWorkspaceNotes } from "./helpers/workspace-notes";

let root: string;
let s: TestServer;
beforeAll(async () => {
  root = tempDir();
  addWorkspaceNotes(root, {
    "Runbook.md": "# Runbook\n\nRestart the queue worker when the backlog grows.\n",
    "Other.md": "# Other\n\nNothing about queues.\n",
  });
  s = await withEnv({ LETTUCE_EMBED_PROVIDER: "none" }, () => startTestServer({ root }));
});
afterAll(async () => {
  await s?.close();
  rmSync(root, { recursive: true, force: true });
});

const sha = (p: string) => createHash("sha256").update(readFileSync(join(root, p))).digest("hex");
const trustOf = async (id: string) => (await s.call("prepare_context", { task: "restart the queue worker backlog" })).concepts.find((c: any) => c.id === id);

describe("lettuce review", () => {
  test("reviews a note at its exact bytes, by the given name; the server reports it human-reviewed", async () => {
    const r = await runLettuce(["review", root, "Runbook", "--by", "Grace", "--json"]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ path: "Runbook.md", hash: sha("Runbook.md"), reviewer: "Grace" });
    expect(reviewOf(s.vault.stateDb, "Runbook.md")?.hash).toBe(sha("Runbook.md"));
    expect(await trustOf("Runbook.md")).toMatchObject({ trust: "human-reviewed", reviewedBy: "Grace" });
  });

  test("the list says whether each review still holds", async () => {
    const fresh = await runLettuce(["review", root, "--json"]);
    expect(JSON.parse(fresh.stdout)).toEqual([expect.objectContaining({ path: "Runbook.md", current: true })]);
    writeFileSync(join(root, "Runbook.md"), readFileSync(join(root, "Runbook.md"), "utf8") + "Also check the dead-letter queue.\n");
    await s.vault.indexer.update(["Runbook.md"]);
    const text = await runLettuce(["review", root]);
    expect(text.stdout).toContain("Runbook.md\tchanged since review\tby Grace");
    expect(await trustOf("Runbook.md")).toMatchObject({ trust: "unreviewed", reviewOutdated: true });
  });

  test("with no --by and no $USER (a container, a service), the reviewer is the account's name, not 'unknown'", async () => {
    const me = spawnSync("id", ["-un"], { encoding: "utf8" }).stdout.trim();
    const r = await runLettuce(["review", root, "Other.md", "--json"], { env: { USER: undefined, LOGNAME: undefined, LETTUCE_REVIEWER: undefined } });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).reviewer).toBe(me);
    expect(me).not.toBe("unknown");
    await runLettuce(["review", root, "Other.md", "--remove"]);
  });

  test("--remove takes a review back", async () => {
    const r = await runLettuce(["review", root, "Runbook.md", "--remove"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("removed");
    expect(reviewOf(s.vault.stateDb, "Runbook.md")).toBeNull();
    const again = await runLettuce(["review", root, "Runbook.md", "--remove"]);
    expect(again.stdout).toContain("had no review");
    expect((await trustOf("Runbook.md")).reviewOutdated).toBeUndefined();
  });

  test("bad paths and missing notes are refused, nothing recorded", async () => {
    const missing = await runLettuce(["review", root, "Nope.md"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("Note not found");
    for (const bad of ["../etc/passwd", "/etc/passwd", ".lettuce/state.db", ".obsidian/x.md"]) {
      const r = await runLettuce(["review", root, bad]);
      expect(r.code).toBe(2);
      expect(r.stderr.length).toBeGreaterThan(0);
    }
    const noVault = await runLettuce(["review", join(root, "missing-dir"), "Runbook.md"]);
    expect(noVault.code).toBe(1);
    expect(JSON.parse((await runLettuce(["review", root, "--json"])).stdout)).toEqual([]);
  });
});
