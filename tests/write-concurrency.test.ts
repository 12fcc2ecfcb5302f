// Many agents and a person writing the same notes at once. 8 SDK clients make
// ~200 mixed writes each (one shared note, their own notes, new notes, the
// log) while a simulated editor keeps saving lines into the same files.
// Afterwards: every accepted write is in the final text (or was refused with
// conflict), every line the person typed survived, no file is half-written or
// left as a temp file, the index matches the files, and the timeline has one
// entry per accepted write.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { scanVault } from "../lib/vault/scan";
import { startTestServer, type TestServer } from "./helpers/server";

const CLIENTS = 8;
const OPS_PER_CLIENT = Number(process.env.LETTUCE_CONCURRENCY_OPS) || 200;
const SHARED = "Load/Shared.md";
const own = (i: number) => `Load/c${i}.md`;
const ANCHOR = "<!-- anchor -->";
const SHARED_TEXT = `---\ntitle: Shared\ntags: [load]\n---\n\n# Shared\n\n## Agents\n\n- start\n\n## Anchored\n\n${ANCHOR}\n\n## Person\n\nThe person types below.\n`;
const OWN_TEXT = (i: number) => `---\ntitle: Client ${i}\n---\n\n# Client ${i}\n\n## Log\n\n- start\n`;

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ watch: true });
  await s.call("write_note", { path: SHARED, content: SHARED_TEXT });
  for (let i = 0; i < CLIENTS; i++) await s.call("write_note", { path: own(i), content: OWN_TEXT(i) });
});
afterAll(() => s.close());

interface Outcome {
  marker: string;
  path: string;
  ok: boolean;
  kind?: string;
}

async function call(c: Client, name: string, args: Record<string, unknown>): Promise<{ ok: boolean; kind?: string; value?: any }> {
  const res: any = await c.callTool({ name, arguments: args });
  if (res.isError) return { ok: false, kind: res.kind };
  return { ok: true, value: JSON.parse(res.content[0].text) };
}

/** One client's mix: unpinned edits and section appends, pinned (expectedHash) edits, creates and log entries. */
async function agent(c: Client, i: number): Promise<Outcome[]> {
  const out: Outcome[] = [];
  for (let j = 0; j < OPS_PER_CLIENT; j++) {
    const marker = `m-c${i}-${j}`;
    const line = `- ${marker}`;
    let path = SHARED;
    let r: { ok: boolean; kind?: string };
    switch (j % 7) {
      case 0:
        r = await call(c, "apply_edits", { path: SHARED, edits: [{ find: ANCHOR, replace: `${ANCHOR}\n${line}` }] });
        break;
      case 1:
        r = await call(c, "patch_section", { path: SHARED, heading: "Agents", mode: "append", content: line });
        break;
      case 2: {
        const read = await call(c, "read_note", { path: SHARED });
        r = await call(c, "apply_edits", { path: SHARED, expectedHash: read.value.hash, edits: [{ find: ANCHOR, replace: `${ANCHOR}\n${line}` }] });
        break;
      }
      case 3:
        path = own(i);
        r = await call(c, "patch_section", { path, heading: "Log", mode: "append", content: line });
        break;
      case 4: {
        path = own(i);
        const read = await call(c, "read_note", { path });
        r = await call(c, "apply_edits", { path, expectedHash: read.value.hash, edits: [{ find: "- start", replace: `- start\n${line}` }] });
        break;
      }
      case 5:
        path = `Load/new/c${i}-${j}.md`;
        r = await call(c, "write_note", { path, content: `# New ${marker}\n\n${line}\n` });
        break;
      default:
        path = "log.md";
        r = await call(c, "append_log", { op: "load", title: marker });
    }
    out.push({ marker, path, ok: r.ok, kind: r.kind });
  }
  return out;
}

/** The person: an editor that re-reads the file and saves it with a new line, all in one go. */
function startEditor(paths: string[]): { stop(): Promise<string[]> } {
  const typed: string[] = [];
  let running = true;
  const loop = (async () => {
    for (let k = 0; running; k++) {
      const path = paths[k % paths.length]!;
      const abs = join(s.root, path);
      const text = readFileSync(abs, "utf8");
      const line = `- e-${k}`;
      writeFileSync(abs, text.endsWith("\n") ? `${text}${line}\n` : `${text}\n${line}\n`);
      typed.push(`${path}\t${line}`);
      await Bun.sleep(2 + (k % 5));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return typed;
    },
  };
}

const sha = (b: Buffer) => new Bun.CryptoHasher("sha256").update(b).digest("hex");

function tempFiles(dir: string): string[] {
  const out: string[] = [];
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    if (d.name === ".lettuce") continue;
    if (d.name.startsWith(".lettuce-tmp")) out.push(join(dir, d.name));
    if (d.isDirectory()) out.push(...tempFiles(join(dir, d.name)));
  }
  return out;
}

test(
  `${CLIENTS} clients × ${OPS_PER_CLIENT} writes with a person editing the same files`,
  async () => {
    const clients = await Promise.all(Array.from({ length: CLIENTS }, () => s.client("write")));
    const groupsBefore = (s.vault.stateDb.query("SELECT count(*) AS n FROM agent_edits WHERE group_id IS NULL").get() as { n: number }).n;
    const editor = startEditor([SHARED, ...Array.from({ length: CLIENTS }, (_, i) => own(i))]);
    const results = (await Promise.all(clients.map((c, i) => agent(c, i)))).flat();
    const typed = await editor.stop();
    await s.vault.settle();

    // Every refusal is a conflict; nothing else may go wrong under load.
    const refused = results.filter((r) => !r.ok);
    expect(refused.filter((r) => r.kind !== "conflict")).toEqual([]);
    const accepted = results.filter((r) => r.ok);
    expect(accepted.length).toBeGreaterThan(results.length / 2);

    // Every accepted write is in the final text; no refused one is.
    const text = (p: string) => readFileSync(join(s.root, p), "utf8");
    for (const r of accepted) expect(text(r.path)).toContain(r.marker);
    for (const r of refused) expect(text(r.path).includes(`- ${r.marker}\n`)).toBe(false);
    // Every line the person typed survived every agent write.
    for (const t of typed) {
      const [path, line] = t.split("\t") as [string, string];
      expect(text(path)).toContain(`${line}\n`);
    }
    // Nothing half-written: frontmatter and structure intact, each marker line whole, no temp files left.
    expect(text(SHARED).startsWith("---\ntitle: Shared\ntags: [load]\n---\n\n# Shared\n\n## Agents\n\n- start\n")).toBe(true);
    for (const line of text(SHARED).split("\n")) if (line.includes("m-c") || line.includes("e-")) expect(line).toMatch(/^- (m-c\d+-\d+|e-\d+)$/);
    for (let i = 0; i < CLIENTS; i++) expect(text(own(i)).startsWith(OWN_TEXT(i).slice(0, -1))).toBe(true);
    expect(tempFiles(s.root)).toEqual([]);

    // The index matches the files, note for note, hash for hash.
    const indexed = new Map((s.vault.indexDb.query("SELECT path, hash FROM notes").all() as { path: string; hash: string }[]).map((r) => [r.path, r.hash]));
    const onDisk = scanVault(s.root).notes.map((n) => n.path);
    expect([...indexed.keys()].sort()).toEqual(onDisk.sort());
    for (const p of onDisk) expect([p, indexed.get(p)]).toEqual([p, sha(readFileSync(join(s.root, p)))]);

    // One timeline entry per accepted write, none left pending.
    const groups = (s.vault.stateDb.query("SELECT count(*) AS n FROM agent_edits WHERE group_id IS NULL AND state = 'applied'").get() as { n: number }).n;
    expect(groups - groupsBefore).toBe(accepted.length);
    expect((s.vault.stateDb.query("SELECT count(*) AS n FROM agent_edits WHERE state = 'pending'").get() as { n: number }).n).toBe(0);
    console.log(`concurrency: ${accepted.length} accepted, ${refused.length} conflicts, ${typed.length} editor saves`);
  },
  120_000,
);
