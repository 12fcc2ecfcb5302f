// lint_semantic and suggest_tags through the real server, eval's
// faithfulnessRate, and `lettuce lint --semantic`, against a scripted model
// over the real OpenAI wire format. Every path and tag the model names is
// checked against the vault's files.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { planBatches, planNotes } from "../lib/answer/batches";
import { FINDING_KINDS } from "../lib/answer/lint-semantic";
import { parseReference, startChatServer, type ChatRequest, type ChatServer } from "./helpers/chat-server";
import { runLettuce } from "./helpers/cli";
import { withEnv } from "./helpers/env";
import { describeWithShared, GEN_VAULT } from "./helpers/corpora";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";

let s: TestServer;
let llm: ChatServer;
const env = (url: string, extra: Record<string, string> = {}) => ({
  LETTUCE_LLM_PROVIDER: "openai",
  LETTUCE_LLM_BASE_URL: url,
  LETTUCE_LLM_MODEL: "reviewer",
  LETTUCE_EMBED_PROVIDER: "none",
  ...extra,
});

beforeAll(async () => {
  s = await startTestServer();
  llm = startChatServer();
});
afterAll(async () => {
  await s?.close();
  await llm?.stop();
});

/** Every Markdown file of a vault, vault-relative (hidden folders skipped). */
function mdFiles(root: string, dir = root): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith(".")) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...mdFiles(root, p));
    else if (e.name.endsWith(".md")) out.push(relative(root, p));
  }
  return out.sort();
}

/** A reviewer that mixes good findings with bad ones: an unknown kind, a page it was not shown, no message. */
function mixedReviewer(req: ChatRequest): string {
  const items = parseReference(req.user)?.items ?? [];
  const paths = items.map((i) => i.attrs.path!);
  const [a, b] = paths;
  const findings: unknown[] = [
    { kind: "Contradictions", paths: b ? [a, b] : [a], message: `${a} and ${b ?? a} disagree about dates`, suggestion: "Reconcile them" },
    { kind: "missing_page", paths: [a!.replace(/\.md$/, "").toUpperCase()], message: "Compost tea is mentioned but has no page", suggestion: "Create it" },
    { kind: "vibes", paths: [a], message: "Feels off" },
    { kind: "stale-claim", paths: [a, "Nowhere/Invented.md"], message: "Out of date" },
    { kind: "data-gap", paths: [a], message: "" },
    { kind: "open-question", paths: ["../../etc/passwd"], message: "What is in here?" },
  ];
  return JSON.stringify({ findings });
}

test("lint_semantic: findings are validated (kind, message, paths the model was shown), batches cover each note once, reviews are cached", async () => {
  llm.state.reply = mixedReviewer;
  llm.state.chats = [];
  const r = await withEnv(env(llm.url, { LETTUCE_LLM_CONTEXT_CHARS: "3000" }), () => s.call("lint_semantic", { max_batches: 100, limit: 200 }));
  expect(r.complete).toBe(true);
  expect(r.batches.done).toBe(r.batches.total);
  expect(llm.state.chats).toHaveLength(r.batches.total);
  expect(r.batches.total).toBeGreaterThan(1);
  // Every note but the scaffolding (index.md, log.md, AGENTS.md) is shown exactly once.
  const files = mdFiles(s.root).filter((p) => !["index.md", "log.md", "AGENTS.md"].includes(p));
  const shown = llm.state.chats.flatMap((c) => parseReference(c.user)!.items.map((i) => i.attrs.path));
  expect([...shown].sort()).toEqual(files);
  expect(r.notes).toEqual({ reviewed: files.length, total: files.length });
  // Each batch fits the budget set (LETTUCE_LLM_CONTEXT_CHARS): the reference text is about that size at most.
  for (const c of llm.state.chats) expect(c.user.length).toBeLessThan(3000 + 1500);
  // Two findings per batch survive, four are dropped.
  expect(r.dropped).toBe(4 * r.batches.total);
  for (const f of r.findings) {
    expect(FINDING_KINDS).toContain(f.kind);
    expect(["contradiction", "missing-page"]).toContain(f.kind);
    expect(f.message.length).toBeGreaterThan(0);
    for (const p of f.paths) expect(existsSync(join(s.root, p))).toBe(true);
    expect(Object.keys(f).sort()).toEqual(["kind", "message", "paths", "suggestion"]);
  }
  expect(r.total).toBe(r.findings.length);
  // A second call asks the model nothing (every batch is cached) and pages the same list.
  llm.state.chats = [];
  const page = await withEnv(env(llm.url, { LETTUCE_LLM_CONTEXT_CHARS: "3000" }), () => s.call("lint_semantic", { limit: 2, offset: 1 }));
  expect(llm.state.chats).toHaveLength(0);
  expect(page).toMatchObject({ total: r.total, offset: 1, limit: 2, complete: true });
  expect(page.findings).toEqual(r.findings.slice(1, 3));
  // An edited note: only its batch is reviewed again.
  const file = join(s.root, "Garden/Compost.md");
  writeFileSync(file, `${readFileSync(file, "utf8")}\nTurn the pile every week.\n`);
  await s.vault.indexer.update(["Garden/Compost.md"]);
  await withEnv(env(llm.url, { LETTUCE_LLM_CONTEXT_CHARS: "3000" }), () => s.call("lint_semantic", {}));
  expect(llm.state.chats).toHaveLength(1);
  expect(parseReference(llm.state.chats[0]!.user)!.items.map((i) => i.attrs.path)).toContain("Garden/Compost.md");
});

test("lint_semantic: max_batches bounds the model calls of one call; the next call continues; path scopes it", async () => {
  llm.state.reply = mixedReviewer;
  llm.state.chats = [];
  const e = env(llm.url, { LETTUCE_LLM_CONTEXT_CHARS: "2000", LETTUCE_LLM_MODEL: "reviewer-2" });
  const first = await withEnv(e, () => s.call("lint_semantic", { max_batches: 1 }));
  expect(first.complete).toBe(false);
  expect(first.batches.done).toBe(1);
  expect(llm.state.chats).toHaveLength(1);
  const second = await withEnv(e, () => s.call("lint_semantic", { max_batches: 1 }));
  expect(second.batches.done).toBe(2);
  expect(llm.state.chats).toHaveLength(2);
  // Findings already reported keep their place: the first page does not shift as batches complete.
  expect(second.findings.slice(0, first.findings.length)).toEqual(first.findings);
  llm.state.chats = [];
  const garden = await withEnv(e, () => s.call("lint_semantic", { path: "Garden", max_batches: 50 }));
  const shown = llm.state.chats.flatMap((c) => parseReference(c.user)!.items.map((i) => i.attrs.path));
  for (const p of shown) expect(p!.startsWith("Garden/")).toBe(true);
  expect(garden.notes.total).toBe(mdFiles(join(s.root, "Garden")).length);
  const bad = await withEnv(e, () => s.callRaw("lint_semantic", { path: "../outside" }));
  expect(bad.kind).toBe("path-invalid");
});

test("suggest_tags: one entry per flagged note; existing tags preferred, typos folded into them, new ones named; nothing written", async () => {
  writeFileSync(join(s.root, "Inbox/Tomato blight.md"), "# Tomato blight\n\nBrown spots on the tomato leaves after the rain; remove them and mulch.\n");
  writeFileSync(join(s.root, "Inbox/Pasta night.md"), "# Pasta night\n\nSpaghetti with garlic, olive oil and chilli.\n");
  await s.vault.indexer.update(["Inbox/Tomato blight.md", "Inbox/Pasta night.md"]);
  const before = new Map(mdFiles(s.root).map((p) => [p, readFileSync(join(s.root, p), "utf8")]));
  llm.state.chats = [];
  llm.state.reply = (req) => {
    const items = parseReference(req.user)?.items ?? [];
    return JSON.stringify({
      suggestions: [
        ...items.map((i) => ({
          path: i.attrs.path,
          suggestedTags: ["#Gardening", "gardenning", "brand-new-tag", "bad tag", "1234", "../x", "gardening", "inbox"],
          rationale: "It is about plants.",
        })),
        { path: "Garden/Frost Dates.md", suggestedTags: ["hacked"], rationale: "not asked" },
        { path: "../../etc/passwd", suggestedTags: ["root"], rationale: "no" },
      ],
    });
  };
  const r = await withEnv(env(llm.url), () => s.call("suggest_tags", {}));
  // The flagged notes, as lint flags them (untagged-note), in lint's order.
  const lint = (await s.call("lint", { rule: "untagged-note", limit: 5000 })).items;
  expect(r.map((x: any) => x.path)).toEqual(lint.map((f: any) => f.path));
  expect(r.map((x: any) => x.path)).toContain("Inbox/Tomato blight.md");
  for (const x of r) {
    // "#Gardening", "gardenning" and "gardening" are the vault's gardening tag; "inbox" exists too (on the meeting note).
    expect(x.suggestedTags).toEqual(["gardening", "inbox", "brand-new-tag"]);
    expect(x.newTags).toEqual(["brand-new-tag"]);
    expect(x.rationale).toBe("It is about plants.");
  }
  // The model was shown the vault's tags with their counts.
  expect(llm.state.chats[0]!.system).toMatch(/gardening \(\d+\)/);
  // Advisory: no file changed.
  for (const [p, text] of before) expect(readFileSync(join(s.root, p), "utf8")).toBe(text);
  // Paging over the flagged notes.
  const second = await withEnv(env(llm.url), () => s.call("suggest_tags", { limit: 1, offset: 1 }));
  expect(second.map((x: any) => x.path)).toEqual([r[1].path]);
});

test("suggest_tags honours index.md's declared vocabulary and includes notes missing a required tag", async () => {
  const index = join(s.root, "index.md");
  const original = readFileSync(index, "utf8");
  writeFileSync(index, original.replace("tags: [meta]", 'tags: [meta]\nlint:\n  tags: [meta, gardening, recipe, "area/*", "season/*", project, concept, source, clipped, meeting, inbox, retro, roadmap, mcp, syntax, lettuce]\n  required:\n    - anyOf: ["season/*"]\n      paths: [Garden/]'));
  await s.vault.indexer.update(["index.md"]);
  try {
    llm.state.reply = (req) => {
      const items = parseReference(req.user)?.items ?? [];
      return JSON.stringify({ suggestions: items.map((i) => ({ path: i.attrs.path, suggestedTags: ["season/spring", "brand-new-tag", "gardening", "area/garden"], rationale: "r" })) });
    };
    llm.state.chats = [];
    const r = await withEnv(env(llm.url), () => s.call("suggest_tags", { path: "Garden", limit: 50 }));
    const lint = (await s.call("lint", { rule: "missing-required-tag", path: "Garden", limit: 5000 })).items;
    expect(r.map((x: any) => x.path)).toEqual(lint.map((f: any) => f.path));
    expect(r.length).toBeGreaterThan(0);
    for (const x of r) {
      // Outside the vocabulary: dropped; tags the note already has: dropped; the family season/* admits season/spring (new to the vault).
      const has = readFileSync(join(s.root, x.path), "utf8").toLowerCase();
      expect(x.suggestedTags).not.toContain("brand-new-tag");
      expect(x.suggestedTags).toContain("season/spring");
      expect(x.newTags).toEqual(["season/spring"]);
      for (const t of ["gardening", "area/garden"]) expect(x.suggestedTags.includes(t)).toBe(!has.includes(t));
    }
    expect(llm.state.chats[0]!.system).toContain("suggest only tags from that list");
    expect(llm.state.chats[0]!.user).toContain("must: Missing a required tag");
  } finally {
    writeFileSync(index, original);
    await s.vault.indexer.update(["index.md"]);
  }
});

test("eval's faithfulnessRate goes through answer's validation: a citation of a page not shown, or a missing span, is unfaithful", async () => {
  mkdirSync(join(s.root, "eval"), { recursive: true });
  const qs = [
    { question: "when is the last frost?", expected_paths: ["Garden/Frost Dates.md"], must_contain: ["mid-April"] },
    { question: "what is in menemen", expected_paths: ["Recipes/Menemen.md"], must_contain: ["eggs"] },
    { question: "how do I make compost", expected_paths: ["Garden/Compost.md"], must_contain: ["browns"] },
  ];
  writeFileSync(join(s.root, "eval/questions.jsonl"), qs.map((q) => JSON.stringify(q)).join("\n"));
  llm.state.reply = (req) => {
    const shown = parseReference(req.user)!.items.map((i) => i.attrs.path);
    if (req.user.includes("Question: when is the last frost")) return JSON.stringify({ answer: "Usually mid\u2011April.".replace("\u2011", "-"), citations: [shown[0]], quotes: [] });
    if (req.user.includes("Question: what is in menemen")) return JSON.stringify({ answer: "Eggs and tomatoes.", citations: ["Nowhere/Invented.md"], quotes: [] });
    return JSON.stringify({ answer: "Pile it up.", citations: [shown[0]], quotes: [] });
  };
  try {
    const r = await withEnv(env(llm.url), () => s.call("eval", { k: 3 }));
    expect(r.retrieval).toBe("keyword");
    expect(r.perQuestion.map((q: any) => q.faithful)).toEqual([true, false, false]);
    expect(r.faithfulnessRate).toBeCloseTo(1 / 3, 4);
  } finally {
    rmSync(join(s.root, "eval"), { recursive: true, force: true });
  }
});

test("eval stops asking the model when its caller goes away", async () => {
  mkdirSync(join(s.root, "eval"), { recursive: true });
  const qs = Array.from({ length: 40 }, (_, i) => ({ question: `what is in menemen ${i}`, expected_paths: ["Recipes/Menemen.md"], must_contain: ["eggs"] }));
  writeFileSync(join(s.root, "eval/questions.jsonl"), qs.map((q) => JSON.stringify(q)).join("\n"));
  llm.state.reply = () => JSON.stringify({ answer: "Eggs.", citations: [], quotes: [] });
  llm.state.delayMs = 100;
  const asked = () => llm.state.chats.length;
  const start = asked();
  try {
    await withEnv(env(llm.url), async () => {
      const ctl = new AbortController();
      const call = s
        .rpc({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "eval", arguments: { k: 3 } } })
        .then(() => "answered");
      void call;
      const res = fetch(s.url, {
        method: "POST",
        signal: ctl.signal,
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${s.tokens.read}` },
        body: JSON.stringify({ jsonrpc: "2.0", id: 10, method: "tools/call", params: { name: "eval", arguments: { k: 3 } } }),
      }).catch(() => "aborted");
      await waitForCount(() => asked() - start >= 6);
      ctl.abort();
      expect(await res).toBe("aborted");
      await call; // the other caller's whole run: 40 questions
      const afterFull = asked();
      await Bun.sleep(500);
      // Had the aborted run gone on, it would still be asking (40 questions at 100 ms each).
      expect(asked()).toBe(afterFull);
      expect(afterFull - start).toBeLessThan(80);
    });
  } finally {
    llm.state.delayMs = 0;
    rmSync(join(s.root, "eval"), { recursive: true, force: true });
  }
}, 60_000);

async function waitForCount(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !ok(); i++) await Bun.sleep(25);
}

test("lettuce lint --semantic: progress per batch, the findings, exit 0; --json; bad combinations are usage errors", async () => {
  llm.state.reply = mixedReviewer;
  const e = env(llm.url, { LETTUCE_LLM_CONTEXT_CHARS: "2500", LETTUCE_LLM_MODEL: "reviewer-cli" });
  const res = await runLettuce(["lint", s.root, "--semantic"], { env: e, timeoutMs: 60_000 });
  expect(res.stderr).toMatch(/Reviewed 0\/(\d+) batches/);
  const total = Number(res.stderr.match(/Reviewed 0\/(\d+)/)![1]);
  expect(res.stderr).toContain(`Reviewed ${total}/${total} batches`);
  expect(res.code).toBe(0);
  expect(res.stdout).toContain("contradiction");
  expect(res.stdout).toMatch(/\d+ findings from \d+ notes in \d+ batches/);
  const json = await runLettuce(["lint", s.root, "--semantic", "--json", "--max-batches", "1"], { env: e, timeoutMs: 60_000 });
  expect(json.code).toBe(0);
  const j = JSON.parse(json.stdout);
  expect(j.batches.total).toBe(total);
  expect(FINDING_KINDS).toEqual(expect.arrayContaining(j.findings.map((f: any) => f.kind)));
  expect((await runLettuce(["lint", s.root, "--semantic", "--rule", "orphan-note"], { env: e })).code).toBe(2);
  expect((await runLettuce(["lint", s.root, "--max-batches", "2"], { env: e })).code).toBe(2);
  const none = await runLettuce(["lint", s.root, "--semantic"], { env: { LETTUCE_LLM_PROVIDER: "none", LETTUCE_EMBED_PROVIDER: "none" } });
  expect(none.code).toBe(1);
  expect(none.stderr).toContain("No LLM provider configured");
}, 120_000);

test("batches follow links: linked notes share a batch far more often than in path order", () => {
  const notes = planNotes(s.vault.indexDb);
  const batches = planBatches(s.vault.indexDb, notes, 2500, 600);
  const where = new Map<string, number>();
  batches.forEach((b, i) => b.notes.forEach((n) => where.set(n.path, i)));
  // Path-order batches of the same sizes: the baseline.
  const sizes = batches.map((b) => b.notes.length);
  const byPath = new Map<string, number>();
  let k = 0;
  sizes.forEach((n, i) => notes.slice(k, (k += n)).forEach((x) => byPath.set(x.path, i)));
  // Links from the files themselves: [[Name]] resolved by file name.
  const byName = new Map(notes.map((n) => [n.path.replace(/^.*\//, "").replace(/\.md$/, "").toLowerCase(), n.path]));
  let together = 0;
  let baseline = 0;
  let pairs = 0;
  for (const n of notes) {
    for (const m of readFileSync(join(s.root, n.path), "utf8").matchAll(/\[\[([^\]|#]+)/g)) {
      const t = byName.get(m[1]!.trim().toLowerCase());
      if (!t || t === n.path) continue;
      pairs++;
      if (where.get(t) === where.get(n.path)) together++;
      if (byPath.get(t) === byPath.get(n.path)) baseline++;
    }
  }
  expect(pairs).toBeGreaterThan(5);
  expect(together).toBeGreaterThan(baseline);
});

describeWithShared([GEN_VAULT], "lint_semantic on a generated 5,000-note vault", () => {
  test("a 5,000-note vault: every note in exactly one batch within the budget, and one call's answer stays under 32 KB", async () => {
    const dir = tempDir("lettuce-5k-");
    execFileSync("node", [GEN_VAULT, dir, "5000", "7"], { stdio: "ignore" });
    const big = await startTestServer({ root: dir });
    try {
      const notes = planNotes(big.vault.indexDb);
      expect(notes.length).toBe(mdFiles(dir).filter((p) => !["index.md", "log.md", "AGENTS.md"].includes(p)).length);
      const budget = 16_000;
      const batches = planBatches(big.vault.indexDb, notes, budget, 1200);
      const seen = new Set<string>();
      for (const b of batches) {
        let cost = 0;
        for (const n of b.notes) {
          expect(seen.has(n.path)).toBe(false);
          seen.add(n.path);
          cost += Math.min(n.size, 1200) + 160;
        }
        expect(cost).toBeLessThanOrEqual(budget);
      }
      expect(seen.size).toBe(notes.length);
      // A talkative model: 40 long findings per batch.
      const srv = startChatServer({
        reply: (req) => {
          const paths = parseReference(req.user)!.items.map((i) => i.attrs.path);
          return JSON.stringify({ findings: paths.slice(0, 40).map((p) => ({ kind: "data-gap", paths: [p], message: `${"A long complaint about this page. ".repeat(30)}`, suggestion: "x".repeat(2000) })) });
        },
      });
      try {
        const r = await withEnv(env(srv.url, { LETTUCE_LLM_MODEL: "big" }), () => big.call("lint_semantic", { max_batches: 2 }));
        expect(r.complete).toBe(false);
        expect(r.batches).toEqual({ done: 2, total: batches.length });
        expect(r.notes.total).toBe(notes.length);
        expect(r.findings).toHaveLength(20);
        expect(r.total).toBeGreaterThan(20);
        const res: any = await withEnv(env(srv.url, { LETTUCE_LLM_MODEL: "big" }), () => big.callRaw("lint_semantic", { max_batches: 0 }));
        expect(res.content[0].text.length).toBeLessThan(32_000);
        expect(srv.state.chats).toHaveLength(2);
      } finally {
        await srv.stop();
      }
    } finally {
      await big.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
