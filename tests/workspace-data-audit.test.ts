// The audit log through the real server (HTTP) and the real `lettuce stdio`,
// failed calls included; query_audit_log, `lettuce audit`, retention, and
// list_members.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { rmSync } from "node:fs";
import { openStateDb } from "../lib/store/state-db";
import { BUN, MAIN, runLettuce } from "./helpers/cli";
import { withEnv } from "./helpers/env";
import { copyVault, REPO, startTestServer, waitFor, type TestServer } from "./helpers/server";

setDefaultTimeout(60_000);

const SECRET = "SECRET-CONTENT-7f3a9c";

/** Every audit row, every column, as stored (the agent-edits timeline in the same file keeps note text by design). */
function auditRows(root: string): string {
  const db = openStateDb(root);
  try {
    return JSON.stringify(db.query("SELECT * FROM audit_log").all());
  } finally {
    db.close();
  }
}

describe("audit log over HTTP", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => s?.close());

  test("successes and failures are recorded with target, agent and token; newest first; never the content", async () => {
    const client = new Client({ name: "audit-probe", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(s.url), { requestInit: { headers: { Authorization: `Bearer ${s.tokens.write}`, "X-Lettuce-Agent": "nightly-report" } } }),
    );
    const started = new Date(Date.now() - 1).toISOString();
    try {
      await client.callTool({ name: "read_note", arguments: { path: "Garden/Compost.md" } });
      await client.callTool({ name: "write_note", arguments: { path: "Inbox/Secret.md", content: `# Secret\n\n${SECRET}\n` } });
      const missing: any = await client.callTool({ name: "read_note", arguments: { path: "Nope.md" } });
      expect(missing.kind).toBe("note-not-found");
      await client.callTool({ name: "search", arguments: { query: SECRET } });
      await expect(client.callTool({ name: "read_note", arguments: { path: 42 } })).rejects.toThrow();
      await expect(client.callTool({ name: "no_such_tool", arguments: {} })).rejects.toThrow();
    } finally {
      await client.close();
    }
    // A read token calling a write tool: forbidden, recorded with the read token's name.
    const forbidden = await s.callRaw("delete_note", { path: "Garden/Compost.md" }, "read");
    expect(forbidden.kind).toBe("forbidden");

    const log = await s.call("query_audit_log", { from: started, limit: 100 });
    const mine = log.filter((e: any) => e.tool !== "query_audit_log");
    expect(mine.map((e: any) => [e.tool, e.status, e.errorKind])).toEqual([
      ["delete_note", "error", "forbidden"],
      ["no_such_tool", "error", "unknown-tool"],
      ["read_note", "error", "invalid-params"],
      ["search", "success", null],
      ["read_note", "error", "note-not-found"],
      ["write_note", "success", null],
      ["read_note", "success", null],
    ]);
    const times = log.map((e: any) => Date.parse(e.createdAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    const write = mine.find((e: any) => e.tool === "write_note");
    expect(write).toMatchObject({ targetType: "page", targetId: "Inbox/Secret.md", agentName: "nightly-report" });
    expect(write.tokenName).toMatch(/^test-write-/);
    expect(mine[0].tokenName).toMatch(/^test-read-/);
    expect(mine.find((e: any) => e.tool === "search").targetId).toBeNull();
    expect(mine.find((e: any) => e.errorKind === "note-not-found").targetId).toBe("Nope.md");
    // The note's text and the search query never reach state.db.
    expect(JSON.stringify(log)).not.toContain(SECRET);
    expect(auditRows(s.root).includes(SECRET)).toBe(false);
  });

  test("filters: tool, status, from/to; bad times are invalid-input", async () => {
    await s.call("get_vault_info");
    const onlyErrors = await s.call("query_audit_log", { status: "error", limit: 1000 });
    expect(onlyErrors.length).toBeGreaterThan(0);
    expect(onlyErrors.every((e: any) => e.status === "error")).toBe(true);
    const info = await s.call("query_audit_log", { tool: "get_vault_info" });
    expect(info.length).toBeGreaterThan(0);
    expect(info.every((e: any) => e.tool === "get_vault_info")).toBe(true);
    expect(await s.call("query_audit_log", { to: "2000-01-01T00:00:00Z" })).toEqual([]);
    expect(await s.call("query_audit_log", { limit: 2 })).toHaveLength(2);
    expect((await s.callRaw("query_audit_log", { from: "last tuesday" })).kind).toBe("invalid-input");
    // A time range is no target: query_audit_log's own entries name none (move_note's `from` is a path and is one).
    const own = await s.call("query_audit_log", { tool: "query_audit_log", limit: 1000 });
    expect(own.length).toBeGreaterThan(0);
    expect(own.filter((e: any) => e.targetId)).toEqual([]);
    // The spec gives no maximum for limit: past ours it is a full page, not a protocol error.
    expect((await s.call("query_audit_log", { limit: 1_000_000 })).length).toBeGreaterThan(0);
  });

  test("list_members: the owner plus one member per live token, role = scope", async () => {
    const members = await s.call("list_members", {}, "read");
    expect(members[0]).toMatchObject({ userId: "owner", role: "owner", email: null });
    expect(Number.isNaN(Date.parse(members[0].joinedAt))).toBe(false);
    const db = openStateDb(s.root);
    const live = db.query("SELECT id, name, scope, created_at FROM tokens WHERE revoked_at IS NULL ORDER BY id").all() as any[];
    db.close();
    expect(members.slice(1)).toEqual(live.map((t) => ({ userId: `token:${t.id}`, email: null, name: t.name, role: t.scope, joinedAt: t.created_at })));
  });
});

describe("audit log over stdio, the CLI, and retention", () => {
  let root: string;
  beforeAll(() => {
    root = copyVault();
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test("stdio calls are recorded (token stdio, agent = client name); `lettuce audit` shows them", async () => {
    const transport = await withEnv({ LETTUCE_EMBED_PROVIDER: "none" }, async () => new StdioClientTransport({ command: BUN, args: [MAIN, "stdio", root, "--scope", "write"], cwd: REPO, stderr: "pipe", env: { ...process.env } as Record<string, string> }));
    const client = new Client({ name: "stdio-auditor", version: "1.0.0" });
    await client.connect(transport);
    try {
      await client.callTool({ name: "read_note", arguments: { path: "Recipes/Menemen.md" } });
      const bad: any = await client.callTool({ name: "read_note", arguments: { path: "../etc/passwd" } });
      expect(bad.kind).toBe("path-invalid");
      await client.callTool({ name: "append_log", arguments: { op: "note", title: "Audited", body: SECRET } });
    } finally {
      await client.close();
    }
    // The server flushes its buffer when it closes; the CLI reads state.db.
    const out = await waitFor(async () => {
      const r = await runLettuce(["audit", root, "--json", "--limit", "10"]);
      const entries = JSON.parse(r.stdout);
      return entries.length >= 3 ? entries : null;
    }, { what: "the stdio server's audit rows" });
    expect(out.slice(0, 3).map((e: any) => [e.tool, e.status, e.errorKind, e.targetId])).toEqual([
      ["append_log", "success", null, null],
      ["read_note", "error", "path-invalid", "../etc/passwd"],
      ["read_note", "success", null, "Recipes/Menemen.md"],
    ]);
    expect(out.every((e: any) => e.tokenName === "stdio" && e.agentName === "stdio-auditor")).toBe(true);
    expect(auditRows(root).includes(SECRET)).toBe(false);
    const text = await runLettuce(["audit", root, "--tool", "read_note", "--since", "1h"]);
    expect(text.code).toBe(0);
    expect(text.stdout.trim().split("\n")).toHaveLength(2);
    expect(text.stdout).toContain("error path-invalid");
    const bad = await runLettuce(["audit", root, "--since", "whenever"]);
    expect(bad.code).toBe(2);
  });

  test("retention: `lettuce config … auditRetentionDays` prunes older rows", async () => {
    const db = openStateDb(root);
    const old = Date.now() - 40 * 86_400_000;
    db.query("INSERT INTO audit_log(created_at, tool, status, token_name) VALUES (?, 'old_tool', 'success', 'x')").run(old);
    db.close();
    expect(JSON.parse((await runLettuce(["audit", root, "--json", "--tool", "old_tool"])).stdout)).toHaveLength(1);
    const set = await runLettuce(["config", root, "auditRetentionDays", "30"]);
    expect(set.stdout).toContain("auditRetentionDays=30");
    expect((await runLettuce(["config", root, "auditRetentionDays", "zero"])).code).toBe(2);
    expect(JSON.parse((await runLettuce(["audit", root, "--json", "--tool", "old_tool"])).stdout)).toEqual([]);
    expect(JSON.parse((await runLettuce(["audit", root, "--json", "--tool", "read_note"])).stdout)).toHaveLength(2);
  });

  test("the row cap (`auditMaxRows`) keeps the newest entries: at start, while serving, and from the CLI", async () => {
    expect((await runLettuce(["config", root, "auditMaxRows", "999"])).code).toBe(2);
    expect((await runLettuce(["config", root, "auditMaxRows", "1000"])).stdout).toContain("auditMaxRows=1000");
    const db = openStateDb(root);
    const ins = db.query("INSERT INTO audit_log(created_at, tool, status, token_name) VALUES (?, 'flood_tool', 'success', 'x')");
    const t0 = Date.now() - 3_600_000;
    db.transaction(() => {
      for (let i = 0; i < 2500; i++) ins.run(t0 + i);
    })();
    db.close();
    const rows = () => {
      const d = openStateDb(root);
      try {
        return d.query("SELECT count(*) AS n, max(created_at) AS newest FROM audit_log").get() as { n: number; newest: number };
      } finally {
        d.close();
      }
    };
    const s = await startTestServer({ root });
    try {
      await waitFor(() => rows().n <= 1000);
      // The newest of the flood stayed.
      expect(await s.call("query_audit_log", { tool: "flood_tool", from: new Date(t0 + 2499).toISOString() })).toHaveLength(1);
      // A running server prunes after a tenth of the cap's worth of new rows, not an hour later.
      for (let i = 0; i < 300; i++) await s.call("list_folders");
      await s.call("query_audit_log", { limit: 1 });
      await waitFor(() => rows().n <= 1000);
      expect(rows().n).toBeGreaterThan(900);
    } finally {
      await s.close();
    }
    const d = openStateDb(root);
    d.transaction(() => {
      for (let i = 0; i < 500; i++) d.query("INSERT INTO audit_log(created_at, tool, status, token_name) VALUES (?, 'late_tool', 'success', 'x')").run(Date.now());
    })();
    d.close();
    expect((await runLettuce(["audit", root, "--json", "--tool", "late_tool"])).code).toBe(0);
    expect(rows().n).toBe(1000);
  });

  test("a starting server prunes by the retention setting too", async () => {
    const db = openStateDb(root);
    db.query("INSERT INTO audit_log(created_at, tool, status, token_name) VALUES (?, 'old_tool', 'success', 'x')").run(Date.now() - 31 * 86_400_000);
    db.query("INSERT INTO audit_log(created_at, tool, status, token_name) VALUES (?, 'recent_tool', 'success', 'x')").run(Date.now() - 29 * 86_400_000);
    db.close();
    const s = await startTestServer({ root });
    try {
      // Pruning is background work: it takes its turn once the server is quiet, after other start-up passes.
      await waitFor(async () => (await s.call("query_audit_log", { tool: "old_tool", from: "2000-01-01T00:00:00Z" })).length === 0, { what: "the start-up prune", intervalMs: 300 });
      expect(await s.call("query_audit_log", { tool: "recent_tool" })).toHaveLength(1);
    } finally {
      await s.close();
    }
  });
});
