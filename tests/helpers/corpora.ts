// The third-party vaults and benchmark sets live in ../shared/corpora, beside
// the project's root: present on the team's machines and in CI, absent on a
// plain `git clone`. Tests that need them skip there with one line saying
// what is missing; CI sets LETTUCE_REQUIRE_CORPORA=1 so that a missing corpus
// fails instead of passing silently.
import { describe, test } from "bun:test";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

export const CORPORA = resolve(import.meta.dir, "../../../shared/corpora");
export const OBSIDIAN_HELP = join(CORPORA, "obsidian-help/en");
export const OBSIDIAN_HUB = join(CORPORA, "obsidian-hub");
export const DND_SRD = join(CORPORA, "dnd-srd-wiki");

export function hasCorpus(name: string): boolean {
  return existsSync(join(CORPORA, name));
}

/**
 * describe() for tests that read ../shared/corpora/<name…>. Keep file reads in
 * hooks and tests (not in the describe body), so that a skipped block touches nothing.
 */
export function describeWithCorpus(names: string | string[], title: string, fn: () => void): void {
  describeWithShared([names].flat().map((n) => join(CORPORA, n)), title, fn);
}

/** The synthetic-vault generator in ../shared/tools (node gen-vault.mjs DIR N SEED). */
export const GEN_VAULT = resolve(CORPORA, "../tools/gen-vault.mjs");

/** describe() for tests that need files of ../shared by absolute path (a corpus, a tool); skips or fails as above. */
export function describeWithShared(paths: string[], title: string, fn: () => void): void {
  const missing = paths.filter((p) => !existsSync(p));
  if (missing.length === 0) return describe(title, fn);
  const what = missing.join(", ");
  if (process.env.LETTUCE_REQUIRE_CORPORA === "1") {
    describe(title, () => {
      test("needs its corpora", () => {
        throw new Error(`missing corpus: ${what} (LETTUCE_REQUIRE_CORPORA=1)`);
      });
    });
    return;
  }
  console.log(`skip: "${title}" needs ${what}, which is not here (the shared corpora sit beside the project on the team's machines and in CI)`);
  describe.skip(title, fn);
}
