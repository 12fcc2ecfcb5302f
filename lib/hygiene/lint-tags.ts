// Tag rules: tag-typo, orphan-tag, untagged-note, and the schema rules
// declared in index.md (unknown-tag, missing-required-tag, deprecated-tag).
// Each (note, tag) gets at most one diagnosis, the most specific: deprecated,
// then unknown, then typo, then used-once. A diagnosis depends on the tag
// alone, so the statistics come from the tags index (one row per spelling),
// and only the notes carrying a diagnosed tag are looked up.
import type { Database } from "bun:sqlite";
import { boundedDistance, typoBudget } from "./fuzzy";
import { NoteGroup, type Finding, type Group, type LintContext, type LintNote, type Section } from "./lint";
import { matchesAny, underAny, type LintConfig } from "./lint-config";
import type { Rule } from "./lint-config";
import { firstLinkedNote } from "./lint-links";
import { isMetaNote } from "./wiki-layout";

interface TagStat {
  tag: string; // as first written (in path order)
  lc: string;
  count: number; // notes carrying it
}

// "Much more common": the likely intended tag is on at least this many times as many notes.
const TYPO_RATIO = 3;

function lastSegment(t: string): string {
  return t.slice(t.lastIndexOf("/") + 1);
}

function isDigitish(t: string): boolean {
  return /\d/.test(t);
}

/** For each rare tag, the much more common tag it is probably a typo of. */
export function findTagTypos(stats: TagStat[]): Map<string, TagStat> {
  const common = stats.filter((s) => s.count >= 2).sort((a, b) => b.count - a.count || (a.lc < b.lc ? -1 : 1));
  const out = new Map<string, TagStat>();
  if (!common.length) return out;
  for (const r of stats) {
    if (lastSegment(r.lc).length < 4) continue;
    const need = Math.max(2, TYPO_RATIO * r.count);
    let best: { s: TagStat; d: number } | null = null;
    for (const c of common) {
      if (c.count < need) break; // sorted by count: nothing further qualifies
      if (c.lc === r.lc || lastSegment(c.lc).length < 4) continue;
      if (isDigitish(r.lc) && isDigitish(c.lc)) continue; // year/2023 vs year/2024 are different tags
      if (c.lc.startsWith(r.lc + "/") || r.lc.startsWith(c.lc + "/")) continue;
      const budget = typoBudget(Math.min(r.lc.length, c.lc.length));
      if (Math.abs(c.lc.length - r.lc.length) > budget) continue;
      const d = boundedDistance(r.lc, c.lc, budget);
      if (d <= budget && (!best || d < best.d)) best = { s: c, d };
    }
    if (best) out.set(r.lc, best.s);
  }
  return out;
}

function showPatterns(ps: string[], max = 6): string {
  const shown = ps.slice(0, max).map((p) => "#" + (p.endsWith("/*") ? p.slice(0, -1) + "…" : p));
  return shown.join(", ") + (ps.length > max ? ", …" : "");
}

/** Every tag with its note count and its first spelling in path order, read from the tags index. */
function tagStats(db: Database): Map<string, TagStat> {
  const stats = new Map<string, TagStat>();
  const mixed = new Set<string>();
  for (const [lc, tag, n] of db.query("SELECT tag_lc, tag, count(*) FROM tags GROUP BY tag_lc, tag").values() as [string, string, number][]) {
    const s = stats.get(lc);
    if (!s) stats.set(lc, { tag, lc, count: n });
    else {
      mixed.add(lc);
      s.count += n;
    }
  }
  // Spelt more than one way: the first note in path order decides.
  const first = db.query("SELECT t.tag AS tag FROM tags t JOIN notes n ON n.id = t.note_id WHERE t.tag_lc = ? ORDER BY n.path, t.rowid LIMIT 1");
  for (const lc of mixed) stats.get(lc)!.tag = (first.get(lc) as { tag: string }).tag;
  return stats;
}

type TagRule = Extract<Rule, "deprecated-tag" | "unknown-tag" | "tag-typo" | "orphan-tag">;

function diagnose(s: TagStat, cfg: LintConfig, typos: Map<string, TagStat>): TagRule | null {
  if (cfg.deprecated.has(s.lc)) return "deprecated-tag";
  if (cfg.allowed && !matchesAny(s.lc, cfg.allowed)) return "unknown-tag";
  if (typos.has(s.lc)) return "tag-typo";
  if (s.count === 1) return "orphan-tag";
  return null;
}

function closestAllowed(lc: string, allowed: string[]): string | null {
  let best: { t: string; d: number } | null = null;
  const budget = typoBudget(lc.length);
  for (const a of allowed) {
    const d = boundedDistance(lc, a, budget);
    if (d <= budget && (!best || d < best.d)) best = { t: a, d };
  }
  return best?.t ?? null;
}

/** Groups in path order from (note id, finding maker) pairs, the pairs of one note kept in the order given. */
function groupsByNote(ctx: LintContext, items: { noteId: number; order: number; make: (n: LintNote) => Finding }[]): Group[] {
  const per = new Map<number, { order: number; make: (n: LintNote) => Finding }[]>();
  for (const it of items) {
    const list = per.get(it.noteId);
    if (list) list.push(it);
    else per.set(it.noteId, [it]);
  }
  const groups: Group[] = [];
  for (const n of ctx.notes) {
    const list = per.get(n.id);
    if (!list) continue;
    list.sort((a, b) => a.order - b.order);
    groups.push({ note: n, path: n.path, n: list.length, expand: () => list.map((it) => it.make(n)) });
  }
  return groups;
}

export function tagSections(ctx: LintContext): Section[] {
  const { db, cfg } = ctx;
  const stats = tagStats(db);
  const typos = findTagTypos([...stats.values()]);
  const allowedExact = cfg.allowed?.filter((p) => !p.includes("*")) ?? [];
  const message: Record<TagRule, (tag: string, s: TagStat) => [string, string]> = {
    "deprecated-tag": (tag, s) => {
      const rep = cfg.deprecated.get(s.lc);
      return [`#${tag} is deprecated (lint.deprecated in index.md)`, rep ? `Replace #${tag} with #${rep}` : `Remove #${tag}`];
    },
    "unknown-tag": (tag, s) => {
      const typo = typos.get(s.lc);
      const near = typo && matchesAny(typo.lc, cfg.allowed!) ? typo.tag : closestAllowed(s.lc, allowedExact);
      return [
        `#${tag} is not in the tag vocabulary declared in index.md (lint.tags)`,
        near ? `Replace #${tag} with #${near}` : `Use a declared tag (${showPatterns(cfg.allowed!)}), or add "${s.lc}" to lint.tags in index.md`,
      ];
    },
    "tag-typo": (tag, s) => {
      const typo = typos.get(s.lc)!;
      return [`#${tag} (on ${s.count} note${s.count === 1 ? "" : "s"}) looks like a typo of #${typo.tag} (on ${typo.count} notes)`, `Replace #${tag} with #${typo.tag}`];
    },
    "orphan-tag": (tag) => [`#${tag} is used by this note only`, `Use an existing tag instead, or tag related notes with #${tag} as well`],
  };
  const byRule = new Map<TagRule, { noteId: number; order: number; make: (n: LintNote) => Finding }[]>();
  const carriers = db.query("SELECT rowid, note_id, tag FROM tags WHERE tag_lc = ?");
  for (const s of stats.values()) {
    const rule = diagnose(s, cfg, typos);
    if (!rule) continue;
    let list = byRule.get(rule);
    if (!list) byRule.set(rule, (list = []));
    for (const [rowid, noteId, tag] of carriers.values(s.lc) as [number, number, string][]) {
      list.push({
        noteId,
        order: rowid, // a note's tags in the order it has them
        make: (n) => {
          const [msg, suggestion] = message[rule](tag, s);
          return ctx.finding(rule, n.path, msg, suggestion);
        },
      });
    }
  }
  const sections: Section[] = [];
  for (const [rule, items] of byRule) sections.push({ rule, groups: groupsByNote(ctx, items) });
  if (cfg.required.length) sections.push(requiredSection(ctx));
  return sections;
}

/** Note ids carrying a tag that matches one of the patterns ("x", "x/*" or "*"). */
function notesMatching(ctx: LintContext, patterns: string[]): Set<number> {
  const out = new Set<number>();
  const exact = ctx.db.query("SELECT DISTINCT note_id FROM tags WHERE tag_lc = ?");
  // '0' is the character after '/': the range holds exactly the tags under the prefix.
  const under = ctx.db.query("SELECT DISTINCT note_id FROM tags WHERE tag_lc >= ? AND tag_lc < ?");
  for (const p of patterns) {
    if (p === "*") {
      for (const n of ctx.notes) if (n.tagged) out.add(n.id);
      continue;
    }
    const rows = (p.endsWith("/*") ? under.values(p.slice(0, -1), p.slice(0, -2) + "0") : exact.values(p)) as [number][];
    for (const [id] of rows) out.add(id);
  }
  return out;
}

function requiredSection(ctx: LintContext): Section {
  const items: { noteId: number; order: number; make: (n: LintNote) => Finding }[] = [];
  ctx.cfg.required.forEach((req, i) => {
    const has = notesMatching(ctx, req.anyOf);
    const scope = req.paths ? ` for notes under ${req.paths.join(", ")}` : "";
    for (const n of ctx.notes) {
      if (isMetaNote(n.path) || (req.paths && !underAny(n.path, req.paths)) || has.has(n.id)) continue;
      items.push({
        noteId: n.id,
        order: i,
        make: (note) =>
          ctx.finding(
            "missing-required-tag",
            note.path,
            `Missing a required tag${scope}: it needs one of ${showPatterns(req.anyOf)} (lint.required in index.md)`,
            `Add one of ${showPatterns(req.anyOf)} to its tags`,
          ),
      });
    }
  });
  return { rule: "missing-required-tag", groups: groupsByNote(ctx, items) };
}

type TagTally = Map<string, { tag: string; n: number }>;

function tallyRows(rows: [string, string][]): TagTally {
  const t: TagTally = new Map();
  for (const [lc, tag] of rows) {
    const c = t.get(lc);
    if (c) c.n++;
    else t.set(lc, { tag, n: 1 });
  }
  return t;
}

/** Untagged notes, when the vault uses tags; the suggestion names the tags most used beside the note, read when a page shows it. */
export function untaggedSection(ctx: LintContext): Section {
  const folderTags = ctx.db.query("SELECT t.tag_lc, t.tag FROM tags t JOIN notes n ON n.id = t.note_id WHERE n.folder = ? ORDER BY n.path, t.rowid");
  const noteTags = ctx.db.query("SELECT tag_lc, tag FROM tags WHERE note_id = ? ORDER BY rowid");
  const folders = new Map<string, TagTally>();
  const suggestion = (n: LintNote): string => {
    let counts = folders.get(n.folder);
    if (!counts) folders.set(n.folder, (counts = tallyRows(folderTags.values(n.folder) as [string, string][])));
    let where = n.folder ? `other notes in ${n.folder}/` : "other notes at the vault root";
    if (!counts.size) {
      const out = firstLinkedNote(ctx.db, n.id);
      counts = out === null ? new Map() : tallyRows(noteTags.values(out) as [string, string][]);
      where = "the note it links to";
    }
    const best = [...counts.values()].sort((a, b) => b.n - a.n || (a.tag < b.tag ? -1 : 1)).slice(0, 3);
    if (!best.length) return "Add tags in the frontmatter (tags: [topic]) or inline as #topic";
    return `Add a tag, e.g. ${best.map((b) => "#" + b.tag).join(", ")} (used by ${where})`;
  };
  const untagged = (n: LintNote): Finding[] => [ctx.finding("untagged-note", n.path, `"${n.name}" has no tags`, suggestion(n))];
  const groups: Group[] = [];
  for (const n of ctx.notes) {
    if (!n.tagged) groups.push(new NoteGroup(n, 1, untagged));
  }
  return { rule: "untagged-note", groups };
}
