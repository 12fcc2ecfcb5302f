// recent_activity (the log.md ledger), agent_mentions, suggest_links, the
// liveness part of get_vault_info and the initialize instructions, through the
// real server on a copy of examples/vault with a few notes added.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { copyVault, startTestServer, type TestServer } from "./helpers/server";
import { stripCode, walkVault } from "./helpers/vault-facts";

setDefaultTimeout(60_000);

let root: string;
let s: TestServer;
beforeAll(async () => {
  root = copyVault();
  const put = (p: string, text: string) => {
    mkdirSync(join(root, p, ".."), { recursive: true });
    writeFileSync(join(root, p), text);
  };
  put(
    "Inbox/Mentions.md",
    [
      "---",
      "title: Mentions",
      "tags: [inbox]",
      "---",
      "Ask @Claude and @codex-bot about this.",
      "Mail person@example.org, or read https://medium.com/@writer.",
      "Inline `@notinline` code is skipped.",
      "```",
      "@infence in a code block too",
      "```",
      "(cc @claude.)",
      'Thanks to [@obsdmd](https://twitter.com/obsdmd), [the @credits team](http://example.org/t) and [@titled](https://x.y/t "a title").',
      "",
    ].join("\n"),
  );
  put(
    "Inbox/Unlinked.md",
    [
      "---",
      "title: Unlinked",
      "tags: [inbox]",
      "---",
      "I read about Local-First Software and the Model Context Protocol (MCP) today.",
      "The Garden Plan wants compost twice: Compost, COMPOST.",
      "Already linked: [[Menemen]], so Menemen again is not suggested.",
      "Not counted: `Garden Plan` in code, [[Caesar Salad]] and [a link](Recipes/Caesar%20Salad.md), https://example.org/Compost.",
      "Shared Name belongs to two notes; Ox is too short.",
      "",
    ].join("\n"),
  );
  put("A/Shared Name.md", "# Shared Name\n");
  put("B/Shared Name.md", "# Shared Name\n");
  put("Ox.md", "# Ox\n");
  s = await startTestServer({ root });
});
afterAll(async () => {
  await s?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("recent_activity", () => {
  // The ledger read independently: every `## [date] op | title` heading of log.md.
  const ledger = () =>
    [...readFileSync(join(root, "log.md"), "utf8").matchAll(/^## \[(\d{4}-\d{2}-\d{2})\] (\w+) \| (.+)$/gm)].map((m) => ({ date: m[1]!, op: m[2]!, title: m[3]! }));

  test("entries newest first, with the uncompiled source", async () => {
    const r = await s.call("recent_activity", {}, "read");
    const expected = ledger().reverse();
    expect(expected).toHaveLength(5);
    expect(r.entries.map(({ date, op, title }: any) => ({ date, op, title }))).toEqual(expected);
    expect(r.entries[0]).toEqual({ date: "2026-04-01", op: "lint", title: "Weekly vault lint", line: 26 });
    expect(r.uncompiledSources).toEqual(["sources/Growing Lettuce in Containers.md"]);
    expect(r.uncompiledSourcesTotal).toBe(1);
  });

  test("since and op filter; limit caps; a malformed date is refused", async () => {
    const since = await s.call("recent_activity", { since: "2026-03-01" });
    expect(since.entries.map((e: any) => e.date)).toEqual(["2026-04-01", "2026-03-20", "2026-03-02"]);
    const ingest = await s.call("recent_activity", { op: "INGEST" });
    expect(ingest.entries.map((e: any) => e.title)).toEqual(["Growing Lettuce in Containers", "Ink and Switch - Local-first software"]);
    expect((await s.call("recent_activity", { limit: 1 })).entries).toHaveLength(1);
    await expect(s.callRaw("recent_activity", { since: "March" })).rejects.toThrow(/YYYY-MM-DD/);
    // A day the calendar lacks is refused, not answered as "no entries since".
    for (const since of ["2026-13-45", "2026-02-30"]) await expect(s.callRaw("recent_activity", { since })).rejects.toThrow(/real calendar day/);
  });

  test("a new ledger entry and a compiled source show up", async () => {
    writeFileSync(join(root, "log.md"), readFileSync(join(root, "log.md"), "utf8") + "\n## [2026-05-02] compile | Containers\n\nSee [[Containers]].\n");
    writeFileSync(join(root, "Garden/Containers.md"), "---\ntags: [gardening]\n---\n# Containers\n\nFrom [[Growing Lettuce in Containers]].\n");
    await s.vault.indexer.update(["log.md", "Garden/Containers.md"]);
    const r = await s.call("recent_activity", {});
    expect(r.entries[0]).toMatchObject({ date: "2026-05-02", op: "compile", title: "Containers" });
    expect(r.uncompiledSources).toEqual([]);
    expect((await s.call("get_vault_info")).liveness.lastLogDate).toBe("2026-05-02");
  });

  test("a ledger heading of a megabyte comes back cut, as a directive's title is", async () => {
    const before = readFileSync(join(root, "log.md"), "utf8");
    writeFileSync(join(root, "log.md"), before + `\n## [2026-05-03] query | ${"long ".repeat(200_000)}end\n`);
    await s.vault.indexer.update(["log.md"]);
    const r = await s.callRaw("recent_activity", { limit: 1 });
    expect(r.content[0].text.length).toBeLessThan(2_000);
    const title = JSON.parse(r.content[0].text).entries[0].title as string;
    expect(title.length).toBeLessThanOrEqual(300);
    expect(title.endsWith("…")).toBe(true);
    writeFileSync(join(root, "log.md"), before);
    await s.vault.indexer.update(["log.md"]);
  });

  test("uncompiled sources are capped by limit and counted in full", async () => {
    const made = ["sources/Clip 1.md", "Sources/Clip 2.md", "sources/web/Clip 3.md"];
    for (const p of made) {
      mkdirSync(join(root, p, ".."), { recursive: true });
      writeFileSync(join(root, p), "# Clip\n\nCaptured text.\n");
    }
    await s.vault.indexer.update(made);
    const all = await s.call("recent_activity", {});
    expect(all.uncompiledSources).toEqual([...made].sort());
    expect(all.uncompiledSourcesTotal).toBe(3);
    const two = await s.call("recent_activity", { limit: 2 });
    expect(two.uncompiledSources).toEqual([...made].sort().slice(0, 2));
    expect(two.uncompiledSourcesTotal).toBe(3);
    expect(two.entries.length).toBeLessThanOrEqual(2);
  });
});

describe("agent_mentions", () => {
  // Independent: @handles outside code, not after a word character, dot or slash.
  function mentionsFromFiles(): { path: string; handle: string; line: number }[] {
    const out: { path: string; handle: string; line: number }[] = [];
    for (const p of walkVault(root).notes) {
      const raw = readFileSync(join(root, p), "utf8");
      const fm = /^---\n[\s\S]*?\n---\n/.exec(raw)?.[0] ?? "";
      const fmLines = fm.split("\n").length - 1;
      stripCode(raw.slice(fm.length))
        .split("\n")
        .forEach((line, i) => {
          const links = [...line.matchAll(/\[([^\]]*)\]\(https?:[^)]*\)/g)].map((m) => [m.index!, m.index! + m[0].length] as [number, number]);
          for (const m of line.matchAll(/(?:^|[\s(])@([A-Za-z][\w-]*)/g)) {
            if (links.some(([a, b]) => m.index! >= a && m.index! < b)) continue;
            out.push({ path: p, handle: m[1]!, line: i + 1 + fmLines });
          }
        });
    }
    return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line));
  }

  test("every mention, emails, URLs and code skipped; the same list as counted from the files", async () => {
    const all = await s.call("agent_mentions", {}, "read");
    expect(all.map(({ path, handle, line }: any) => ({ path, handle, line }))).toEqual(mentionsFromFiles());
    expect(all).toContainEqual({
      path: "Inbox/quick-thought.md",
      handle: "claude",
      line: 3,
      context: "Hey @claude, can you look at how [[Wikilinks]] are resolved and tell me whether suggesting links by alias would be cheap?",
    });
    const handles = all.map((m: any) => m.handle);
    // Credits in the text of a link to a web address are no call on an agent (an agent audit found them listed).
    for (const h of ["example", "writer", "notinline", "infence", "obsdmd", "credits", "titled"]) expect(handles).not.toContain(h);
    expect(handles).toContain("codex-bot");
  });

  test("handle filters case-insensitively, with or without @", async () => {
    const a = await s.call("agent_mentions", { handle: "claude" });
    const b = await s.call("agent_mentions", { handle: "@CLAUDE" });
    expect(a).toEqual(b);
    expect(a.map((m: any) => `${m.path}:${m.line}:${m.handle}`)).toEqual(["Inbox/Mentions.md:5:Claude", "Inbox/Mentions.md:11:claude", "Inbox/quick-thought.md:3:claude"]);
    expect(await s.call("agent_mentions", { handle: "nobody" })).toEqual([]);
    expect(await s.call("agent_mentions", { limit: 1 })).toHaveLength(1);
  });
});

describe("suggest_links", () => {
  test("names and aliases in prose, longest first; linked, ambiguous, short, code and link text skipped", async () => {
    const r = await s.call("suggest_links", { path: "Inbox/Unlinked.md" }, "read");
    expect(r.items).toEqual([
      { targetPath: "Garden/Compost.md", name: "Compost", count: 3 },
      { targetPath: "Garden/Garden Plan.md", name: "Garden Plan", count: 1 },
      { targetPath: "Concepts/Local First.md", name: "Local-First Software", count: 1 },
      { targetPath: "Concepts/Model Context Protocol.md", name: "MCP", count: 1 },
      { targetPath: "Concepts/Model Context Protocol.md", name: "Model Context Protocol", count: 1 },
    ]);
    expect(r.total).toBe(5);
    const paged = await s.call("suggest_links", { path: "Inbox/Unlinked.md", limit: 2, offset: 1 });
    expect(paged).toEqual({ items: r.items.slice(1, 3), total: 5, offset: 1, limit: 2 });
  });

  test("on the example notes; errors for a missing note and a bad path", async () => {
    const r = await s.call("suggest_links", { path: "Garden/Frost Dates.md" });
    expect(r.items).toEqual([{ targetPath: "Projects/Lettuce.md", name: "Lettuce", count: 1 }]);
    expect(await s.callRaw("suggest_links", { path: "Nope.md" })).toMatchObject({ isError: true, kind: "note-not-found" });
    expect(await s.callRaw("suggest_links", { path: "/etc/passwd" })).toMatchObject({ isError: true, kind: "path-invalid" });
  });
});

describe("get_vault_info and initialize", () => {
  test("the full shape: agentsFile, immutablePaths, capabilities, liveness", async () => {
    const info = await s.call("get_vault_info", {}, "read");
    expect(info.agentsFile).toBe(readFileSync(join(root, "AGENTS.md"), "utf8"));
    expect(info.immutablePaths).toEqual(["sources/"]);
    expect(info.capabilities).toMatchObject({ hasIndexCatalog: true, proposeOnly: false });
    expect(typeof info.capabilities.embeddings).toBe("boolean");
    expect(typeof info.capabilities.llm).toBe("boolean");
    expect(info.liveness.pendingDirectives).toBe(1);
    expect(typeof info.liveness.embeddingIndexStale).toBe("boolean"); // the semantic layer fills it
    expect(info.liveness.lastLogDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect((await s.call("get_vault_info", {}, "propose")).capabilities.proposeOnly).toBe(true);
  });

  test("initialize carries short instructions that point at get_vault_info, not the AGENTS.md text", async () => {
    const res = await s.rpc({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
    const { instructions } = ((await res.json()) as any).result;
    expect(instructions).toContain("get_vault_info");
    expect(instructions.split("\n").length).toBeLessThanOrEqual(8);
    expect(instructions).not.toContain("Agent Guide");
    const c = await s.client("read");
    expect(c.getInstructions()).toBe(instructions);
  });
});
