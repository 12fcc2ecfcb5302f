// lint and wiki_health on real vaults copied from ../shared/corpora, checked
// against wikilinks counted independently from the files (helpers/link-facts).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lintBrokenWikilinks, wikilinkFacts, type WikilinkFacts } from "./helpers/link-facts";
import { copyVault, CORPORA, startTestServer, type TestServer } from "./helpers/server";
import { tagsFromFiles } from "./helpers/vault-facts";
import { describeWithCorpus } from "./helpers/corpora";

setDefaultTimeout(120_000);

describeWithCorpus(["obsidian-help/en", "dnd-srd-wiki"], "lint on the corpora", () => {
  const EXEMPT = (p: string) => ["agents.md", "index.md", "log.md"].includes(p.toLowerCase()) || p.toLowerCase().startsWith("sources/");

  for (const name of ["obsidian-help/en", "dnd-srd-wiki"]) {
    describe(`lint on ${name}`, () => {
      let s: TestServer;
      let facts: WikilinkFacts;
      let findings: any[];
      let root: string;
      beforeAll(async () => {
        root = copyVault(join(CORPORA, name));
        // One probe note so that both vaults have a broken wikilink and a typo'd one to find.
        writeFileSync(join(root, "Lint probe.md"), "# Lint probe\n\nSee [[Definitely Missing Page]] and [[Lint probe#Self]].\n\n`[[Not a link]]`\n");
        s = await startTestServer({ root });
        facts = wikilinkFacts(s.root);
        findings = (await s.call("lint", { limit: 5000 }, "read")).items;
      });
      afterAll(async () => {
        await s?.close();
        rmSync(root, { recursive: true, force: true });
      });

      test("every finding has the spec's shape and a concrete suggestion", () => {
        expect(findings.length).toBeGreaterThan(0);
        for (const f of findings) {
          expect(Object.keys(f).sort()).toEqual(expect.arrayContaining(["message", "path", "rule", "severity", "suggestion"]));
          expect(["error", "warning", "info"]).toContain(f.severity);
          expect(f.suggestion.length).toBeGreaterThan(5);
          expect(facts.notes).toContain(f.path);
        }
      });

      test("unresolved wikilinks are exactly the ones counted from the files", () => {
        const fromLint = lintBrokenWikilinks(findings);
        expect(fromLint.has("Lint probe.md\u0000Definitely Missing Page")).toBe(true);
        expect([...fromLint].sort()).toEqual([...facts.broken].sort());
      });

      test("orphans agree with independently counted links", () => {
        const orphanish = new Map(findings.filter((f) => f.rule === "orphan-note" || f.rule === "no-inbound").map((f) => [f.path, f.rule]));
        for (const path of orphanish.keys()) {
          expect(EXEMPT(path)).toBe(false);
          if (facts.ambiguous.has(path)) continue;
          // Reported as unlinked: no other note's wikilink names it.
          expect({ path, inbound: facts.inbound.get(path) }).toEqual({ path, inbound: 0 });
        }
        for (const p of facts.notes) {
          // Linked by name from another note: never an orphan.
          if (!facts.ambiguous.has(p) && facts.inbound.get(p)! > 0) expect({ p, rule: orphanish.get(p) }).toEqual({ p, rule: undefined });
          // No links at all either way (by wikilink) and not exempt: orphan-note unless a Markdown link connects it.
          if (orphanish.get(p) === "orphan-note") expect(facts.linksOut.has(p)).toBe(false);
        }
      });

      test("wiki_health follows from the lint findings and the tag counts", async () => {
        const h = await s.call("wiki_health", {}, "read");
        const orphans = findings.filter((f) => f.rule === "orphan-note" || f.rule === "no-inbound").length;
        const warnings = findings.filter((f) => f.severity !== "info").length;
        const n = facts.notes.length;
        const tagged = [...tagsFromFiles(s.root).values()].filter((l) => l.length > 0).length;
        // Neither vault uses tags (under a tenth of the notes carry one): tag coverage is shown, not scored,
        // and no note is listed as untagged.
        expect(tagged).toBeLessThan(0.1 * n);
        expect(findings.filter((f) => f.rule === "untagged-note")).toEqual([]);
        expect(h.noteCount).toBe(n);
        expect(h.orphans).toBe(orphans);
        expect(h.orphanBreakdown).toEqual({
          "orphan-note": findings.filter((f) => f.rule === "orphan-note").length,
          "no-inbound": findings.filter((f) => f.rule === "no-inbound").length,
        });
        expect(h.lintWarnings).toBe(warnings);
        expect(h.linkHealth).toBeCloseTo(1 - orphans / n, 3);
        expect(h.lintCleanliness).toBeCloseTo(Math.max(0, 1 - warnings / n), 3);
        expect(h.tagCoverage).toBeCloseTo(tagged / n, 3);
        expect(h.tagCoverageCounted).toBe(false);
        expect(h.score).toBe(Math.round((100 * (h.linkHealth + h.lintCleanliness)) / 2));
      });
    });
  }
});
