// The `lettuce` command line, run as a real child process (bun main.ts …).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { COMMANDS } from "../lib/cli/run";
import { openStateDb } from "../lib/store/state-db";
import { verifyToken } from "../lib/store/tokens";
import { VERSION } from "../lib/version";
import { BUN, exitedWithin, freePort, MAIN, runLettuce, spawnLettuce } from "./helpers/cli";
import { connectClient, copyVault, payload, REPO } from "./helpers/server";

setDefaultTimeout(60_000);

const TOKEN = /^[A-Za-z0-9_-]{43}$/; // URL-safe base64 of 32 bytes

let vault: string; // for token/index/search commands
let serveVault: string; // a separate copy that `serve` sees for the first time
beforeAll(() => {
  vault = copyVault();
  serveVault = copyVault();
});
afterAll(() => {
  for (const d of [vault, serveVault]) if (d) rmSync(d, { recursive: true, force: true });
});

function tokenWorks(root: string, token: string): string | null {
  const db = openStateDb(root);
  try {
    return verifyToken(db, token)?.scope ?? null;
  } finally {
    db.close();
  }
}

describe("help and version", () => {
  test("--help lists every command; --version prints the package version", async () => {
    const [help, version, bare] = await Promise.all([runLettuce(["--help"]), runLettuce(["--version"]), runLettuce([])]);
    expect(help.code).toBe(0);
    for (const c of COMMANDS) expect(help.stdout).toContain(c.name);
    // The version, then the commit and build date (tests/binaries-version.test.ts checks those).
    expect(version.code).toBe(0);
    expect(version.stdout).toStartWith(`lettuce ${VERSION} (commit `);
    expect(VERSION).toBe((await Bun.file(join(REPO, "package.json")).json()).version);
    // No command at all is a usage mistake, answered with the help.
    expect(bare.code).not.toBe(0);
    expect(bare.stdout + bare.stderr).toContain("Usage: lettuce");
  });

  test("the command list's summaries are the commands' own (commands load lazily)", async () => {
    for (const c of COMMANDS) {
      const cmd = await c.load();
      expect(cmd.name).toBe(c.name);
      expect(cmd.summary).toBe(c.summary);
    }
  });

  test("every command has --help", async () => {
    const results = await Promise.all(COMMANDS.map((c) => runLettuce([c.name, "--help"])));
    results.forEach((r, i) => {
      expect(r.code, COMMANDS[i]!.name).toBe(0);
      expect(r.stdout).toContain(COMMANDS[i]!.name);
      expect(r.stdout.trim().length).toBeGreaterThan(20);
    });
  });
});

describe("bad use: non-zero exit and a clear message", () => {
  test("a vault the user may not write in: what Lettuce needs there, not a bare errno", async () => {
    // Root writes anywhere: the refusal needs another user (nobody, through su) able to run this checkout's Bun.
    const asNobody = (cmd: string) => Bun.spawnSync(["su", "-s", "/bin/sh", "nobody", "-c", cmd], { stdout: "pipe", stderr: "pipe" });
    if (process.getuid?.() !== 0 || asNobody(`${JSON.stringify(BUN)} --version`).exitCode !== 0) {
      console.log("skip: the read-only vault check needs root and a Bun the user nobody can run");
      return;
    }
    const ro = copyVault();
    try {
      Bun.spawnSync(["chmod", "-R", "a-w", ro]);
      Bun.spawnSync(["chmod", "a+rx", join(ro, "..")]);
      const r = asNobody(`cd ${JSON.stringify(REPO)} && ${JSON.stringify(BUN)} ${JSON.stringify(MAIN)} index ${JSON.stringify(ro)}`);
      expect(r.exitCode).toBe(1);
      const err = r.stderr.toString();
      expect(err).toContain("permission denied");
      expect(err).toContain("give your user write access");
      expect(err).not.toContain("    at ");
    } finally {
      Bun.spawnSync(["chmod", "-R", "u+w", ro]);
      rmSync(ro, { recursive: true, force: true });
    }
  });


  test("unknown command, missing vault, vault that is a file, missing arguments", async () => {
    const [unknown, missing, file, noArg, serveFile, badScope, noScope] = await Promise.all([
      runLettuce(["frobnicate"]),
      runLettuce(["index", join(vault, "no-such-dir")]),
      runLettuce(["index", join(vault, "index.md")]),
      runLettuce(["index"]),
      runLettuce(["serve", join(vault, "index.md"), "--port", "0"]),
      runLettuce(["stdio", vault, "--scope", "admin"]),
      runLettuce(["token", "create", vault, "--name", "x"]),
    ]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/unknown command "frobnicate"/);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/Vault not found: .*no-such-dir does not exist/);
    expect(file.code).not.toBe(0);
    expect(file.stderr).toMatch(/not a directory/);
    expect(noArg.code).not.toBe(0);
    expect(noArg.stderr).toMatch(/vault path/);
    expect(serveFile.code).not.toBe(0);
    expect(serveFile.stderr).toMatch(/not a directory/);
    expect(badScope.code).not.toBe(0);
    expect(badScope.stderr).toMatch(/--scope must be read, propose or write/);
    expect(noScope.code).not.toBe(0);
    expect(noScope.stderr).toMatch(/--scope/);
    for (const r of [unknown, missing, file, noArg, serveFile, badScope, noScope]) expect(r.stderr).not.toMatch(/\n\s+at /); // no stack traces
    // Each says what was wrong with what was typed.
    const [adminScope, badSub, badId, emptyQuery] = await Promise.all([
      runLettuce(["token", "create", vault, "--name", "x", "--scope", "admin"]),
      runLettuce(["token", "delete", vault]),
      runLettuce(["revert", vault, "abc"]),
      runLettuce(["search", vault, ""]),
    ]);
    expect(adminScope.stderr).toContain('no scope "admin"');
    expect(badSub.stderr).toContain('unknown subcommand "delete"');
    expect(badId.stderr).toContain('ID needs a whole number, got "abc"');
    expect(badId.stderr).not.toContain("--ID");
    expect(emptyQuery.code).toBe(2);
    expect(emptyQuery.stderr).toContain("search needs a vault and a query");
    // A mistyped flag names the flags there are, not Node's advice on positional arguments.
    const [badFlag, noOptions] = await Promise.all([runLettuce(["search", vault, "x", "--bogus"]), runLettuce(["config", vault, "--json"])]);
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toContain("unknown option --bogus; the options are --json, --limit VALUE, --semantic, --hybrid");
    expect(noOptions.code).toBe(2);
    expect(noOptions.stderr).toContain("unknown option --json; this command takes no options");
    expect(badFlag.stderr + noOptions.stderr).not.toContain("positional argument");
  });

  test("serve on a port that is already taken", async () => {
    const holder = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("busy") });
    try {
      const r = await runLettuce(["serve", vault, "--port", String(holder.port)]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(new RegExp(`Port ${holder.port} .*already in use`));
      expect(r.stdout).not.toMatch(/First run/);
    } finally {
      holder.stop(true);
    }
  });

  test("serve on a host that is no address of this machine", async () => {
    const r = await runLettuce(["serve", vault, "--host", "not a host!", "--port", "0"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Cannot listen on "not a host!": it is not an address of this machine');
  });
});

describe("token", () => {
  test("create --json, create (plain), list, revoke", async () => {
    const json = await runLettuce(["token", "create", vault, "--scope", "read", "--name", "x", "--json"]);
    expect(json.code).toBe(0);
    const created = JSON.parse(json.stdout);
    // (Not toMatchObject with expect.stringMatching: Bun 1.4.5 writes the matcher into the received object.)
    expect([created.name, created.scope]).toEqual(["x", "read"]);
    expect(created.token).toMatch(TOKEN);
    expect(tokenWorks(vault, created.token)).toBe("read");

    const plain = await runLettuce(["token", "create", vault, "--scope", "write", "--name", "y"]);
    expect(plain.code).toBe(0);
    const last = plain.stdout.trimEnd().split("\n").at(-1)!;
    expect(last).toMatch(TOKEN);
    expect(tokenWorks(vault, last)).toBe("write");

    const dup = await runLettuce(["token", "create", vault, "--scope", "read", "--name", "x"]);
    expect(dup.code).not.toBe(0);
    expect(dup.stderr).toMatch(/already exists/);

    const list = await runLettuce(["token", "list", vault]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/\bx\tread\b/);
    expect(list.stdout).toMatch(/\by\twrite\b/);
    expect(list.stdout).not.toContain(created.token); // tokens are shown once, never listed
    const listed = JSON.parse((await runLettuce(["token", "list", vault, "--json"])).stdout);
    expect(listed.map((t: any) => t.name)).toEqual(["x", "y"]);
    expect(JSON.stringify(listed)).not.toContain(created.token);

    const revoke = await runLettuce(["token", "revoke", vault, "x"]);
    expect(revoke.code).toBe(0);
    expect(tokenWorks(vault, created.token)).toBeNull();
    expect(JSON.parse((await runLettuce(["token", "list", vault, "--json"])).stdout).map((t: any) => t.name)).toEqual(["y"]);
    const again = await runLettuce(["token", "revoke", vault, "x"]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/no active token/);
  });
});

describe("index and search", () => {
  test("index builds the index, a second run reads nothing new", async () => {
    const first = await runLettuce(["index", vault, "--json"]);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ notes: 21, changed: 21, deleted: 0 });
    const second = await runLettuce(["index", vault]);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/Indexed 21 notes \(0 new or changed, 0 removed\)/);
  });

  test("on a terminal, index shows a progress bar (a pseudo-terminal from script(1)); in a pipe it does not", async () => {
    const fresh = copyVault();
    try {
      const proc = Bun.spawn(["script", "-qec", `${BUN} ${MAIN} index '${fresh}'`, "/dev/null"], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
      const out = await new Response(proc.stdout).text();
      expect(await proc.exited).toBe(0);
      expect(out).toMatch(/Indexing \[.*\] 21\/21 notes/);
      expect(out).toContain("Indexed 21 notes");
      const piped = await runLettuce(["index", fresh]);
      expect(piped.stdout + piped.stderr).not.toContain("Indexing [");
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });

  test("search --json and plain", async () => {
    const json = await runLettuce(["search", vault, "cozum", "--json"]);
    expect(json.code).toBe(0);
    const res = JSON.parse(json.stdout);
    expect(res.items.map((i: any) => i.path).sort()).toEqual(["Projects/2026/Lettuce Roadmap 2026.md", "Projects/2026/Q1 Retro.md", "Projects/Lettuce.md"]);
    expect(res.total).toBe(3);
    const multi = JSON.parse((await runLettuce(["search", vault, "raised", "beds", "--json"])).stdout);
    expect(multi.items.map((i: any) => i.path)).toEqual(["Garden/Garden Plan.md"]);
    const plain = await runLettuce(["search", vault, "menemen"]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain("Recipes/Menemen.md");
    const none = await runLettuce(["search", vault, "zzyzx"]);
    expect(none).toMatchObject({ code: 0, stdout: "No matches.\n" });
  });
});

describe("serve", () => {
  test("first run prints a token and client configuration; the SDK client connects with it; the second run prints no new token", async () => {
    const port = freePort();
    const first = spawnLettuce(["serve", serveVault, "--port", String(port)]);
    let token: string;
    try {
      await first.waitForStdout(/Index current: 21 notes/);
      const out = first.stdout();
      const url = `http://127.0.0.1:${port}/mcp`;
      expect(out).toContain(`MCP endpoint: ${url}`);
      expect(out).toMatch(/First run/);
      token = out.match(/shown only this once:\s*\n\s*([A-Za-z0-9_-]{43})\s*\n/)![1]!;
      expect(token).toMatch(TOKEN);
      // Ready-to-paste configuration carrying that token.
      expect(out).toContain(`claude mcp add --transport http lettuce ${url} --header "Authorization: Bearer ${token}"`);
      const config = JSON.parse(out.slice(out.indexOf("{"), out.lastIndexOf("}") + 1));
      expect(config).toEqual({ mcpServers: { lettuce: { url, headers: { Authorization: `Bearer ${token}` } } } });

      const c = await connectClient(url, token);
      expect(c.getServerVersion()?.name).toBe("lettuce");
      expect(payload(await c.callTool({ name: "get_vault_info", arguments: {} }))).toMatchObject({ noteCount: 21, capabilities: { proposeOnly: false } });
      expect(payload(await c.callTool({ name: "search", arguments: { query: "cozum" } })).total).toBe(3);
      await c.close();
    } finally {
      expect(await first.stop()).toBe(0);
    }

    const port2 = freePort();
    const second = spawnLettuce(["serve", serveVault, "--port", String(port2)]);
    try {
      await second.waitForStdout(/Index current: 21 notes \(0 new or changed\)/);
      expect(second.stdout()).not.toMatch(/First run|shown only/);
      // No token; the web UI's one-time login code (same alphabet, its own line) is not one.
      expect(second.stdout().replace(/\/login\?code=[\w-]+/, "/login?code=…")).not.toMatch(/\b[A-Za-z0-9_-]{43}\b/);
      expect(second.stdout()).toMatch(/\/login\?code=[\w-]{43}\n/);
      const c = await connectClient(`http://127.0.0.1:${port2}/mcp`, token);
      expect((await c.listTools()).tools.length).toBeGreaterThan(5);
      await c.close();
      // While it runs, the server owns the index: a second serve is refused and `index` leaves it alone.
      const third = await runLettuce(["serve", serveVault, "--port", String(freePort())]);
      expect(third.code).toBe(1);
      expect(third.stderr).toContain(`already served by pid ${second.proc.pid}`);
      const idx = await runLettuce(["index", serveVault]);
      expect(idx).toMatchObject({ code: 0 });
      expect(idx.stdout).toContain("is serving this vault and keeps its index current");
      const idxJson = await runLettuce(["index", serveVault, "--json"]);
      expect(JSON.parse(idxJson.stdout)).toEqual({ served: { pid: second.proc.pid, url: expect.stringContaining("http://127.0.0.1:") }, indexed: false });
    } finally {
      await second.stop();
    }
    // Once it has stopped, the CLI indexes again.
    expect((await runLettuce(["index", serveVault])).stdout).toMatch(/^Indexed 21 notes/);
  });
});

describe("stdio", () => {
  // The lifecycle audit of 2026-12-05: a client that closed stdin and then stdout with an answer unread, and
  // exited, left the process running for good as an orphan holding the index (its users/ file blocked every
  // rebuild); one that closed stdout while the process still wrote crashed it on an uncaught EPIPE.
  for (const [calls, how] of [
    [2, "one answer unread"],
    [300, "hundreds of calls unread"],
  ] as const) {
    test(`a client that exits with ${how} leaves no process behind`, async () => {
      const big = copyVault();
      writeFileSync(join(big, "Big.md"), "# Big\n\n" + "lorem ipsum dolor ".repeat(12_000));
      // The client: starts stdio, sends its calls, reads nothing, closes both pipes, says the child's pid, exits.
      const client = `
        const { spawn } = require("node:child_process");
        const child = spawn(${JSON.stringify(BUN)}, [${JSON.stringify(MAIN)}, "stdio", ${JSON.stringify(big)}, "--scope", "read"], { stdio: ["pipe", "pipe", "ignore"] });
        const send = (m) => child.stdin.write(JSON.stringify(m) + "\\n");
        send({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
        for (let i = 1; i < ${calls}; i++) send({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "read_note", arguments: { path: "Big.md" } } });
        setTimeout(() => { child.stdin.end(); child.stdout.destroy(); console.log(child.pid); process.exit(0); }, 3000);`;
      const out = await new Response(Bun.spawn([BUN, "-e", client], { stdout: "pipe", stderr: "inherit" }).stdout).text();
      const pid = Number(out.trim());
      expect(pid).toBeGreaterThan(0);
      expect(await exitedWithin(pid, 20_000)).toBe(true);
      expect(readdirSync(join(big, ".lettuce", "users"))).toEqual([]);
      rmSync(big, { recursive: true, force: true });
    }, 60_000);
  }

  test("answers still queued when stdin ends all go out before the process exits", async () => {
    const lines = [JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })];
    // Answers of ~400 KB each: 16 MB in all, far past what a pipe holds.
    const big = copyVault();
    writeFileSync(join(big, "Big.md"), "# Big\n\n" + "A line of the big note, long enough to add up.\n".repeat(8000));
    for (let i = 1; i <= 40; i++) lines.push(JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "read_note", arguments: { path: "Big.md" } } }));
    const proc = Bun.spawn([BUN, MAIN, "stdio", big, "--scope", "read"], { cwd: REPO, stdin: new Blob([lines.join("\n") + "\n"]), stdout: "pipe", stderr: "ignore" });
    // Nobody reads for a while: the answers (far past a pipe's 64 KB) wait in the process, stdin long closed.
    await Bun.sleep(1500);
    const out = await new Response(proc.stdout).text();
    expect(await proc.exited).toBe(0);
    const ids = out.trim().split("\n").map((l) => JSON.parse(l).id);
    expect(new Set(ids).size).toBe(41);
    rmSync(big, { recursive: true, force: true });
  }, 60_000);

  test("a long poll in flight when stdin ends does not keep the process alive (it waited up to 55 s)", async () => {
    const proc = Bun.spawn([BUN, MAIN, "stdio", vault, "--scope", "read"], { cwd: REPO, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
    const reader = proc.stdout.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    const next = async (): Promise<any> => {
      for (;;) {
        const nl = buf.indexOf("\n");
        if (nl !== -1) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          return JSON.parse(line);
        }
        const { value, done } = await reader.read();
        if (done) return null;
        buf += decoder.decode(value, { stream: true });
      }
    };
    const send = (m: unknown) => proc.stdin.write(JSON.stringify(m) + "\n");
    send({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
    send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "await_directives", arguments: { cursor: 0 } } });
    await proc.stdin.flush();
    expect((await next()).id).toBe(0);
    const first = await next(); // the backlog, at once
    const { cursor } = JSON.parse(first.result.content[0].text);
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "await_directives", arguments: { cursor, timeout_ms: 55_000 } } });
    await proc.stdin.flush();
    await Bun.sleep(1000); // parked: nothing changes in the vault
    const t0 = Date.now();
    await proc.stdin.end();
    const last = await next();
    expect(await proc.exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(last.id).toBe(2); // answered (cancelled), not dropped
  }, 90_000);

  test("a client that sends 600 calls at once and reads slowly gets every answer (stdin is read only as calls are answered)", async () => {
    const proc = Bun.spawn([BUN, MAIN, "stdio", vault, "--scope", "read"], { cwd: REPO, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
    try {
      const N = 600;
      const lines = [JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })];
      for (let i = 1; i <= N; i++) lines.push(JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "list_notes", arguments: { limit: 100 } } }));
      // Written from one task, read by another, slowly at first: the server must pause and go on, never drop.
      const writer = (async () => {
        for (const l of lines) {
          proc.stdin.write(l + "\n");
          await proc.stdin.flush();
        }
        await proc.stdin.end();
      })();
      const seen = new Set<number>();
      const reader = proc.stdout.getReader();
      let buf = "";
      const decoder = new TextDecoder();
      await Bun.sleep(500);
      while (seen.size < N + 1) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf("\n")) !== -1) {
          const msg = JSON.parse(buf.slice(0, nl));
          buf = buf.slice(nl + 1);
          expect(msg.error).toBeUndefined();
          seen.add(msg.id);
        }
        if (seen.size < 50) await Bun.sleep(20);
      }
      await writer;
      expect(seen.size).toBe(N + 1);
    } finally {
      proc.kill();
      await proc.exited;
    }
  }, 60_000);

  test("the SDK's stdio client talks to `lettuce stdio` with the read scope", async () => {
    const transport = new StdioClientTransport({ command: BUN, args: [MAIN, "stdio", vault, "--scope", "read"], cwd: REPO, stderr: "pipe" });
    const c = new Client({ name: "lettuce-stdio-test", version: "1.0.0" });
    await c.connect(transport);
    try {
      expect(c.getServerVersion()?.name).toBe("lettuce");
      const { tools } = await c.listTools();
      expect(tools.map((t) => t.name)).toContain("search");
      const hits = payload(await c.callTool({ name: "search", arguments: { query: "cozum" } }));
      expect(hits.total).toBe(3);
      const info = payload(await c.callTool({ name: "get_vault_info", arguments: {} }));
      expect(info).toMatchObject({ noteCount: 21, capabilities: { proposeOnly: false } });
      const bad: any = await c.callTool({ name: "read_note", arguments: { path: "../x.md" } });
      expect(bad).toMatchObject({ isError: true, kind: "path-invalid" });
    } finally {
      await c.close();
    }
  });
});
