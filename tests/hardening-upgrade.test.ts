// A person updates Lettuce while their vault is in use (the upgrade audit of 2026-12-05): what an older
// version left in .lettuce/ must carry over, and an older version still running must keep its index.
import { expect, test } from "bun:test";
import { rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStateDb } from "../lib/store/state-db";
import { BUN, runLettuce } from "./helpers/cli";
import { twoProposals } from "./helpers/proposals";
import { copyVault, startTestServer } from "./helpers/server";

// The same state left by a Lettuce from before claims named their process (the upgrade audit of 2026-12-05):
// "approved", no edit, no claim. The migration that comes with this version marks them; the start settles them.
test("an approval an older Lettuce was killed in is settled after the upgrade", async () => {
  const { STATE_MIGRATIONS } = await import("../lib/store/state-db");
  const { vault, unlanded, landed, edit } = await twoProposals("old");
  const db = openStateDb(vault);
  db.query("UPDATE proposals SET status = 'approved', claimed_by = NULL, edit_id = NULL WHERE id IN (?, ?)").run(unlanded, landed);
  // The state.db of the version before that migration: it had none of the later ones either.
  const at = STATE_MIGRATIONS.findIndex((m) => m.includes("SET claimed_by = 0"));
  db.exec("DROP TABLE edit_texts; DROP TABLE edit_text_part_groups; DROP TABLE edit_text_parts");
  db.exec("ALTER TABLE agent_edits DROP COLUMN owner_stamp; ALTER TABLE proposals DROP COLUMN claimed_stamp");
  db.exec(`PRAGMA user_version = ${at}`);
  db.close();
  const again = await startTestServer({ root: vault });
  try {
    const d = openStateDb(vault);
    try {
      expect(d.query("SELECT id, status, edit_id, claimed_by FROM proposals ORDER BY id").all()).toEqual([
        { id: unlanded, status: "pending", edit_id: null, claimed_by: null },
        { id: landed, status: "approved", edit_id: edit, claimed_by: null },
      ]);
    } finally {
      d.close();
    }
  } finally {
    await again.close();
  }
});

test("an index an older Lettuce still has open after an upgrade (no registry file) is never deleted under it", async () => {
  const { Database } = await import("bun:sqlite");
  const { openIndexDb } = await import("../lib/store/index-db");
  const root = copyVault();
  expect((await runLettuce(["index", root])).code).toBe(0);
  // Another format: what this version finds when an older one made the index, and wants to rebuild.
  const db = new Database(join(root, ".lettuce/index.db"));
  db.query("UPDATE meta SET value = 'older' WHERE key = 'format'").run();
  db.close();
  const index = join(root, ".lettuce/index.db");
  const ino = statSync(index).ino;
  // An older `lettuce stdio` announces itself nowhere: it only has the file open.
  const holder = Bun.spawn([BUN, "-e", `const { Database } = require("bun:sqlite"); const d = new Database(${JSON.stringify(index)}); d.query("SELECT count(*) FROM notes").get(); console.log("open"); setInterval(() => {}, 1000);`], { stdout: "pipe", stderr: "inherit" });
  try {
    await holder.stdout.getReader().read();
    if (process.platform === "linux") {
      expect(() => openIndexDb(root)).toThrow(new RegExp(`open in another Lettuce process \\(pid ${holder.pid}\\), perhaps an older version`));
      expect(statSync(index).ino).toBe(ino);
    }
    // An older serve announced itself in serve.json only: heeded (on Linux, as a holder of the file).
    writeFileSync(join(root, ".lettuce/serve.json"), JSON.stringify({ pid: holder.pid, url: "http://127.0.0.1:1/mcp", startedAt: new Date().toISOString() }));
    expect(() => openIndexDb(root)).toThrow(/perhaps an older version/);
    expect(statSync(index).ino).toBe(ino);
    const search = await runLettuce(["search", root, "lettuce"]);
    expect(search.code).not.toBe(0);
    expect(search.stderr).toContain("perhaps an older version");
    expect(statSync(index).ino).toBe(ino);
  } finally {
    holder.kill();
    await holder.exited;
  }
  // A serve.json a crash left behind, naming a pid some unrelated program has since: on Linux only the file's
  // holders count, so nothing blocks the rebuild (it used to refuse for as long as that program ran).
  if (process.platform === "linux") {
    const unrelated = Bun.spawn(["sleep", "30"]);
    try {
      writeFileSync(join(root, ".lettuce/serve.json"), JSON.stringify({ pid: unrelated.pid, url: "http://127.0.0.1:1/mcp", startedAt: new Date().toISOString() }));
      const rebuilt = openIndexDb(root);
      expect((rebuilt.query("SELECT value FROM meta WHERE key = 'format'").get() as { value: string }).value).not.toBe("older");
      rebuilt.close();
    } finally {
      unrelated.kill();
    }
    return;
  }
  rmSync(join(root, ".lettuce/serve.json"), { force: true });
  // Once it has gone, the index of the other format is rebuilt as before.
  const rebuilt = openIndexDb(root);
  expect((rebuilt.query("SELECT value FROM meta WHERE key = 'format'").get() as { value: string }).value).not.toBe("older");
  rebuilt.close();
}, 60_000);
