// Deterministic, offline vault hygiene: everything here is read from the
// index (links with their resolution, tags, index.md's frontmatter).
//
// It has to answer on a 100,000-note vault within a couple of seconds, where
// a synthetic vault has 1.8 million unresolved links: so findings are planned
// before they are written. Each rule yields, per note in path order, how many
// findings the note has (counted from per-note columns the indexer keeps, or
// from index-only queries) and a way to write them; counts, totals and
// wiki_health need only the numbers, and a page writes only its own findings
// (messages, "did you mean" suggestions). A plan is kept per index generation,
// so paging through a vault's findings does not plan again.
import type { Database } from "bun:sqlite";
import { getMeta } from "../store/index-db";
import { emptyConfig, parseLintConfig, RULES, underAny, type LintConfig, type Rule } from "./lint-config";
import { linkSections } from "./lint-links";
import { tagSections, untaggedSection } from "./lint-tags";

export type Severity = "error" | "warning" | "info";

export interface Finding {
  rule: Rule;
  severity: Severity;
  path: string;
  message: string;
  suggestion: string;
  line?: number;
}

// Warnings are what lintCleanliness counts; orphans and untagged notes have
// their own health components, so they are info here rather than counted twice.
export const SEVERITY: Record<Rule, Severity> = {
  "lint-config": "error",
  "unresolved-link": "warning",
  "tag-typo": "warning",
  "deprecated-tag": "warning",
  "unknown-tag": "warning",
  "missing-required-tag": "warning",
  "orphan-note": "info",
  "no-inbound": "info",
  "orphan-tag": "info",
  "untagged-note": "info",
};

/** The numbers without the findings: what wiki_health needs. counts: findings per rule (index.md's exclude and disable applied). */
export interface LintSummary {
  counts: Partial<Record<Rule, number>>;
  noteCount: number;
  taggedCount: number;
  /** Whether the vault uses tags at all (see tagsInUse); untagged notes are findings only then. */
  tagsInUse: boolean;
}

/** Every finding (the CLI's full list), with the summary. */
export interface LintReport extends LintSummary {
  findings: Finding[];
}

export interface LintFilter {
  rule?: Rule;
  severity?: Severity;
  /** A note path or folder (vault-relative, no trailing slash); "" or absent: the whole vault. */
  scope?: string;
}

/** One page of findings; counts per rule are taken before the rule filter, so that an agent sees which rules to page through. */
export interface LintPage extends LintSummary {
  items: Finding[];
  total: number;
}

/**
 * A vault uses tags when index.md's lint: block declares a vocabulary or a
 * required tag, or when at least this share of its notes carry one. A vault
 * that does without tags (the Obsidian Help vault tags 3 notes of 173) is not
 * unhealthy for it, and listing every note as untagged would only be noise.
 */
export const TAGS_IN_USE_SHARE = 0.1;

export function tagsInUse(cfg: LintConfig, noteCount: number, taggedCount: number): boolean {
  return cfg.allowed !== null || cfg.required.length > 0 || (taggedCount > 0 && taggedCount >= TAGS_IN_USE_SHARE * noteCount);
}

/** A note as the rules see it. */
export interface LintNote {
  id: number;
  path: string;
  name: string;
  folder: string;
  /** Distinct unresolved (target, kind) pairs in the note (notes.unresolved). */
  unresolved: number;
  /** Links that resolve to another note (notes.out_notes). */
  outNotes: number;
  tagged: boolean;
}

/** The findings of one rule in one note: how many, and how to write them (in line order). */
export interface Group {
  note: LintNote | null; // null: index.md's own lint-config errors when there is no index.md
  path: string;
  n: number;
  expand(): Finding[];
}

/**
 * A group whose findings one function of its section writes: no closure per
 * note (a vault of 100k notes has a few hundred thousand groups, and a
 * closure each cost ~30 MB more in the read worker that keeps the plan).
 */
export class NoteGroup implements Group {
  constructor(
    readonly note: LintNote,
    readonly n: number,
    private readonly write: (note: LintNote) => Finding[],
  ) {}
  get path(): string {
    return this.note.path;
  }
  expand(): Finding[] {
    return this.write(this.note);
  }
}

export interface Section {
  rule: Rule;
  groups: Group[]; // in path order
}

/** What the rules share: the notes in path order, the lint block, and the link text to show for a note. */
export interface LintContext {
  db: Database;
  cfg: LintConfig;
  indexPath: string | null;
  notes: LintNote[];
  byPath: Map<string, LintNote>;
  /** `[[Name]]` when the name is unique in the vault, else `[[folder/Name]]`. */
  link(n: { name: string; path: string }): string;
  finding(rule: Rule, path: string, message: string, suggestion: string, line?: number): Finding;
}

interface Plan {
  sections: Section[]; // in report order: severity, then RULES order
  noteCount: number;
  taggedCount: number;
  tagsInUse: boolean;
}

function loadConfig(db: Database): { cfg: LintConfig; indexPath: string | null } {
  const row = db.query("SELECT path, frontmatter FROM notes WHERE path = 'index.md' COLLATE NOCASE ORDER BY path LIMIT 1").get() as
    | { path: string; frontmatter: string }
    | null;
  if (!row) return { cfg: emptyConfig(), indexPath: null };
  try {
    return { cfg: parseLintConfig(JSON.parse(row.frontmatter)), indexPath: row.path };
  } catch {
    return { cfg: emptyConfig(), indexPath: row.path };
  }
}

const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function loadNotes(db: Database): LintNote[] {
  // Read in table order and sorted here: walking the path index visits the table's pages at random, which took
  // 1.3–2 s at 100k notes with a read worker's small page cache (a table scan and a sort: ~0.3 s).
  const rows = db.query("SELECT id, path, name, folder, unresolved, out_notes, tags != '[]' FROM notes").values() as [
    number,
    string,
    string,
    string,
    number,
    number,
    number,
  ][];
  const notes = rows.map(([id, path, name, folder, unresolved, outNotes, tagged]) => ({ id, path, name, folder, unresolved, outNotes, tagged: tagged === 1 }));
  // Findings are ordered by UTF-16 code units (SQLite's order, by UTF-8 bytes, differs past U+FFFF).
  return notes.sort((a, b) => byCodeUnits(a.path, b.path));
}

function context(db: Database): LintContext {
  const { cfg, indexPath } = loadConfig(db);
  const notes = loadNotes(db);
  const byPath = new Map<string, LintNote>();
  const nameCount = new Map<string, number>();
  for (const n of notes) {
    byPath.set(n.path, n);
    const lc = n.name.toLowerCase();
    nameCount.set(lc, (nameCount.get(lc) ?? 0) + 1);
  }
  return {
    db,
    cfg,
    indexPath,
    notes,
    byPath,
    link: (n) => `[[${nameCount.get(n.name.toLowerCase()) === 1 ? n.name : n.path.replace(/\.md$/i, "")}]]`,
    finding(rule, path, message, suggestion, line) {
      const f: Finding = { rule, severity: SEVERITY[rule], path, message, suggestion };
      if (line !== undefined) f.line = line;
      return f;
    },
  };
}

function buildPlan(db: Database): Plan {
  const ctx = context(db);
  const { cfg, indexPath } = ctx;
  const sections: Section[] = [];
  if (cfg.errors.length) {
    const path = indexPath ?? "index.md";
    const errors = cfg.errors;
    sections.push({
      rule: "lint-config",
      groups: [
        {
          note: indexPath ? ctx.byPath.get(indexPath) ?? null : null,
          path,
          n: errors.length,
          expand: () => errors.map((e) => ctx.finding("lint-config", path, `index.md lint block: ${e}`, "Fix the lint: block in index.md's frontmatter (format: docs/hygiene.md)")),
        },
      ],
    });
  }
  sections.push(...linkSections(ctx));
  sections.push(...tagSections(ctx));
  const taggedCount = ctx.notes.reduce((k, n) => k + (n.tagged ? 1 : 0), 0);
  const usesTags = tagsInUse(cfg, ctx.notes.length, taggedCount);
  if (usesTags) sections.push(untaggedSection(ctx));

  // index.md's exclude and disable (never for its own lint-config errors), then the report's order.
  const kept = sections
    .filter((s) => s.rule === "lint-config" || !cfg.disabled.has(s.rule))
    .map((s) => (s.rule === "lint-config" || !cfg.exclude.length ? s : { rule: s.rule, groups: s.groups.filter((g) => !underAny(g.path, cfg.exclude)) }))
    .filter((s) => s.groups.length);
  const order = new Map(RULES.map((r, i) => [r, i]));
  const rank: Record<Severity, number> = { error: 0, warning: 1, info: 2 };
  kept.sort((a, b) => rank[SEVERITY[a.rule]] - rank[SEVERITY[b.rule]] || order.get(a.rule)! - order.get(b.rule)!);
  return { sections: kept, noteCount: ctx.notes.length, taggedCount, tagsInUse: usesTags };
}

// One plan per connection, for the index generation it was made from (every index transaction writes a new one).
const plans = new WeakMap<Database, { gen: string | null; plan: Plan }>();

function planFor(db: Database): Plan {
  const gen = getMeta(db, "gen");
  const cached = plans.get(db);
  if (cached && cached.gen === gen && gen !== null) return cached.plan;
  const plan = buildPlan(db);
  plans.set(db, { gen, plan });
  return plan;
}

function inScope(path: string, scope: string | undefined): boolean {
  return !scope || path === scope || path.startsWith(scope + "/");
}

/** One page of findings, errors first, then warnings, then info; by rule, path and line within each. */
export function lintPage(db: Database, filter: LintFilter, offset: number, limit: number): LintPage {
  const plan = planFor(db);
  const counts: Partial<Record<Rule, number>> = {};
  const items: Finding[] = [];
  let skip = offset;
  let total = 0;
  // Groups in report order, whole sections skipped by their totals when no scope narrows them: at 100k
  // notes a page walked a few hundred thousand groups only to count them.
  const take = (g: Group) => {
    total += g.n;
    if (items.length >= limit) return;
    if (skip >= g.n) {
      skip -= g.n;
      return;
    }
    const fs = g.expand();
    items.push(...fs.slice(skip, skip + limit - items.length));
    skip = 0;
  };
  for (const s of plan.sections) {
    if (filter.severity && SEVERITY[s.rule] !== filter.severity) continue;
    const chosen = !filter.rule || filter.rule === s.rule;
    if (!filter.scope) {
      const n = sectionTotal(s);
      counts[s.rule] = (counts[s.rule] ?? 0) + n;
      if (!chosen) continue;
      if (items.length >= limit || skip >= n) {
        total += n;
        if (items.length < limit) skip -= n;
        continue;
      }
      for (const g of s.groups) take(g);
      continue;
    }
    for (const g of s.groups) {
      if (!inScope(g.path, filter.scope)) continue;
      counts[s.rule] = (counts[s.rule] ?? 0) + g.n;
      if (chosen) take(g);
    }
  }
  return { items, total, counts, noteCount: plan.noteCount, taggedCount: plan.taggedCount, tagsInUse: plan.tagsInUse };
}

const totals = new WeakMap<Section, number>();

/** A section's findings, counted once per plan. */
function sectionTotal(s: Section): number {
  let n = totals.get(s);
  if (n === undefined) {
    n = 0;
    for (const g of s.groups) n += g.n;
    totals.set(s, n);
  }
  return n;
}

/** Counts per rule without writing any finding. */
export function lintSummary(db: Database): LintSummary {
  const plan = planFor(db);
  const counts: Partial<Record<Rule, number>> = {};
  for (const s of plan.sections) counts[s.rule] = (counts[s.rule] ?? 0) + sectionTotal(s);
  return { counts, noteCount: plan.noteCount, taggedCount: plan.taggedCount, tagsInUse: plan.tagsInUse };
}

/** Every finding, in report order. On a big vault with many problems this is large: tools page with lintPage. */
export function lintVault(db: Database): LintReport {
  const { items, total: _total, ...summary } = lintPage(db, {}, 0, Infinity);
  return { findings: items, ...summary };
}
