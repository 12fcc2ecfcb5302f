// Who may read and write what, on disk (the lifecycle audit of 2026-12-05): .lettuce/ holds every note's
// text and the token hashes; a write replaces a note with a new file, made by this process under its umask;
// a person may make a note read-only.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openIndexDb } from "../lib/store/index-db";
import { BUN, exitedWithin, freePort, httpMcp, MAIN, runLettuce, servedVault, spawnLettuce } from "./helpers/cli";
import { startTestServer, tempDir, waitFor, type TestServer } from "./helpers/server";

// Running Lettuce as another user (nobody): needs root, setpriv, and a checkout that user may read (a clone in
// a 0700 temp folder is not: then the cases skip, saying why).
const AS_NOBODY = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"];
const nobodyRunsLettuce = () => process.getuid?.() === 0 && Bun.spawnSync([...AS_NOBODY, BUN, MAIN, "--version"]).exitCode === 0;
const NOBODY_SKIP = "needs root, setpriv and a checkout the user nobody may read, to run Lettuce as another user";

test(".lettuce/ is closed to other users, new or already there, and keeps the vault's group bits", () => {
  const root = tempDir("lettuce-modes-");
  try {
    chmodSync(root, 0o2775); // a vault shared through a group
    const before = process.umask(0o022);
    try {
      openIndexDb(root).close();
    } finally {
      process.umask(before);
    }
    // Closed to others; the group's bits and the setgid bit kept, so files made inside keep the shared group.
    expect(statSync(join(root, ".lettuce")).mode & 0o7777).toBe(0o2770);
    // One an older Lettuce made world-readable is closed at the next open.
    chmodSync(join(root, ".lettuce"), 0o755);
    openIndexDb(root).close();
    expect(statSync(join(root, ".lettuce")).mode & 0o007).toBe(0);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

describe("an agent's write to a note on a shared vault", () => {
  let s: TestServer;
  beforeAll(async () => {
    const root = tempDir("lettuce-shared-");
    mkdirSync(join(root, "Shared"), { recursive: true });
    writeFileSync(join(root, "Shared", "plan.md"), "# Plan\n\nfirst\n");
    writeFileSync(join(root, "Shared", "contract.md"), "# Contract\n\nsigned [[plan]]\n");
    writeFileSync(join(root, "Shared", "links.md"), "# Links\n\n[[plan]]\n");
    s = await startTestServer({ root });
  });
  afterAll(() => s.close());

  test("keeps the note's mode bits under any umask, and its owner and group", async () => {
    const file = join(s.root, "Shared", "plan.md");
    chmodSync(file, 0o664);
    const asRoot = process.getuid?.() === 0;
    if (asRoot) chownSync(file, 1234, 1234); // another person's note, on a vault the server's user shares
    const before = process.umask(0o077);
    try {
      await s.call("apply_edits", { path: "Shared/plan.md", edits: [{ find: "first", replace: "second" }] });
    } finally {
      process.umask(before);
    }
    const st = statSync(file);
    expect(readFileSync(file, "utf8")).toContain("second");
    expect(st.mode & 0o7777).toBe(0o664);
    if (asRoot) expect([st.uid, st.gid]).toEqual([1234, 1234]);
  });

  test("a private note moved with its own links rewritten stays private", async () => {
    // Written at its new path, where nothing was yet: it came back 644, owned by the server's user (the review).
    const file = join(s.root, "Shared", "diary.md");
    writeFileSync(file, "# Diary\n\nsee [the plan](plan.md)\n");
    chmodSync(file, 0o600);
    await s.vault.indexer.fullScan();
    await s.call("move_note", { from: "Shared/diary.md", to: "Private/diary.md" });
    const now = join(s.root, "Private", "diary.md");
    expect(readFileSync(now, "utf8")).toContain("](../Shared/plan.md)");
    expect(statSync(now).mode & 0o777).toBe(0o600);
  });

  test("a note the person made read-only keeps that bit after an agent's edit (immutablePaths is the setting that refuses)", async () => {
    const file = join(s.root, "Shared", "contract.md");
    chmodSync(file, 0o444);
    await s.call("apply_edits", { path: "Shared/contract.md", edits: [{ find: "signed", replace: "countersigned" }] });
    expect(readFileSync(file, "utf8")).toContain("countersigned");
    expect(statSync(file).mode & 0o777).toBe(0o444);
    chmodSync(file, 0o644);
  });
});

test("on a read-only file system doctor says nothing is damaged (never to delete a store), and a command that writes says what it needs", async () => {
  const vault = tempDir("lettuce-ro-");
  const mount = tempDir("lettuce-ro-mount-");
  writeFileSync(join(vault, "a.md"), "# A\n");
  try {
    expect((await runLettuce(["index", vault])).code).toBe(0);
    const script = `mount --bind ${vault} ${mount} && mount -o remount,bind,ro ${mount} && ${BUN} ${MAIN} doctor ${mount}; echo ----; ${BUN} ${MAIN} token create ${mount} --name x --scope read 2>&1`;
    const p = Bun.spawn(["unshare", "-U", "-r", "-m", "sh", "-c", script], { stdout: "pipe", stderr: "pipe" });
    const [out, err] = [await new Response(p.stdout).text(), await new Response(p.stderr).text()];
    await p.exited;
    if (!out.includes("vault")) {
      console.log(`hardening-lifecycle: read-only mount case skipped: no user and mount namespaces here (${err.trim().slice(0, 120)})`);
      return;
    }
    const [doctor, token] = out.split("----\n");
    expect(doctor).toContain("nothing is damaged");
    expect(doctor).not.toMatch(/delete .*index\.db|move .*state\.db aside/);
    // A command that must write says what Lettuce needs there, not SQLite's "unable to open database file".
    expect(token).toContain("give your user write access");
  } finally {
    rmSync(vault, { recursive: true, force: true });
    rmSync(mount, { recursive: true, force: true });
  }
}, 60_000);

test("a note the server's user may not read is permission-denied to read_note, and doctor names it", async () => {
  const root = tempDir("lettuce-unreadable-");
  chmodSync(root, 0o777);
  writeFileSync(join(root, "open.md"), "# Open\n", { mode: 0o666 });
  writeFileSync(join(root, "diary.md"), "# Diary\n\nprivate\n", { mode: 0o600 });
  chmodSync(join(root, "diary.md"), 0o600);
  const asNobody = [...AS_NOBODY, BUN, MAIN];
  try {
    if (!nobodyRunsLettuce()) {
      console.log(`hardening-lifecycle: unreadable-note case skipped: ${NOBODY_SKIP}`);
      return;
    }
    const lines = [
      { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } },
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "read_note", arguments: { path: "diary.md" } } },
    ];
    const p = Bun.spawn([...asNobody, "stdio", root], { stdin: new Blob([lines.map((l) => JSON.stringify(l)).join("\n") + "\n"]), stdout: "pipe", stderr: "pipe", env: { ...process.env, LETTUCE_EMBED_PROVIDER: "none" } });
    const out = await new Response(p.stdout).text();
    await p.exited;
    const answer = out.trim().split("\n").map((l) => JSON.parse(l)).find((m) => m.id === 1);
    expect(answer.result.kind).toBe("permission-denied");
    const doctor = Bun.spawnSync([...asNobody, "doctor", root], { env: { ...process.env, LETTUCE_EMBED_PROVIDER: "none" } });
    const text = doctor.stdout.toString();
    expect(text).toContain("1 note this user may not read (diary.md)");
    expect(text).not.toContain("run `lettuce index");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}, 60_000);

test("a folder the server's user may not read neither turns on the periodic full scan nor logs a stack", async () => {
  const root = tempDir("lettuce-lostfound-");
  chmodSync(root, 0o777);
  mkdirSync(join(root, "notes"), { mode: 0o777 });
  chmodSync(join(root, "notes"), 0o777);
  writeFileSync(join(root, "notes", "a.md"), "# A\n", { mode: 0o666 });
  mkdirSync(join(root, "lost+found"), { mode: 0o700 }); // root's, as at the top of a mounted drive
  chmodSync(join(root, "lost+found"), 0o700);
  if (!nobodyRunsLettuce()) {
    console.log(`hardening-lifecycle: unreadable-folder case skipped: ${NOBODY_SKIP}`);
    rmSync(root, { recursive: true, force: true });
    return;
  }
  const port = freePort();
  const server = spawnLettuce(["serve", root, "--port", String(port)], { prefix: AS_NOBODY, env: { LETTUCE_EMBED_PROVIDER: "none" } });
  try {
    await server.waitForStdout(/Index current/, 60_000);
    const token = /Bearer ([\w-]{43})/.exec(server.stdout())?.[1] ?? /\n([\w-]{43})\n/.exec(server.stdout())?.[1];
    expect(token).toBeDefined();
    const info = await httpMcp(port, token!).call("get_vault_info");
    expect(info.indexing.watchProblem).toBeUndefined();
    expect(server.stderr()).not.toMatch(/full scan|\n\s+at /);
    writeFileSync(join(root, "notes", "b.md"), "# B\n\nfreshly written\n", { mode: 0o666 });
    await waitFor(async () => (await httpMcp(port, token!).call("search", { query: "freshly" })).total === 1, { what: "b.md indexed by the watch" });
  } finally {
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  }
}, 90_000);

test("a serve stopped by SIGTERM during a long write answers it before it exits", async () => {
  const root = tempDir("lettuce-stop-");
  mkdirSync(join(root, "links"), { recursive: true });
  writeFileSync(join(root, "Target.md"), "# Target\n");
  for (let i = 0; i < 3000; i++) writeFileSync(join(root, "links", `l${i}.md`), `# L${i}\n\nsee [[Target]]\n`);
  const { server, mcp, close } = await servedVault(root, { scope: "write" });
  try {
    const call = mcp.call("move_note", { from: "Target.md", to: "Moved.md" });
    await Bun.sleep(300);
    server.proc.kill("SIGTERM");
    const moved = await call; // answered, not a reset connection
    expect(moved.notesUpdated.length).toBe(3000);
    expect(await server.proc.exited).toBe(0);
    expect(readFileSync(join(root, "links", "l2999.md"), "utf8")).toContain("[[Moved]]");
    expect(readdirSync(join(root, "links")).filter((n) => n.startsWith(".lettuce-tmp"))).toEqual([]);
  } finally {
    await close();
  }
}, 120_000);

test("a serve stopped with a web UI tab open exits at once", async () => {
  const root = tempDir("lettuce-stop-tab-");
  writeFileSync(join(root, "a.md"), "# A\n");
  const { port, server, close } = await servedVault(root);
  try {
    const login = /(http:\/\/\S+\/login\?code=[\w-]+)/.exec(server.stdout())![1]!;
    const res = await fetch(login, { redirect: "manual" });
    const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
    const events = await fetch(`http://127.0.0.1:${port}/api/events`, { headers: { cookie } });
    const reader = events.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("hello"); // the tab's stream is open
    const t0 = performance.now();
    server.proc.kill("SIGTERM");
    expect(await server.proc.exited).toBe(0);
    // It waited out its whole 10 s grace for the tab's stream.
    expect(performance.now() - t0).toBeLessThan(3000);
    await reader.cancel().catch(() => {});
  } finally {
    await close();
  }
}, 60_000);

test("a stdio client that exits with a write under way: the write finishes whole, then the process exits", async () => {
  const root = tempDir("lettuce-stdio-inflight-");
  mkdirSync(join(root, "src"), { recursive: true });
  writeFileSync(join(root, "Target.md"), "# Target\n");
  for (let i = 0; i < 12000; i++) writeFileSync(join(root, "src", `n${i}.md`), `# N${i}\n\nSee [[Target]].\n`);
  try {
    expect((await runLettuce(["index", root])).code).toBe(0);
    const client = `
      const { spawn } = require("node:child_process");
      const child = spawn(${JSON.stringify(BUN)}, [${JSON.stringify(MAIN)}, "stdio", ${JSON.stringify(root)}, "--scope", "write"], { stdio: ["pipe", "pipe", "ignore"], env: { ...process.env, LETTUCE_EMBED_PROVIDER: "none" } });
      const send = (m) => child.stdin.write(JSON.stringify(m) + "\\n");
      send({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
      let n = 0;
      child.stdout.on("data", () => {
        if (n++ > 0) return;
        send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "move_note", arguments: { from: "Target.md", to: "moved/Target2.md" } } });
        setTimeout(() => { console.log(child.pid); process.exit(0); }, 200);
      });`;
    const pid = Number((await new Response(Bun.spawn([BUN, "-e", client], { stdout: "pipe" }).stdout).text()).trim());
    expect(await exitedWithin(pid, 60_000)).toBe(true);
    // Whole: every link rewritten and the note moved, not cut off half-way by the exit.
    expect(existsSync(join(root, "moved", "Target2.md"))).toBe(true);
    const stale = readdirSync(join(root, "src")).filter((n) => readFileSync(join(root, "src", n), "utf8").includes("[[Target]]"));
    expect(stale).toEqual([]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}, 120_000);
