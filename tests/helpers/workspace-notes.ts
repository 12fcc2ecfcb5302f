// Notes the workspace tests add to a copy of a real vault: Turkish and
// Chinese titles, reviewed / deprecated / stale / asserted pages, a folder
// with an index page, notes citing repository files in `sources:`, and two
// Obsidian Bases files (databases).
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export const WORKSPACE_NOTES: Record<string, string> = {
  "Ofis/İstanbul Ofisi.md": "# İstanbul Ofisi\n\nOfis adresi ve çalışma saatleri.\n",
  "Ofis/Çözüm Notları.md": "---\ntags: [ofis]\n---\n# Çözüm Notları\n\nSorunların çözümü için kısa notlar.\n",
  "Ofis/Işık Ayarları.md": "# Işık Ayarları\n\nToplantı odasındaki ışıkların ayarı.\n",
  "中文/用户指南.md": "# 用户指南\n\n这是关于同步设置的说明。请先打开设置页面。\n",
  "Team/Team.md": "# Team\n\nHow the team works. See [[Deploy checklist]] and [[Stale runbook]].\n",
  "Team/Deploy checklist.md":
    "# Deploy checklist\n\nThe steps to deploy the service to production.\n\n## Before the deploy\n\nFreeze merges, tag the release, run the smoke tests.\n\n## Rollback\n\nRedeploy the previous tag; the database migrations are forward-only.\n",
  "Team/Old deploy checklist.md":
    "---\nstatus: deprecated\nsuperseded_by: \"[[Deploy checklist]]\"\n---\n# Old deploy checklist\n\nThe steps to deploy the service to production, by hand, with a deploy checklist of twenty items: deploy, deploy, deploy.\n",
  "Team/Release checklist.md": "---\nreviewed_by: human\n---\n# Release checklist\n\nChecklist for a release: changelog, version bump, deploy notes (see [[Deploy checklist]]).\n",
  "Team/Stale runbook.md": "---\nupdated: 2019-03-01\n---\n# Stale runbook\n\nDeploy runbook for the old servers: restart the deploy agent.\n",
  "Engineering/Auth decisions.md":
    "---\nsources:\n  - src/lib/auth/session.ts#L10-L40\n  - https://example.com/rfc/6749\n---\n# Auth decisions\n\nSessions are signed cookies.\n",
  "Engineering/Auth system.md": "---\nsources: src/lib/auth/\n---\n# Auth system\n\nHow authentication is wired.\n",
  "Engineering/Session gotchas.md": "---\nsources:\n  - resource: ./src/lib/auth/session.ts:42\n---\n# Session gotchas\n\nThe session cookie is not renewed on refresh.\n",
  "Engineering/Build notes.md": "---\nknowledge:\n  sources:\n    - resource: 'C:\\work\\repo\\build\\ci.yml'\n---\n# Build notes\n\nThe CI pipeline.\n",
  "Tasks.base": "filters:\n  and:\n    - file.hasTag(\"task\")\nviews:\n  - type: table\n    name: All tasks\n",
  "Engineering/Reading list.base": "filters:\n  and:\n    - file.inFolder(\"Engineering\")\nviews:\n  - type: table\n    name: Reading\n",
};

export function addWorkspaceNotes(root: string, notes: Record<string, string> = WORKSPACE_NOTES): void {
  for (const [p, text] of Object.entries(notes)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), text);
  }
}

/** Case- and accent-folding as a person means it (Turkish ı and İ to i), written independently of the server's. */
export function foldText(s: string): string {
  return s.replace(/[ıİ]/g, "i").normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();
}

/** A note's title by the vault's rule (frontmatter title, else the first # H1, else the file name), from its text. */
export function titleFromText(path: string, text: string): string {
  const fm = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
  const t = fm ? /^title:\s*["']?(.+?)["']?\s*$/m.exec(fm[1]!) : null;
  if (t) return t[1]!;
  const body = fm ? text.slice(fm[0].length) : text;
  let inFence = false;
  for (const line of body.split(/\r?\n/)) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    const h = !inFence && /^#[ \t]+(.+?)[ \t#]*$/.exec(line);
    if (h) return h[1]!;
  }
  return path.slice(path.lastIndexOf("/") + 1).replace(/\.md$/i, "");
}
