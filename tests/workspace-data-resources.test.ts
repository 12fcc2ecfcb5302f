// MCP resources through the real server: the digest (vault map with a
// change-feed cursor, paged on big vaults), notes as lettuce://note/{path},
// the resources/* methods per the MCP specification, and the conformance
// suite's resources-list scenario.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startAuthProxy, type AuthProxy } from "./helpers/auth-proxy";
import { BUN } from "./helpers/cli";
import { describeWithCorpus, DND_SRD } from "./helpers/corpora";
import { REPO, startTestServer, waitFor, type TestServer } from "./helpers/server";
import { makeProjectVault } from "./helpers/workspace-data";
import { offloaded } from "../lib/offload/offloaded";

function notesOnDisk(root: string, dir = ""): string[] {
  return readdirSync(join(root, dir)).flatMap((n) => {
    if (n.startsWith(".")) return [];
    const rel = dir ? `${dir}/${n}` : n;
    if (statSync(join(root, rel)).isDirectory()) return notesOnDisk(root, rel);
    return n.endsWith(".md") ? [rel] : [];
  });
}

/** Does the map list this note (its file line under its folder's heading)? */
function listsNote(map: string, path: string): boolean {
  const i = path.lastIndexOf("/");
  const folder = i === -1 ? "(vault root)" : path.slice(0, i);
  const file = path.slice(i + 1);
  const sections = map.split(/^### /m).filter((s) => s.startsWith(`${folder}/`));
  return sections.some((s) => s.split("\n").some((l) => l.startsWith(`- ${file} `) || l.startsWith(`- ${file} ·`)));
}

async function readAllDigestPages(s: TestServer, scope: "read" | "write" = "read"): Promise<string[]> {
  const c = await s.client(scope);
  const pages: string[] = [];
  let uri = "lettuce://digest";
  for (let i = 0; i < 100; i++) {
    const res = await c.readResource({ uri });
    const text = (res.contents[0] as { text: string }).text;
    pages.push(text);
    const next = /read (lettuce:\/\/digest\?page=\d+)/.exec(text);
    if (!next) return pages;
    uri = next[1]!;
  }
  throw new Error("the digest did not end");
}

describe("resources on a project vault", () => {
  let s: TestServer;
  let root: string;
  let proxy: AuthProxy;
  beforeAll(async () => {
    root = makeProjectVault();
    s = await startTestServer({ root, watch: true });
    proxy = startAuthProxy(s.url, s.tokens.read);
  });
  afterAll(async () => {
    await proxy?.stop();
    await s?.close();
    rmSync(root, { recursive: true, force: true });
  });

  test("initialize declares resources; templates/list offers lettuce://note/{path}", async () => {
    const c = await s.client("read");
    expect(c.getServerCapabilities()?.resources).toEqual({ subscribe: false, listChanged: false });
    const t = await c.listResourceTemplates();
    expect(t.resourceTemplates).toEqual([expect.objectContaining({ uriTemplate: "lettuce://note/{path}", name: "note", mimeType: "text/markdown" })]);
  });

  test("resources/list: the digest first, then every note", async () => {
    const c = await s.client("read");
    const res = await c.listResources();
    expect(res.resources[0]).toMatchObject({ uri: "lettuce://digest", name: "digest", mimeType: "text/markdown" });
    const notes = res.resources.slice(1).map((r) => r.name).sort();
    expect(notes).toEqual(notesOnDisk(root).sort());
    expect(res.resources.find((r) => r.name === "Tasks/Fix login bug.md")).toMatchObject({ uri: "lettuce://note/Tasks/Fix%20login%20bug.md", title: "Fix login bug" });
  });

  test("a note resource reads the note; %2F works too; bad URIs are errors, not crashes", async () => {
    const c = await s.client("read");
    for (const uri of ["lettuce://note/Tasks/Fix%20login%20bug.md", "lettuce://note/Tasks%2FFix%20login%20bug.md"]) {
      const r = await c.readResource({ uri });
      expect(r.contents[0]).toMatchObject({ uri, mimeType: "text/markdown" });
      expect((r.contents[0] as { text: string }).text).toContain("The login form drops the session cookie.");
    }
    const rpc = async (params: unknown) => ((await (await s.rpc({ jsonrpc: "2.0", id: 1, method: "resources/read", params })).json()) as any).error;
    expect((await rpc({ uri: "lettuce://note/Nope.md" })).code).toBe(-32002);
    expect((await rpc({ uri: "lettuce://note/..%2F..%2Fetc%2Fpasswd" })).code).toBe(-32602);
    expect((await rpc({ uri: "lettuce://note/.lettuce/state.db" })).code).toBe(-32602);
    expect((await rpc({ uri: "file:///etc/passwd" })).code).toBe(-32002);
    expect((await rpc({ uri: "lettuce://digest?page=999" })).code).toBe(-32002);
    expect((await rpc({})).code).toBe(-32602);
  });

  test("the digest: a cursor line first, databases, tags, folders and every note with its size", async () => {
    const [map = "", ...more] = await readAllDigestPages(s);
    expect(more).toEqual([]);
    expect(map.split("\n")[0]).toMatch(/^cursor: \S+$/);
    for (const p of notesOnDisk(root)) expect(listsNote(map, p)).toBe(true);
    expect(map).toContain("- Tasks — `Tasks.base` · 6 rows");
    expect(map).toMatch(/- Linked — `Broken\/Linked\.base` · rows unavailable \(unsupported-expression\)/);
    expect(map).toMatch(/#auth \(\d+\)/);
    expect(map).toContain("- Fix login bug.md · ");
    expect(map).toContain("- 2026-03-02.md — Standup 2026-03-02 · ");
  });

  test("the digest's cursor gives get_changes_since the delta since the map", async () => {
    const [map] = await readAllDigestPages(s);
    const cursor = map!.split("\n")[0]!.slice("cursor: ".length);
    appendFileSync(join(root, "Projects/Lettuce.md"), "\nAfter the map.\n");
    await s.vault.settle();
    const res = await waitFor(async () => {
      const r = await s.call("get_changes_since", { cursor }, "read");
      return r.changes.some((c: any) => c.id === "Projects/Lettuce.md") ? r : undefined;
    }, { what: "the watcher" });
    expect(res!.changes.map((c: any) => c.id)).toEqual(["Projects/Lettuce.md"]);
    // The digest is kept between reads (it cost ~20 ms each) but never outlives a change: a new note is in the next one.
    const [again] = await readAllDigestPages(s);
    expect(again).toBe((await readAllDigestPages(s))[0]);
    writeFileSync(join(root, "Projects/Digest cache check.md"), "# Digest cache check\n");
    await waitFor(async () => (await readAllDigestPages(s)).join("\n").includes("Digest cache check.md"), { what: "the new note in the digest" });
    expect((await readAllDigestPages(s)).join("\n")).not.toContain(cursor);
    rmSync(join(root, "Projects/Digest cache check.md"));
    await s.vault.settle();
  });

  test("the digest's pages are built in a read worker, not on the request thread", async () => {
    const digestPage = offloaded.digestPage;
    const asked: number[] = [];
    offloaded.digestPage = (vault, cursor, name, page) => (asked.push(page), digestPage(vault, cursor, name, page));
    try {
      const res = await s.rpc({ jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "lettuce://digest?page=2" } });
      expect(((await res.json()) as any).error).toMatchObject({ code: -32002, message: "The digest has 1 page(s); there is no page 2" });
      await readAllDigestPages(s);
      expect(asked).toEqual([2, 1]);
    } finally {
      offloaded.digestPage = digestPage;
    }
  });

  test("the conformance suite's resources-list scenario passes", async () => {
    const proc = Bun.spawn([BUN, join(REPO, "node_modules/@modelcontextprotocol/conformance/dist/index.js"), "server", "--url", proxy.url, "--scenario", "resources-list", "--verbose"], {
      cwd: REPO,
      stdout: "pipe",
      stderr: "pipe",
    });
    const timer = setTimeout(() => proc.kill("SIGKILL"), 60_000);
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    clearTimeout(timer);
    const json = out.match(/^\[[\s\S]*?^\]$/m);
    expect(json, `${out}\n${err}`).not.toBeNull();
    const checks = JSON.parse(json![0]) as { id: string; status: string }[];
    expect(checks.length).toBeGreaterThan(0);
    expect(checks.filter((c) => c.status !== "SUCCESS")).toEqual([]);
    expect(code).toBe(0);
  }, 90_000);
});

describeWithCorpus("dnd-srd-wiki", "the digest of a 1,000-note vault", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ src: DND_SRD });
  });
  afterAll(async () => s?.close());

  test("pages of at most 24 KB that list every note once; resources/list pages by cursor", async () => {
    const pages = await readAllDigestPages(s);
    expect(pages.length).toBeGreaterThan(1);
    for (const p of pages) {
      expect(Buffer.byteLength(p)).toBeLessThanOrEqual(24 * 1024);
      expect(p.split("\n")[0]).toMatch(/^cursor: /);
    }
    const all = pages.join("\n");
    const disk = notesOnDisk(s.root);
    for (const p of disk) expect(listsNote(all, p)).toBe(true);
    expect(all.split("\n").filter((l) => l.startsWith("- ") && / · [\d.]+ (B|kB|MB)$/.test(l)).length).toBe(disk.length);

    const c = await s.client("read");
    const names: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 100; i++) {
      const res = await c.listResources(cursor ? { cursor } : {});
      names.push(...res.resources.filter((r) => r.uri.startsWith("lettuce://note/")).map((r) => r.name));
      cursor = res.nextCursor;
      if (!cursor) break;
    }
    expect(names.sort()).toEqual(disk.sort());
  });
});

