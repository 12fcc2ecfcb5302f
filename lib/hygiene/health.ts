import type { Database } from "bun:sqlite";
import { lintSummary, type LintSummary } from "./lint";
import { SEVERITY } from "./lint";
import type { Rule } from "./lint-config";

export interface WikiHealth {
  score: number;
  noteCount: number;
  linkHealth: number;
  lintCleanliness: number;
  tagCoverage: number;
  /** False when the vault does not use tags: then tagCoverage is shown but not part of the score. */
  tagCoverageCounted: boolean;
  /** Notes nothing links to: lint's orphan-note findings plus its no-inbound findings (orphanBreakdown). */
  orphans: number;
  orphanBreakdown: { "orphan-note": number; "no-inbound": number };
  lintWarnings: number;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/**
 * The spec's components, then their plain mean as the 0–100 score:
 *   linkHealth      = 1 − orphans / notes    (orphans: orphan-note + no-inbound findings, as lint reports them)
 *   lintCleanliness = 1 − warnings / notes   (warnings: findings of severity warning or error; floor 0)
 *   tagCoverage     = tagged notes / notes   (in the mean only when the vault uses tags; see tagsInUse)
 * An empty vault scores 100. docs/hygiene.md explains the choice.
 */
export function healthFrom(report: LintSummary): WikiHealth {
  const n = report.noteCount;
  const orphanBreakdown = { "orphan-note": report.counts["orphan-note"] ?? 0, "no-inbound": report.counts["no-inbound"] ?? 0 };
  let lintWarnings = 0;
  for (const [rule, k] of Object.entries(report.counts)) if (SEVERITY[rule as Rule] !== "info") lintWarnings += k;
  const orphans = orphanBreakdown["orphan-note"] + orphanBreakdown["no-inbound"];
  // Rounded first, so that the score is exactly the mean of the numbers shown.
  const linkHealth = round3(n ? Math.max(0, 1 - orphans / n) : 1);
  const lintCleanliness = round3(n ? Math.max(0, 1 - lintWarnings / n) : 1);
  const tagCoverage = round3(n ? report.taggedCount / n : 1);
  const counted = report.tagsInUse;
  const parts = counted ? [linkHealth, lintCleanliness, tagCoverage] : [linkHealth, lintCleanliness];
  return {
    score: Math.round((100 * parts.reduce((a, b) => a + b, 0)) / parts.length),
    noteCount: n,
    linkHealth,
    lintCleanliness,
    tagCoverage,
    tagCoverageCounted: counted,
    orphans,
    orphanBreakdown,
    lintWarnings,
  };
}

export function wikiHealth(db: Database): WikiHealth {
  return healthFrom(lintSummary(db));
}
