// lint, wiki_health and their CLI commands on examples/vault (copied to a temp
// dir), plus the schema rules of an index.md `lint:` block.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runLettuce } from "./helpers/cli";
import { lintBrokenWikilinks, wikilinkFacts } from "./helpers/link-facts";
import { copyVault, startTestServer, type TestServer } from "./helpers/server";
import { tagsFromFiles, walkVault } from "./helpers/vault-facts";

setDefaultTimeout(60_000);

let s: TestServer;
let findings: any[];
beforeAll(async () => {
  s = await startTestServer();
  findings = (await s.call("lint", { limit: 5000 }, "read")).items;
});
afterAll(() => s?.close());

const of = (rule: string) => findings.filter((f) => f.rule === rule);

describe("lint on the example vault", () => {
  test("the broken link, with its line and a concrete suggestion; the same set as counted from the files", () => {
    expect(of("unresolved-link")).toEqual([
      {
        rule: "unresolved-link",
        severity: "warning",
        path: "Inbox/quick-thought.md",
        line: 1,
        message: expect.stringContaining("[[Nonexistent Idea]]"),
        suggestion: expect.stringContaining("Nonexistent Idea.md"),
      },
    ]);
    expect([...lintBrokenWikilinks(findings)]).toEqual([...wikilinkFacts(s.root).broken]);
  });

  test("the orphan note; AGENTS.md, index.md, log.md and sources/ are never orphans", () => {
    expect(of("orphan-note").map((f) => f.path)).toEqual(["Garden/Frost Dates.md"]);
    expect(of("orphan-note")[0].suggestion).toContain("[[Frost Dates]]");
    const facts = wikilinkFacts(s.root);
    // Independent: nothing links to Frost Dates and it links nowhere.
    expect(facts.inbound.get("Garden/Frost Dates.md")).toBe(0);
    expect(facts.linksOut.has("Garden/Frost Dates.md")).toBe(false);
    // The uncompiled source has no inbound link either, and is still not reported.
    expect(facts.inbound.get("sources/Growing Lettuce in Containers.md")).toBe(0);
    const unlinked = findings.filter((f) => f.rule === "orphan-note" || f.rule === "no-inbound").map((f) => f.path);
    for (const p of ["AGENTS.md", "index.md", "log.md", "sources/Growing Lettuce in Containers.md", "sources/Ink and Switch - Local-first software.md"]) {
      expect(unlinked).not.toContain(p);
    }
  });

  test("the tag typo points at the common tag; used-once tags are orphan-tag; every note is tagged", () => {
    expect(of("tag-typo")).toEqual([
      expect.objectContaining({ path: "Garden/Compost.md", severity: "warning", suggestion: "Replace #gardenning with #gardening" }),
    ]);
    const tags = tagsFromFiles(s.root);
    const counts = new Map<string, number>();
    for (const list of tags.values()) for (const t of list) counts.set(t, (counts.get(t) ?? 0) + 1);
    expect(counts.get("gardenning")).toBe(1);
    expect(counts.get("gardening")!).toBeGreaterThanOrEqual(3);
    const once = [...counts].filter(([t, n]) => n === 1 && t !== "gardenning").map(([t]) => t).sort();
    expect(of("orphan-tag").map((f) => /#(\S+) is used/.exec(f.message)![1]!.toLowerCase()).sort()).toEqual(once);
    expect(of("untagged-note")).toEqual([]);
    expect([...tags.values()].every((l) => l.length > 0)).toBe(true);
  });

  test("findings come errors first, then warnings, then info; filters narrow them", async () => {
    const rank = { error: 0, warning: 1, info: 2 } as Record<string, number>;
    for (let i = 1; i < findings.length; i++) expect(rank[findings[i].severity]!).toBeGreaterThanOrEqual(rank[findings[i - 1].severity]!);
    expect((await s.call("lint", { rule: "orphan-note" })).items).toEqual(of("orphan-note"));
    expect((await s.call("lint", { path: "Garden" })).items.map((f: any) => f.path).every((p: string) => p.startsWith("Garden/"))).toBe(true);
    expect((await s.call("lint", { severity: "warning" })).items).toHaveLength(2);
    await expect(s.callRaw("lint", { rule: "no-such-rule" })).rejects.toThrow(/Invalid arguments/);
  });

  test("paging: a default limit, total, truncated and per-rule counts; offset walks the rest", async () => {
    const first = await s.call("lint", { limit: 1 });
    expect(first).toMatchObject({ items: [findings[0]], total: findings.length, offset: 0, limit: 1, truncated: findings.length > 1 });
    const counts: Record<string, number> = {};
    for (const f of findings) counts[f.rule] = (counts[f.rule] ?? 0) + 1;
    expect(first.counts).toEqual(counts);
    const second = await s.call("lint", { limit: 1, offset: 1 });
    expect(second.items).toEqual([findings[1]]);
    const byDefault = await s.call("lint");
    expect(byDefault.limit).toBe(50);
    // The counts stay the whole picture when a rule filter narrows the items.
    const one = await s.call("lint", { rule: "tag-typo" });
    expect(one.counts).toEqual(counts);
    expect(one.total).toBe(counts["tag-typo"]);
  });

  test("wiki_health: components as the spec defines them, counted from the files", async () => {
    const h = await s.call("wiki_health", {}, "read");
    const n = walkVault(s.root).notes.length;
    const tagged = [...tagsFromFiles(s.root).values()].filter((l) => l.length).length;
    expect(h).toEqual({
      score: Math.round((100 * (h.linkHealth + h.lintCleanliness + h.tagCoverage)) / 3), // every note is tagged: tags count
      noteCount: n,
      linkHealth: Math.round((1 - 1 / n) * 1000) / 1000, // one orphan: Frost Dates
      lintCleanliness: Math.round((1 - 2 / n) * 1000) / 1000, // two warnings: the broken link and the typo
      tagCoverage: Math.round((tagged / n) * 1000) / 1000,
      tagCoverageCounted: true,
      orphans: 1,
      orphanBreakdown: { "orphan-note": 1, "no-inbound": 0 },
      lintWarnings: 2,
    });
    expect(h.score).toBeGreaterThan(0);
    expect(h.score).toBeLessThanOrEqual(100);
  });
});

describe("schema rules from index.md's lint: block", () => {
  let root: string;
  let v: TestServer;
  const BLOCK = [
    "lint:",
    "  tags: [project, concept, recipe, gardening, meta, source, clipped, lettuce, syntax, retro, roadmap, mcp, turkish, meeting, idea, inbox, \"area/*\"]",
    "  required:",
    "    - \"area/*\"",
    "    - anyOf: [recipe]",
    "      paths: [Recipes]",
    "  deprecated:",
    "    inbox: triage",
    "  exclude: [sources/]",
    "  disable: [orphan-tag]",
  ].join("\n");
  beforeAll(async () => {
    root = copyVault();
    const index = readFileSync(join(root, "index.md"), "utf8");
    writeFileSync(join(root, "index.md"), index.replace("tags: [meta]\n", `tags: [meta]\n${BLOCK}\n`));
    writeFileSync(join(root, "Recipes/Toast.md"), "# Toast\n\nBread, toasted. #area/kitchen #snack\n");
    v = await startTestServer({ root });
  });
  afterAll(async () => {
    await v?.close();
    rmSync(root, { recursive: true, force: true });
  });

  test("unknown-tag, missing-required-tag and deprecated-tag follow the block; exclude and disable apply", async () => {
    const f: any[] = (await v.call("lint", { limit: 5000 })).items;
    const rules = (r: string) => f.filter((x) => x.rule === r);
    // #gardenning is outside the vocabulary; the suggestion is the declared tag it mistypes.
    expect(rules("unknown-tag")).toContainEqual(expect.objectContaining({ path: "Garden/Compost.md", suggestion: "Replace #gardenning with #gardening" }));
    expect(rules("unknown-tag").map((x) => x.path).sort()).toEqual(["Garden/Compost.md", "Recipes/Toast.md"]);
    expect(rules("tag-typo")).toEqual([]); // one diagnosis per tag: unknown-tag wins
    expect(rules("deprecated-tag").map((x) => x.path).sort()).toEqual(["Inbox/Meeting Notes 2026-03-02.md", "Inbox/quick-thought.md"]);
    expect(rules("deprecated-tag")[0].suggestion).toBe("Replace #inbox with #triage");
    // Required area/*: independently, the notes with no area/ tag (meta notes and excluded sources/ aside).
    const tags = tagsFromFiles(root);
    const lacking = [...tags]
      .filter(([p, l]) => !["AGENTS.md", "index.md", "log.md"].includes(p) && !p.startsWith("sources/") && !l.some((t) => t.startsWith("area/")))
      .map(([p]) => p)
      .sort();
    const missing = rules("missing-required-tag");
    expect(missing.filter((x) => x.message.includes("#area/")).map((x) => x.path).sort()).toEqual(lacking);
    expect(missing.filter((x) => x.message.includes("#recipe")).map((x) => x.path)).toEqual(["Recipes/Toast.md"]);
    expect(rules("orphan-tag")).toEqual([]);
    expect(f.filter((x) => x.path.startsWith("sources/"))).toEqual([]);
  });

  test("a malformed block is reported as lint-config (error) and the rest still applies", async () => {
    const index = readFileSync(join(root, "index.md"), "utf8");
    writeFileSync(join(root, "index.md"), index.replace(BLOCK, "lint:\n  tags: 5\n  requried: [x]\n  disable: [nope]\n  deprecated:\n    inbox: null"));
    await v.vault.indexer.update(["index.md"]);
    const f: any[] = (await v.call("lint", { limit: 5000 })).items;
    const cfg = f.filter((x) => x.rule === "lint-config");
    expect(cfg.map((x) => x.severity)).toEqual(["error", "error", "error"]);
    const text = cfg.map((x) => x.message).join("\n");
    for (const bit of ["lint.tags", "lint.requried", "\"nope\""]) expect(text).toContain(bit);
    expect(f[0].rule).toBe("lint-config");
    expect(f.filter((x) => x.rule === "deprecated-tag").map((x) => x.suggestion)).toEqual(["Remove #inbox", "Remove #inbox"]);
  });
});

describe("lettuce lint / lettuce health", () => {
  let root: string;
  beforeAll(() => {
    root = copyVault();
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test("--json prints what the tools return; lint exits 1 when there are warnings", async () => {
    const lint = await runLettuce(["lint", root, "--json"]);
    expect(lint.code).toBe(1);
    expect(JSON.parse(lint.stdout)).toEqual(findings);
    const health = await runLettuce(["health", root, "--json"]);
    expect(health.code).toBe(0);
    expect(JSON.parse(health.stdout)).toEqual(await s.call("wiki_health"));
  });

  test("plain output is readable; bad usage exits 2", async () => {
    const lint = await runLettuce(["lint", root, "--rule", "orphan-note"]);
    expect(lint.stdout).toContain("Garden/Frost Dates.md");
    expect(lint.stdout).toContain("1 finding: 0 errors, 0 warnings, 1 info");
    expect(lint.code).toBe(0);
    const health = await runLettuce(["health", root]);
    expect(health.stdout).toMatch(/Wiki health: \d+\/100 \(21 notes\)/);
    expect((await runLettuce(["lint"])).code).toBe(2);
    expect((await runLettuce(["lint", root, "--rule", "bogus"])).code).toBe(2);
    const missing = await runLettuce(["health", join(root, "nope")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("not found");
  });
});
