// Files the vault's own scan never indexes can still sit at a path a tool
// opens by name: AGENTS.md (get_vault_info), eval/questions.jsonl (eval), or
// a note swapped for something else since it was indexed. None of them may
// lead out of the vault (a symlink) or hold the server (a FIFO, whose plain
// open waits for a writer on the thread that answers every caller).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";

const OUTSIDE_MARKER = "outsidesecretmarker";

describe("AGENTS.md and eval questions are read only as regular files in the vault", () => {
  let s: TestServer;
  let outside: string;
  beforeAll(async () => {
    outside = tempDir("lettuce-outside-");
    writeFileSync(join(outside, "secret.txt"), `PRIVATE ${OUTSIDE_MARKER}\n`);
    writeFileSync(join(outside, "q.jsonl"), JSON.stringify({ question: `what is ${OUTSIDE_MARKER}`, expected_paths: ["x.md"] }) + "\n");
    s = await startTestServer();
  });
  afterAll(async () => {
    await s?.close();
    rmSync(outside, { recursive: true, force: true });
  });

  test("a symlinked AGENTS.md is not followed out of the vault", async () => {
    rmSync(join(s.root, "AGENTS.md"));
    symlinkSync(join(outside, "secret.txt"), join(s.root, "AGENTS.md"));
    const info = await s.call("get_vault_info", {}, "read");
    expect(info.agentsFile).toBeNull();
    expect(JSON.stringify(info)).not.toContain(OUTSIDE_MARKER);
  });

  test("a symlinked eval/questions.jsonl is refused, its lines never echoed", async () => {
    mkdirSync(join(s.root, "eval"), { recursive: true });
    symlinkSync(join(outside, "q.jsonl"), join(s.root, "eval/questions.jsonl"));
    const res: any = await s.callRaw("eval", {}, "read");
    expect(res).toMatchObject({ isError: true, kind: "path-invalid" });
    expect(res.content[0].text).not.toContain(OUTSIDE_MARKER);
  });

  test("a long AGENTS.md comes back bounded, and says so", async () => {
    rmSync(join(s.root, "AGENTS.md"));
    const line = "Always cite the note you used, and keep answers short. Ünïcödé. ";
    writeFileSync(join(s.root, "AGENTS.md"), line.repeat(4000)); // ~260 KB
    const info = await s.call("get_vault_info", {}, "read");
    expect(Buffer.byteLength(info.agentsFile)).toBeLessThanOrEqual(64 * 1024);
    expect(Buffer.byteLength(info.agentsFile)).toBeGreaterThan(60 * 1024);
    expect(info.agentsFile).not.toContain("\uFFFD"); // never a character cut in half
    expect(info.agentsFileTruncated).toBe(true);
    writeFileSync(join(s.root, "AGENTS.md"), "# Short brief\n");
    const short = await s.call("get_vault_info", {}, "read");
    expect(short.agentsFile).toBe("# Short brief\n");
    expect(short).not.toHaveProperty("agentsFileTruncated");
  });
});

describe("a FIFO where a file is expected never holds the server", () => {
  let s: TestServer;
  let feeder: ChildProcess | null = null;
  const fifos: string[] = [];
  beforeAll(async () => {
    s = await startTestServer(); // no watcher: the index keeps the note the disk no longer has
    for (const rel of ["AGENTS.md", "Inbox/quick-thought.md", "Projects/Lettuce.md"]) {
      rmSync(join(s.root, rel));
      expect(spawnSync("mkfifo", [join(s.root, rel)]).status).toBe(0);
      fifos.push(join(s.root, rel));
    }
    // Were the server to open a FIFO the plain way, it would wait for a writer for ever, and this
    // test process with it (the server runs in it). The feeder is that writer, two seconds on:
    // without the fix the calls below come back late with its bytes, rather than never.
    const loop = fifos.map((f) => `(while true; do echo ${OUTSIDE_MARKER} > '${f}'; done) &`).join(" ");
    feeder = spawn("sh", ["-c", `sleep 2; ${loop} wait`], { stdio: "ignore", detached: true });
  });
  afterAll(async () => {
    if (feeder?.pid) {
      try {
        process.kill(-feeder.pid, "SIGKILL");
      } catch {
        /* gone */
      }
    }
    await s?.close();
  });

  test("get_vault_info: no brief", async () => {
    const info = await s.call("get_vault_info", {}, "read");
    expect(info.agentsFile).toBeNull();
  });

  test("read tools answer not-found or path-invalid, never the pipe's bytes", async () => {
    for (const [tool, args] of [
      ["read_note", { path: "Inbox/quick-thought.md" }],
      ["get_page", { pageId: "Projects/Lettuce.md" }],
      ["get_pages", { pageIds: ["Projects/Lettuce.md"] }],
    ] as const) {
      const res: any = await s.callRaw(tool, args, "read");
      expect(res.content[0].text, tool).not.toContain(OUTSIDE_MARKER);
      if (tool === "read_note") expect(res).toMatchObject({ isError: true, kind: "note-not-found" });
    }
    const resource: any = await (await s.client("read")).readResource({ uri: "lettuce://note/Projects/Lettuce.md" }).catch((e: Error) => ({ error: e.message }));
    expect(JSON.stringify(resource)).not.toContain(OUTSIDE_MARKER);
  });

  test("write tools refuse to read or replace it", async () => {
    for (const [tool, args] of [
      ["write_note", { path: "Inbox/quick-thought.md", content: "# New\n", overwrite: true }],
      ["apply_edits", { path: "Projects/Lettuce.md", edits: [{ find: "Lettuce", replace: "Kale" }] }],
    ] as const) {
      const res: any = await s.callRaw(tool, args, "write");
      expect(res.isError, `${tool}: ${res.content[0].text}`).toBe(true);
      expect(res.content[0].text).not.toContain(OUTSIDE_MARKER);
    }
    // Still the FIFOs: nothing was put in their place.
    for (const f of fifos) expect(spawnSync("test", ["-p", f]).status, f).toBe(0);
  });
});

test("a FIFO is refused by the shared reader before any byte is read", () => {
  const dir = tempDir("lettuce-fifo-");
  try {
    expect(spawnSync("mkfifo", [join(dir, "pipe.md")]).status).toBe(0);
    const { readVaultFile } = require("../lib/vault/read-file") as typeof import("../lib/vault/read-file");
    expect(() => readVaultFile(dir, "pipe.md")).toThrow(/not a regular file/);
    writeFileSync(join(dir, "plain.md"), "abcdef");
    expect(readVaultFile(dir, "plain.md", 3)).toMatchObject({ size: 6 });
    expect(readVaultFile(dir, "plain.md", 3).bytes.toString()).toBe("abc");
    expect(readFileSync(join(dir, "plain.md"), "utf8")).toBe("abcdef");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
