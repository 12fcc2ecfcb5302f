// Deterministic, offline vault hygiene: everything here is read from the
// index (links with their resolution, tags, index.md's frontmatter), so a
// lint of thousands of notes is a handful of queries and one pass in memory.
import type { Database } from "bun:sqlite";
import { NameMatcher } from "./fuzzy";
import { emptyConfig, parseLintConfig, RULES, underAny, type LintConfig, type Rule } from "./lint-config";
import { tagFindings } from "./lint-tags";
import { isMetaNote, isSourceNote, type NoteInfo } from "./wiki-layout";

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

export interface LintReport {
  findings: Finding[];
  noteCount: number;
  taggedCount: number;
  /** Whether the vault uses tags at all (see tagsInUse); untagged notes are findings only then. */
  tagsInUse: boolean;
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

function linkText(name: string, path: string, uniqueName: boolean): string {
  return `[[${uniqueName ? name : path.replace(/\.md$/i, "")}]]`;
}

export function lintVault(db: Database): LintReport {
  const { cfg, indexPath } = loadConfig(db);
  const notes = (db.query("SELECT id, path, name, folder FROM notes ORDER BY path").all() as Omit<NoteInfo, "tags">[]).map(
    (n): NoteInfo => ({ ...n, tags: [] }),
  );
  const byId = new Map(notes.map((n) => [n.id, n]));
  for (const t of db.query("SELECT note_id, tag, tag_lc FROM tags").all() as { note_id: number; tag: string; tag_lc: string }[]) {
    byId.get(t.note_id)?.tags.push({ tag: t.tag, lc: t.tag_lc });
  }
  const nameCount = new Map<string, number>();
  for (const n of notes) {
    const lc = n.name.toLowerCase();
    nameCount.set(lc, (nameCount.get(lc) ?? 0) + 1);
  }
  const link = (n: { name: string; path: string }) => linkText(n.name, n.path, nameCount.get(n.name.toLowerCase()) === 1);

  const findings: Finding[] = [];
  const add: Add = (rule, path, message, suggestion, line) => {
    const f: Finding = { rule, severity: SEVERITY[rule], path, message, suggestion };
    if (line !== undefined) f.line = line;
    findings.push(f);
  };
  for (const e of cfg.errors) add("lint-config", indexPath ?? "index.md", `index.md lint block: ${e}`, "Fix the lint: block in index.md's frontmatter (format: docs/hygiene.md)");

  // Links between notes (self-links and links to attachments do not connect notes).
  const firstOut = new Map<number, number>();
  const hasIn = new Set<number>();
  for (const e of db
    .query("SELECT l.note_id AS src, t.id AS dst FROM links l JOIN notes t ON t.path = l.resolved WHERE t.id != l.note_id ORDER BY l.note_id, l.ord")
    .all() as { src: number; dst: number }[]) {
    if (!firstOut.has(e.src)) firstOut.set(e.src, e.dst);
    hasIn.add(e.dst);
  }

  unresolvedLinks(db, notes, link, add);

  for (const n of notes) {
    if (isMetaNote(n.path) || isSourceNote(n.path) || hasIn.has(n.id)) continue;
    const out = firstOut.get(n.id);
    const listIt = indexPath && n.path !== indexPath ? `add ${link(n)} to index.md` : "link it from a related note";
    if (out === undefined) {
      add("orphan-note", n.path, `No links in or out: no note links to "${n.name}" and it links to no note`, `Connect it: ${listIt}, and link from it to the notes it relates to`);
    } else {
      const target = byId.get(out)!;
      add("no-inbound", n.path, `No note links to "${n.name}" (it links out, but nothing links back)`, `Link back to it from ${link(target)}, which it links to, or ${listIt}`);
    }
  }

  tagFindings(notes, cfg, add);

  const untagged = notes.filter((n) => n.tags.length === 0);
  const usesTags = tagsInUse(cfg, notes.length, notes.length - untagged.length);
  const folders = usesTags && untagged.length ? folderTallies(notes) : new Map<string, TagTally>();
  if (usesTags) for (const n of untagged) add("untagged-note", n.path, `"${n.name}" has no tags`, untaggedSuggestion(n, byId, firstOut, folders));

  const order = new Map(RULES.map((r, i) => [r, i]));
  const rank: Record<Severity, number> = { error: 0, warning: 1, info: 2 };
  const kept = findings.filter((f) => f.rule === "lint-config" || (!cfg.disabled.has(f.rule) && !underAny(f.path, cfg.exclude)));
  kept.sort(
    (a, b) =>
      rank[a.severity] - rank[b.severity] ||
      order.get(a.rule)! - order.get(b.rule)! ||
      (a.path < b.path ? -1 : a.path > b.path ? 1 : 0) ||
      (a.line ?? 0) - (b.line ?? 0),
  );
  return { findings: kept, noteCount: notes.length, taggedCount: notes.length - untagged.length, tagsInUse: usesTags };
}

export type Add = (rule: Rule, path: string, message: string, suggestion: string, line?: number) => void;

function unresolvedLinks(db: Database, notes: NoteInfo[], link: (n: { name: string; path: string }) => string, add: Add): void {
  const rows = db
    .query(
      `SELECT n.path AS path, l.target AS target, l.kind AS kind, max(l.embed) AS embed, min(l.line) AS line, count(*) AS n
       FROM links l JOIN notes n ON n.id = l.note_id
       WHERE l.resolved IS NULL GROUP BY l.note_id, l.target, l.kind ORDER BY n.path, line`,
    )
    .all() as { path: string; target: string; kind: string; embed: number; line: number; n: number }[];
  if (!rows.length) return;
  // Built only when something is broken: names and aliases, shortest paths first so ties go to them.
  const noteMatcher = new NameMatcher<{ name: string; path: string; shown: string }>();
  const sorted = [...notes].sort((a, b) => a.path.length - b.path.length || (a.path < b.path ? -1 : 1));
  const aliases = new Map(
    (db.query("SELECT path, aliases FROM notes WHERE aliases != '[]'").all() as { path: string; aliases: string }[]).map((r) => [r.path, JSON.parse(r.aliases) as string[]]),
  );
  for (const n of sorted) {
    noteMatcher.add(n.name, { name: n.name, path: n.path, shown: link(n) });
    for (const a of aliases.get(n.path) ?? []) noteMatcher.add(a, { name: a, path: n.path, shown: `${link(n).slice(0, -2)}|${a}]]` });
  }
  let fileMatcher: NameMatcher<string> | null = null;
  for (const r of rows) {
    const base = r.target.slice(r.target.lastIndexOf("/") + 1);
    const stem = base.replace(/\.md$/i, "");
    const isFile = /\.[A-Za-z0-9]{1,8}$/.test(base) && !/\.md$/i.test(base);
    const written = r.kind === "markdown" ? `(${r.target})` : `${r.embed ? "!" : ""}[[${r.target}]]`;
    const times = r.n > 1 ? ` (${r.n} times)` : "";
    let suggestion: string;
    if (isFile) {
      if (!fileMatcher) {
        fileMatcher = new NameMatcher<string>();
        for (const f of db.query("SELECT path FROM files ORDER BY length(path), path").all() as { path: string }[]) {
          fileMatcher.add(f.path.slice(f.path.lastIndexOf("/") + 1), f.path);
        }
      }
      const hit = fileMatcher.closest(base);
      suggestion = hit ? `Did you mean ${hit}? Point the link there` : `Add the file ${base} to the vault, or remove the link`;
    } else {
      const hit = noteMatcher.closest(stem);
      suggestion = hit ? `Did you mean ${hit.shown} (${hit.path})? Change the link to it` : `Create the note "${stem}.md", or remove the link`;
    }
    add("unresolved-link", r.path, `Unresolved link ${written} on line ${r.line}${times}: no note or file by that name`, suggestion, r.line);
  }
}

type TagTally = Map<string, { tag: string; n: number }>;

function tally(into: TagTally, o: NoteInfo): void {
  for (const t of o.tags) {
    const c = into.get(t.lc);
    if (c) c.n++;
    else into.set(t.lc, { tag: t.tag, n: 1 });
  }
}

/** Tag counts per folder, built once per lint (an untagged note adds nothing to its own folder's count). */
function folderTallies(notes: NoteInfo[]): Map<string, TagTally> {
  const m = new Map<string, TagTally>();
  for (const o of notes) {
    let t = m.get(o.folder);
    if (!t) m.set(o.folder, (t = new Map()));
    tally(t, o);
  }
  return m;
}

function untaggedSuggestion(n: NoteInfo, byId: Map<number, NoteInfo>, firstOut: Map<number, number>, folders: Map<string, TagTally>): string {
  let counts: TagTally = folders.get(n.folder) ?? new Map();
  let where = `other notes in ${n.folder || "the vault root"}/`;
  if (!counts.size) {
    counts = new Map();
    const out = firstOut.get(n.id);
    if (out !== undefined) tally(counts, byId.get(out)!);
    where = "the note it links to";
  }
  const best = [...counts.values()].sort((a, b) => b.n - a.n || (a.tag < b.tag ? -1 : 1)).slice(0, 3);
  if (!best.length) return "Add tags in the frontmatter (tags: [topic]) or inline as #topic";
  return `Add a tag, e.g. ${best.map((b) => "#" + b.tag).join(", ")} (used by ${where})`;
}
