import { z } from "zod";
import { RULES } from "../lib/hygiene/lint-config";
import { offloaded } from "../lib/offload/offloaded";
import { normalizeVaultPath } from "../lib/vault/paths";
import { ALL_SCOPES, defineTool, limitField, offsetField, READ_ONLY } from "./types";

export const lint = defineTool({
  name: "lint",
  description: "Offline hygiene check (broken links, orphans, tag problems): {items: [{rule, severity, path, message, suggestion}], total, counts}.",
  details: "Deterministic, offline hygiene check: {items: [{rule, severity, path, message, suggestion, line?}], total, offset, limit, truncated, counts} — findings errors first; counts = findings per rule (ask for one rule at a time with `rule`). Rules: unresolved-link, orphan-note, no-inbound, tag-typo, orphan-tag, untagged-note, and the schema rules of index.md's lint: block. See docs/hygiene.md. Parameters: rule: Only findings of this rule; severity: Only findings of this severity; path: Only findings in this note or under this folder (vault-relative, e.g. \"Inbox\"); limit: Maximum items to return (default 50, max 5000); offset: Items to skip, for paging (default 0).",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({
    rule: z.enum(RULES).optional(),
    severity: z.enum(["error", "warning", "info"]).optional(),
    path: z.string().optional().describe('A note or folder, e.g. "Inbox"'),
    limit: limitField(50, 5000),
    offset: offsetField,
  }),
  async handler({ rule, severity, path, limit, offset }, { vault, signal }) {
    const scope = path === undefined ? "" : normalizeVaultPath(path, { allowRoot: true });
    // Paged in the read worker; counts are per rule before the rule filter, so that an agent sees which rules to page through.
    return offloaded.lint(vault, { rule, severity, scope }, offset, limit, signal);
  },
});

export const wikiHealthTool = defineTool({
  name: "wiki_health",
  description: "A 0–100 wiki-health score and its parts (link health, lint cleanliness, tag coverage, orphans).",
  details: "One 0–100 wiki-health score with its components: {score, noteCount, linkHealth, lintCleanliness, tagCoverage, tagCoverageCounted, orphans, orphanBreakdown, lintWarnings}. orphans = lint's orphan-note + no-inbound findings; score = mean of linkHealth, lintCleanliness and (when the vault uses tags) tagCoverage, × 100. See docs/hygiene.md.",
  scopes: ALL_SCOPES,
  annotations: READ_ONLY,
  input: z.object({}),
  handler(_args, { vault, signal }) {
    return offloaded.health(vault, signal);
  },
});

export const lintTools = [lint, wikiHealthTool];
