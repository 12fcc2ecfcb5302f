// Two proposals on a copy of the example vault, the second approved through the CLI: the state a crashed
// approval is made from (tests/hardening-recovery.test.ts, tests/hardening-upgrade.test.ts).
import { expect } from "bun:test";
import { openStateDb } from "../../lib/store/state-db";
import { runLettuce } from "./cli";
import { copyVault, startTestServer } from "./server";

export async function twoProposals(prefix: string): Promise<{ vault: string; unlanded: number; landed: number; edit: number }> {
  const vault = copyVault();
  const t = await startTestServer({ root: vault });
  let unlanded: number;
  let landed: number;
  try {
    unlanded = (await t.call("write_note", { path: `Crash/${prefix}-a.md`, content: "# A\n\nproposed, never applied\n" }, "propose")).proposalId;
    landed = (await t.call("write_note", { path: `Crash/${prefix}-b.md`, content: "# B\n\nproposed, applied before the crash\n" }, "propose")).proposalId;
  } finally {
    await t.close();
  }
  expect((await runLettuce(["proposals", vault, "approve", String(landed)])).code).toBe(0);
  const db = openStateDb(vault);
  const edit = (db.query("SELECT edit_id FROM proposals WHERE id = ?").get(landed) as { edit_id: number }).edit_id;
  db.close();
  expect(edit).toBeGreaterThan(0);
  return { vault, unlanded, landed, edit };
}
