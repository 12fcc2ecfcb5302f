// What a server writes to state.db as it goes (the audit log's flush a moment after each call, a
// token's "last used" mark, the edits timeline, the change journal, the daily health score) must cost
// the request thread no disk flush: measured here, an audit flush's fsync took 9-49 ms now and then,
// and a request arriving meanwhile waited for it. Those rows go through a connection that does not fsync its commits, and a served vault's
// state.db WAL is checkpointed by the checkpoint thread. A process crash must still lose none of them.
// Asserted on what the connections and the file show, never on time.
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { openStateDb } from "../lib/store/state-db";
import { createToken } from "../lib/store/tokens";
import { VaultContext } from "../lib/vault-context";
import { freePort, spawnLettuce, type LiveProcess } from "./helpers/cli";
import { ringVault, startTestServer, waitFor } from "./helpers/server";

const dirs: string[] = [];
const procs: LiveProcess[] = [];
afterAll(async () => {
  for (const p of procs) await p.stop().catch(() => {});
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type Conn = { query: (sql: string) => { get: () => unknown } };
const pragma = (db: Conn, name: string) => Object.values(db.query(`PRAGMA ${name}`).get() as Record<string, number>)[0];
const changes = (db: Conn) => (db.query("SELECT total_changes() AS n").get() as { n: number }).n;
const auditRows = (root: string) => {
  const db = new Database(join(root, ".lettuce", "state.db"), { readonly: true });
  try {
    return (db.query("SELECT count(*) AS n FROM audit_log").get() as { n: number }).n;
  } finally {
    db.close();
  }
};

test("a served vault writes its audit log and tokens' last use without an fsync, and checkpoints state.db off the request thread", async () => {
  const root = ringVault(5, dirs);
  const s = await startTestServer({ root, watch: true });
  try {
    const full = s.vault.stateDb;
    const noSync = s.vault.stateDbNoSync;
    // Tokens, settings and proposals keep a flush per commit; the rows written as the server goes do not.
    expect(pragma(full, "synchronous")).toBe(2);
    expect(pragma(noSync, "synchronous")).toBe(1);
    // Neither connection copies the WAL back by itself: the checkpoint thread does.
    expect(pragma(full, "wal_autocheckpoint")).toBe(0);
    expect(pragma(noSync, "wal_autocheckpoint")).toBe(0);

    const before = { full: changes(full), noSync: changes(noSync) };
    for (let i = 0; i < 3; i++) await s.call("search", { query: "note", limit: 1 });
    await waitFor(() => auditRows(root) >= 3, { what: "the audit log's flush", timeoutMs: 5000 });
    // The calls' audit rows, their token's "last used" mark and the change journal's first entries went
    // through the connection that does not fsync; the other one wrote nothing.
    expect(changes(noSync) - before.noSync).toBeGreaterThanOrEqual(4);
    expect(changes(full)).toBe(before.full);
  } finally {
    await s.close();
  }
});

test("a one-shot command keeps SQLite's own checkpoints on state.db", () => {
  const plain = VaultContext.open(ringVault(3, dirs));
  try {
    expect(pragma(plain.stateDb, "wal_autocheckpoint")).toBe(1000);
    expect(pragma(plain.stateDbNoSync, "wal_autocheckpoint")).toBe(1000);
  } finally {
    plain.close();
  }
});

test("kill -9 after calls: the audit rows and the token's last use are in state.db when it is opened again", async () => {
  const root = ringVault(5, dirs);
  const db = openStateDb(root);
  const token = createToken(db, "crash-audit", "read").token;
  db.close();
  const port = freePort();
  const server = spawnLettuce(["serve", root, "--port", String(port)], { env: { LETTUCE_EMBED_BACKGROUND: "0" } });
  procs.push(server);
  await server.waitForStdout(/Index current/, 30_000);
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: i + 1, method: "tools/call", params: { name: "search", arguments: { query: "note", limit: 1 } } }),
    });
    expect(res.status).toBe(200);
  }
  // Committed (seen by another connection), not yet checkpointed into the file: then the process dies.
  await waitFor(() => auditRows(root) >= 3, { what: "the audit log's flush", timeoutMs: 5000 });
  server.proc.kill("SIGKILL");
  await server.proc.exited;

  const again = openStateDb(root);
  try {
    expect((again.query("SELECT count(*) AS n FROM audit_log WHERE token_name = 'crash-audit'").get() as { n: number }).n).toBe(3);
    expect((again.query("SELECT last_used_at FROM tokens WHERE name = 'crash-audit'").get() as { last_used_at: string | null }).last_used_at).not.toBeNull();
    expect(again.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
  } finally {
    again.close();
  }
});
