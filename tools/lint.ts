import { z } from "zod";
import { RULES } from "../lib/hygiene/lint-config";
import { offloaded } from "../lib/offload/pool";
import { normalizeVaultPath } from "../lib/vault/paths";
import { ALL_SCOPES, defineTool, READ_ONLY } from "./types";

export const lint = defineTool({
  name: "lint",
  description:
    "Deterministic, offline vault hygiene check. Returns a list of findings {rule, severity, path, message, suggestion} (plus line where one applies), errors first, then warnings, then info. Rules: unresolved-link, orphan-note (no links in or out), no-inbound (links out, nothing links in), tag-typo, orphan-tag (used once), untagged-note; and, when index.md's frontmatter declares a lint: block, unknown-tag, missing-required-tag, deprecated-tag (lint-config reports a malformed block). AGENTS.md, index.md, log.md and sources/ are never orphans. Optional filters narrow big results.",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    rule: z.enum(RULES).optional().describe("Only findings of this rule"),
    severity: z.enum(["error", "warning", "info"]).optional().describe("Only findings of this severity"),
    path: z.string().optional().describe('Only findings in this note or under this folder (vault-relative, e.g. "Inbox")'),
    limit: z.number().int().min(1).optional().describe("At most this many findings (the most severe come first); default: all"),
  }),
  async handler({ rule, severity, path, limit }, { vault, signal }) {
    const scope = path === undefined ? "" : normalizeVaultPath(path, { allowRoot: true });
    let out = (await offloaded.lint(vault, signal)).findings;
    if (rule) out = out.filter((f) => f.rule === rule);
    if (severity) out = out.filter((f) => f.severity === severity);
    if (scope) out = out.filter((f) => f.path === scope || f.path.startsWith(scope + "/"));
    return limit === undefined ? out : out.slice(0, limit);
  },
});

export const wikiHealthTool = defineTool({
  name: "wiki_health",
  description:
    "One 0–100 wiki-health score with its components: {score, noteCount, linkHealth, lintCleanliness, tagCoverage, orphans, lintWarnings}. linkHealth = 1 − orphans/notes (orphans: notes nothing links to, the orphan-note and no-inbound lint findings); lintCleanliness = 1 − lintWarnings/notes (findings of severity warning or error); tagCoverage = fraction of notes with a tag; score = the mean of the three × 100. Track it to see whether the wiki is getting healthier.",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({}),
  handler(_args, { vault, signal }) {
    return offloaded.health(vault, signal);
  },
});

export const lintTools = [lint, wikiHealthTool];
