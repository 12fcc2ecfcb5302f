// Tag rules: tag-typo, orphan-tag, and the schema rules declared in index.md
// (unknown-tag, missing-required-tag, deprecated-tag). Each (note, tag) gets at
// most one diagnosis, the most specific: deprecated, then unknown, then typo,
// then used-once.
import { boundedDistance, typoBudget } from "./fuzzy";
import type { Add } from "./lint";
import { matchesAny, underAny, type LintConfig } from "./lint-config";
import { isMetaNote, type NoteInfo } from "./wiki-layout";

interface TagStat {
  tag: string; // as first written
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

export function tagFindings(notes: NoteInfo[], cfg: LintConfig, add: Add): void {
  const stats = new Map<string, TagStat>();
  for (const n of notes) {
    for (const t of n.tags) {
      const s = stats.get(t.lc);
      if (s) s.count++;
      else stats.set(t.lc, { tag: t.tag, lc: t.lc, count: 1 });
    }
  }
  const typos = findTagTypos([...stats.values()]);
  const allowedExact = cfg.allowed?.filter((p) => !p.includes("*")) ?? [];

  for (const n of notes) {
    for (const t of n.tags) {
      const s = stats.get(t.lc)!;
      const typo = typos.get(t.lc);
      if (cfg.deprecated.has(t.lc)) {
        const rep = cfg.deprecated.get(t.lc);
        add("deprecated-tag", n.path, `#${t.tag} is deprecated (lint.deprecated in index.md)`, rep ? `Replace #${t.tag} with #${rep}` : `Remove #${t.tag}`);
      } else if (cfg.allowed && !matchesAny(t.lc, cfg.allowed)) {
        const near = typo && matchesAny(typo.lc, cfg.allowed) ? typo.tag : closestAllowed(t.lc, allowedExact);
        add(
          "unknown-tag",
          n.path,
          `#${t.tag} is not in the tag vocabulary declared in index.md (lint.tags)`,
          near ? `Replace #${t.tag} with #${near}` : `Use a declared tag (${showPatterns(cfg.allowed)}), or add "${t.lc}" to lint.tags in index.md`,
        );
      } else if (typo) {
        add(
          "tag-typo",
          n.path,
          `#${t.tag} (on ${s.count} note${s.count === 1 ? "" : "s"}) looks like a typo of #${typo.tag} (on ${typo.count} notes)`,
          `Replace #${t.tag} with #${typo.tag}`,
        );
      } else if (s.count === 1) {
        add("orphan-tag", n.path, `#${t.tag} is used by this note only`, `Use an existing tag instead, or tag related notes with #${t.tag} as well`);
      }
    }
  }

  for (const req of cfg.required) {
    for (const n of notes) {
      if (isMetaNote(n.path) || (req.paths && !underAny(n.path, req.paths))) continue;
      if (n.tags.some((t) => matchesAny(t.lc, req.anyOf))) continue;
      const scope = req.paths ? ` for notes under ${req.paths.join(", ")}` : "";
      add(
        "missing-required-tag",
        n.path,
        `Missing a required tag${scope}: it needs one of ${showPatterns(req.anyOf)} (lint.required in index.md)`,
        `Add one of ${showPatterns(req.anyOf)} to its tags`,
      );
    }
  }
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
