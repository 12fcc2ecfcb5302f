// A full disk, through the real server: every write either lands whole or is
// refused with kind `disk-full` (not `internal`), the note on disk is exactly
// its old or its new text, no temp file is left in the vault, and once space
// is freed the same server writes again. The vault lives on a small tmpfs
// (mounting one needs root: elsewhere the file prints one `skip:` line).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { cpSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runLettuce } from "./helpers/cli";
import { openStateDb } from "../lib/store/state-db";
import { EXAMPLE_VAULT, startTestServer, tempDir, waitFor, type TestServer } from "./helpers/server";

let mnt = "";
let root = "";
let s: TestServer | undefined;
let why = "";

beforeAll(async () => {
  if (process.getuid?.() !== 0) {
    why = "mounting a small tmpfs needs root";
    return;
  }
  mnt = tempDir("lettuce-full-");
  const m = spawnSync("mount", ["-t", "tmpfs", "-o", "size=6m", "tmpfs", mnt], { encoding: "utf8" });
  if (m.status !== 0) {
    why = `mount failed: ${m.stderr.trim()}`;
    return;
  }
  root = join(mnt, "vault");
  cpSync(EXAMPLE_VAULT, root, { recursive: true, filter: (p) => !p.includes("/.lettuce") });
  s = await startTestServer({ root });
});

afterAll(async () => {
  await s?.close();
  if (mnt) {
    spawnSync("umount", ["-l", mnt]);
    rmSync(mnt, { recursive: true, force: true });
  }
});

const FILLER = () => join(mnt, "filler");

/** Fill the disk so that about `leave` bytes stay free. */
function fill(leave: number): void {
  rmSync(FILLER(), { force: true });
  const st = statfsSync(mnt);
  const free = st.bavail * st.bsize;
  try {
    writeFileSync(FILLER(), Buffer.alloc(Math.max(0, free - leave)));
  } catch {
    /* already as full as it gets */
  }
}

/** Every file in the vault outside .lettuce (a temp file left behind would show here). */
function vaultFiles(dir = root, rel = ""): string[] {
  const out: string[] = [];
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    if (!rel && d.name === ".lettuce") continue;
    const r = rel ? `${rel}/${d.name}` : d.name;
    if (d.isDirectory()) out.push(...vaultFiles(join(dir, d.name), r));
    else out.push(r);
  }
  return out.sort();
}

describe("a full disk", () => {
  test("each write lands whole or is refused as disk-full; nothing half-written, no temp file left", async () => {
    if (!s) return void console.log(`skip: the disk-full check: ${why}`);
    let refused = 0;
    let landed = 0;
    const note = "Projects/Lettuce.md";
    for (const leave of [0, 4096, 16_384, 65_536, 200_000]) {
      for (const size of [2_000, 30_000, 150_000]) {
        const calls: [string, Record<string, unknown>, string][] = [
          ["write_note", { path: note, content: `# Lettuce\n\n${leave}\n${"a".repeat(size)}\n`, overwrite: true }, note],
          ["write_note", { path: `Full/new-${leave}-${size}.md`, content: "b".repeat(size) }, `Full/new-${leave}-${size}.md`],
          ["append_log", { op: "note", title: `full ${leave} ${size}`, body: "c".repeat(Math.min(size, 4000)) }, "log.md"],
        ];
        for (const [tool, args, path] of calls) {
          const before = (() => {
            try {
              return readFileSync(join(root, path), "utf8");
            } catch {
              return null;
            }
          })();
          const files = vaultFiles();
          fill(leave);
          const r: any = await s.callRaw(tool, args);
          rmSync(FILLER(), { force: true });
          const after = (() => {
            try {
              return readFileSync(join(root, path), "utf8");
            } catch {
              return null;
            }
          })();
          if (r.isError) {
            expect({ tool, leave, size, kind: r.kind }).toEqual({ tool, leave, size, kind: "disk-full" });
            expect(after).toBe(before);
            expect(vaultFiles()).toEqual(files);
            refused++;
          } else {
            expect(after).not.toBe(before);
            if (tool === "write_note") expect(after).toBe(args.content as string);
            landed++;
          }
        }
      }
    }
    // Both outcomes were exercised: the check is not vacuous.
    expect(refused).toBeGreaterThan(0);
    expect(landed).toBeGreaterThan(0);
    // The same server writes again once there is room, and the index and the timeline agree with the disk.
    const ok = await s.call("write_note", { path: note, content: "# Lettuce\n\nroom again zebrafull\n", overwrite: true });
    expect(ok.path).toBe(note);
    expect((await s.call("search", { query: "zebrafull" })).items.map((h: any) => h.path)).toEqual([note]);
    // Every write that landed is on the timeline (revertable) once state.db has room again, without a restart.
    await waitFor(async () => JSON.parse((await runLettuce(["edits", root, "--json", "--limit", "500"])).stdout).length === landed + 1, { timeoutMs: 15_000 });
    // A refused call's pending rows go too (its bookkeeping is retried every 2 s until state.db has room).
    const pending = () => {
      const db = openStateDb(root);
      try {
        return (db.query("SELECT count(*) AS n FROM agent_edits WHERE state = 'pending'").get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    await waitFor(() => pending() === 0, { what: "no pending timeline rows", timeoutMs: 15_000 });
  });

  test("read tools still answer on a full disk", async () => {
    if (!s) return void console.log(`skip: the disk-full check: ${why}`);
    fill(0);
    try {
      expect((await s.call("search", { query: "lettuce" })).total).toBeGreaterThan(0);
      expect((await s.call("read_note", { path: "Projects/Lettuce.md" })).content).toContain("zebrafull");
    } finally {
      rmSync(FILLER(), { force: true });
    }
  });
});
