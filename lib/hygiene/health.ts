import type { Database } from "bun:sqlite";
import { lintVault, type LintReport } from "./lint";

export interface WikiHealth {
  score: number;
  noteCount: number;
  linkHealth: number;
  lintCleanliness: number;
  tagCoverage: number;
  orphans: number;
  lintWarnings: number;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/**
 * The spec's components, then their plain mean as the 0–100 score:
 *   linkHealth      = 1 − orphans / notes    (orphans: orphan-note + no-inbound findings)
 *   lintCleanliness = 1 − warnings / notes   (warnings: findings of severity warning or error; floor 0)
 *   tagCoverage     = tagged notes / notes
 * An empty vault scores 100. docs/hygiene.md explains the choice.
 */
export function healthFrom(report: LintReport): WikiHealth {
  const n = report.noteCount;
  let orphans = 0;
  let lintWarnings = 0;
  for (const f of report.findings) {
    if (f.rule === "orphan-note" || f.rule === "no-inbound") orphans++;
    if (f.severity !== "info") lintWarnings++;
  }
  // Rounded first, so that the score is exactly the mean of the numbers shown.
  const linkHealth = round3(n ? Math.max(0, 1 - orphans / n) : 1);
  const lintCleanliness = round3(n ? Math.max(0, 1 - lintWarnings / n) : 1);
  const tagCoverage = round3(n ? report.taggedCount / n : 1);
  return {
    score: Math.round((100 * (linkHealth + lintCleanliness + tagCoverage)) / 3),
    noteCount: n,
    linkHealth,
    lintCleanliness,
    tagCoverage,
    orphans,
    lintWarnings,
  };
}

export function wikiHealth(db: Database): WikiHealth {
  return healthFrom(lintVault(db));
}
