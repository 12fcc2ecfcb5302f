import type { Database } from "bun:sqlite";
import { wikiHealth } from "../hygiene/health";
import { lintPage, type Finding, type Severity } from "../hygiene/lint";
import { RULES, type Rule } from "../hygiene/lint-config";
import { lintSemanticCli } from "./answer";
import { parse, UsageError, type Command } from "./command";
import { openIndexed } from "./index-search";
import { shownInTerminal } from "../control-chars";

/** Open the vault (indexing it unless a server keeps it current), run `fn` on its index, close it. */
async function withIndex<T>(dir: string | undefined, quiet: boolean | undefined, fn: (db: Database) => T): Promise<T> {
  const vault = await openIndexed(dir, quiet);
  try {
    return fn(vault.indexDb);
  } finally {
    vault.close();
  }
}

function printFindings(findings: Finding[]): void {
  for (const f of findings) {
    const t = shownInTerminal;
    console.log(`${f.severity.padEnd(7)}  ${f.rule.padEnd(20)}  ${t(f.path)}${f.line ? `:${f.line}` : ""}`);
    console.log(`    ${t(f.message)}`);
    console.log(`    → ${t(f.suggestion)}`);
  }
}

export const lintCommand: Command = {
  name: "lint",
  summary: "Check the vault's hygiene: broken links, orphans, tag problems",
  usage: [
    "lettuce lint <vault> [--rule RULE] [--severity error|warning|info] [--json]",
    "lettuce lint <vault> --semantic [--path FOLDER] [--max-batches N] [--json]",
    "",
    "Runs the deterministic lint (the same as the lint tool): unresolved-link, orphan-note,",
    "no-inbound, tag-typo, orphan-tag, untagged-note, and the schema rules that index.md's",
    "`lint:` frontmatter block declares (see docs/hygiene.md). Exit code 1 when there is an",
    "error or warning (info findings alone exit 0), so it can gate a CI job.",
    `Rules: ${RULES.join(", ")}`,
    "",
    "--semantic runs the LLM review instead (the lint_semantic tool: contradictions, stale claims,",
    "missing pages, data gaps, open questions, suggested sources), over every batch of related",
    "pages with progress; advisory, exit code 0. Needs an LLM provider (see docs/answer.md).",
  ].join("\n"),
  async run(argv) {
    const { values, positionals } = parse(argv, {
      json: { type: "boolean" },
      rule: { type: "string" },
      severity: { type: "string" },
      semantic: { type: "boolean" },
      path: { type: "string" },
      "max-batches": { type: "string" },
    });
    if (positionals.length !== 1) throw new UsageError("lint takes exactly one vault path");
    if (values.semantic) {
      if (values.rule !== undefined || values.severity !== undefined) throw new UsageError("--rule and --severity apply to the deterministic lint, not --semantic");
      return lintSemanticCli(positionals[0]!, { json: !!values.json, path: values.path, maxBatches: values["max-batches"] });
    }
    if (values.path !== undefined || values["max-batches"] !== undefined) throw new UsageError("--path and --max-batches go with --semantic");
    if (values.rule !== undefined && !(RULES as readonly string[]).includes(values.rule)) throw new UsageError(`unknown rule ${JSON.stringify(values.rule)}`);
    if (values.severity !== undefined && !["error", "warning", "info"].includes(values.severity)) throw new UsageError("--severity must be error, warning or info");
    const filter = { rule: values.rule as Rule | undefined, severity: values.severity as Severity | undefined };
    const findings = (await withIndex(positionals[0], values.json, (db) => lintPage(db, filter, 0, Infinity))).items;
    const count = (s: string) => findings.filter((f) => f.severity === s).length;
    if (values.json) console.log(JSON.stringify(findings));
    else {
      printFindings(findings);
      const n = (k: number, word: string) => `${k} ${word}${k === 1 ? "" : "s"}`;
      console.log(`${findings.length ? "\n" : ""}${n(findings.length, "finding")}: ${n(count("error"), "error")}, ${n(count("warning"), "warning")}, ${count("info")} info`);
    }
    return count("error") + count("warning") > 0 ? 1 : 0;
  },
};

export const healthCommand: Command = {
  name: "health",
  summary: "The vault's 0–100 wiki-health score and its components",
  usage: [
    "lettuce health <vault> [--json]",
    "",
    "score = mean of linkHealth (1 − orphans/notes), lintCleanliness (1 − lint warnings/notes)",
    "and, when the vault uses tags, tagCoverage (tagged notes/notes), × 100. See docs/hygiene.md.",
  ].join("\n"),
  async run(argv) {
    const { values, positionals } = parse(argv, { json: { type: "boolean" } });
    if (positionals.length !== 1) throw new UsageError("health takes exactly one vault path");
    const h = await withIndex(positionals[0], values.json, wikiHealth);
    if (values.json) console.log(JSON.stringify(h));
    else {
      console.log(`Wiki health: ${h.score}/100 (${h.noteCount} notes)`);
      const b = h.orphanBreakdown;
      console.log(`  link health       ${h.linkHealth.toFixed(3)}  (${h.orphans} orphan${h.orphans === 1 ? "" : "s"}: ${b["orphan-note"]} orphan-note, ${b["no-inbound"]} no-inbound)`);
      console.log(`  lint cleanliness  ${h.lintCleanliness.toFixed(3)}  (${h.lintWarnings} warning${h.lintWarnings === 1 ? "" : "s"}; run lettuce lint)`);
      console.log(`  tag coverage      ${h.tagCoverage.toFixed(3)}${h.tagCoverageCounted ? "" : "  (not scored: this vault does not use tags)"}`);
    }
    return 0;
  },
};
