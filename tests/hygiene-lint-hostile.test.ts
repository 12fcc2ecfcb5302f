// A note is anybody's file: one unresolved link whose target is 600,000 characters made every lint run
// past its 30 s budget (the "did you mean" lookup's trigrams were told apart in the square of the
// target's length) and echoed the target twice into each finding (the review of 2026-12-07).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { NameMatcher } from "../lib/hygiene/fuzzy";
import { copyVault, startTestServer, type TestServer } from "./helpers/server";

const N = 600_000;
// Random CJK: no trigram repeats often enough to keep the old de-duplication short.
const hugeTarget = () => {
  let s = "";
  for (let i = 0; i < N; i++) s += String.fromCharCode(0x4e00 + ((i * 7919 + (i >> 3) * 104729) % 20000));
  return s;
};

describe("lint with a hostile link target", () => {
  let s: TestServer;
  let root = "";
  beforeAll(async () => {
    root = copyVault();
    writeFileSync(join(root, "Inbox/Huge link.md"), `# Huge link\n\n[[${hugeTarget()}]]\n`);
    s = await startTestServer({ root });
  }, 60_000);
  afterAll(async () => {
    await s?.close();
    rmSync(root, { recursive: true, force: true });
  });

  test("answers, and shows the target cut", async () => {
    const r = await s.callRaw("lint", { rule: "unresolved-link", limit: 50 });
    expect(r.isError, r.content?.[0]?.text?.slice(0, 200)).toBeFalsy();
    const page = JSON.parse(r.content[0].text);
    const f = page.items.find((x: any) => x.path === "Inbox/Huge link.md");
    expect(f).toBeTruthy();
    expect(f.message.length).toBeLessThan(400);
    expect(f.suggestion.length).toBeLessThan(400);
  }, 60_000);
});

describe("NameMatcher", () => {
  test("a query longer than any name mistyped is no match, at once", () => {
    const m = new NameMatcher<string>();
    for (const n of ["Project Alpha", "Project Beta", "Meeting notes"]) m.add(n, n);
    expect(m.closest("Projekt Alpha")).toBe("Project Alpha");
    const t0 = performance.now();
    expect(m.closest(hugeTarget())).toBeNull();
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
