// Link rules: unresolved-link, orphan-note, no-inbound. Counted per note from
// the indexer's columns (notes.unresolved, notes.out_notes) and one pass over
// the resolved-links index; a note's findings are written only when a page
// shows them.
import type { Database } from "bun:sqlite";
import { getMeta } from "../store/index-db";
import { NameMatcher } from "./fuzzy";
import { cut } from "../vault/work-markers";
import { NoteGroup, type Finding, type Group, type LintContext, type LintNote, type Section } from "./lint";
import { isMetaNote, isSourceNote } from "./wiki-layout";

export function linkSections(ctx: LintContext): Section[] {
  return [unresolvedSection(ctx), ...orphanSections(ctx)];
}

// A name's note, or an alias's note with the alias: the link text to show is made only for the few matches a page writes.
type NameOf = LintNote | { note: LintNote; alias: string };

function shownLink(ctx: LintContext, v: NameOf): { path: string; shown: string } {
  if ("alias" in v) return { path: v.note.path, shown: `${ctx.link(v.note).slice(0, -2)}|${v.alias}]]` };
  return { path: v.path, shown: ctx.link(v) };
}

// The "did you mean" index over every note name and alias, per connection and index generation:
// on 100,000 notes it takes a moment to build, and a lint page or the next one reuses it.
const matchers = new WeakMap<Database, { gen: string | null; notes: NameMatcher<NameOf>; files: NameMatcher<string> | null }>();

function matchersFor(ctx: LintContext): { notes: NameMatcher<NameOf>; files(): NameMatcher<string> } {
  const gen = getMeta(ctx.db, "gen");
  let m = matchers.get(ctx.db);
  if (!m || m.gen !== gen || gen === null) {
    // Shortest paths first, so that ties go to them.
    const sorted = [...ctx.notes].sort((a, b) => a.path.length - b.path.length || (a.path < b.path ? -1 : 1));
    const aliases = new Map(
      (ctx.db.query("SELECT path, aliases FROM notes WHERE aliases != '[]'").all() as { path: string; aliases: string }[]).map((r) => [
        r.path,
        JSON.parse(r.aliases) as string[],
      ]),
    );
    const notes = new NameMatcher<NameOf>();
    for (const n of sorted) {
      notes.add(n.name, n);
      for (const a of aliases.get(n.path) ?? []) notes.add(a, { note: n, alias: a });
    }
    m = { gen, notes, files: null };
    matchers.set(ctx.db, m);
  }
  const entry = m;
  return {
    notes: entry.notes,
    files() {
      if (!entry.files) {
        entry.files = new NameMatcher<string>();
        for (const f of ctx.db.query("SELECT path FROM files ORDER BY length(path), path").all() as { path: string }[]) {
          entry.files.add(f.path.slice(f.path.lastIndexOf("/") + 1), f.path);
        }
      }
      return entry.files;
    },
  };
}

/** A link's target as a finding shows it: a target of 600,000 characters came back twice in every finding. */
const cutForMessage = (target: string) => cut(target, 201);

function unresolvedSection(ctx: LintContext): Section {
  const groupsOf = ctx.db.query(
    `SELECT target, kind, max(embed) AS embed, min(line) AS line, count(*) AS n
     FROM links WHERE note_id = ? AND resolved IS NULL GROUP BY target, kind ORDER BY line, target, kind`,
  );
  const expand = (note: LintNote): Finding[] => {
    const rows = groupsOf.all(note.id) as { target: string; kind: string; embed: number; line: number; n: number }[];
    const m = matchersFor(ctx);
    return rows.map((r) => {
      const base = r.target.slice(r.target.lastIndexOf("/") + 1);
      const stem = base.replace(/\.md$/i, "");
      const isFile = /\.[A-Za-z0-9]{1,8}$/.test(base) && !/\.md$/i.test(base);
      const target = cutForMessage(r.target);
      const written = r.kind === "markdown" ? `(${target})` : `${r.embed ? "!" : ""}[[${target}]]`;
      const times = r.n > 1 ? ` (${r.n} times)` : "";
      let suggestion: string;
      if (isFile) {
        const hit = m.files().closest(base);
        suggestion = hit ? `Did you mean ${hit}? Point the link there` : `Add the file ${cutForMessage(base)} to the vault, or remove the link`;
      } else {
        const found = m.notes.closest(stem);
        const hit = found && shownLink(ctx, found);
        suggestion = hit ? `Did you mean ${hit.shown} (${hit.path})? Change the link to it` : `Create the note "${cutForMessage(stem)}.md", or remove the link`;
      }
      return ctx.finding("unresolved-link", note.path, `Unresolved link ${written} on line ${r.line}${times}: no note or file by that name`, suggestion, r.line);
    });
  };
  const groups: Group[] = [];
  for (const n of ctx.notes) if (n.unresolved > 0) groups.push(new NoteGroup(n, n.unresolved, expand));
  return { rule: "unresolved-link", groups };
}

/** Notes that another note links to. Self-links do not count: a target whose every inbound link comes from itself has none. */
function linkedNotes(ctx: LintContext): Set<number> {
  const out = new Set<number>();
  // The resolved-links index holds (resolved, note_id): this reads the index only.
  const rows = ctx.db.query("SELECT resolved, min(note_id), max(note_id) FROM links WHERE resolved IS NOT NULL GROUP BY resolved").values() as [string, number, number][];
  for (const [path, lo, hi] of rows) {
    const t = ctx.byPath.get(path);
    if (t && (lo !== t.id || hi !== t.id)) out.add(t.id);
  }
  return out;
}

function orphanSections(ctx: LintContext): Section[] {
  const linked = linkedNotes(ctx);
  const firstOut = ctx.db.query(
    "SELECT t.path AS path, t.name AS name FROM links l JOIN notes t ON t.path = l.resolved WHERE l.note_id = ? AND t.id != ? ORDER BY l.ord LIMIT 1",
  );
  const listIt = (n: LintNote) => (ctx.indexPath && n.path !== ctx.indexPath ? `add ${ctx.link(n)} to index.md` : "link it from a related note");
  const orphanFinding = (n: LintNote): Finding[] => [
    ctx.finding("orphan-note", n.path, `No links in or out: no note links to "${n.name}" and it links to no note`, `Connect it: ${listIt(n)}, and link from it to the notes it relates to`),
  ];
  const noInboundFinding = (n: LintNote): Finding[] => {
    const target = firstOut.get(n.id, n.id) as { path: string; name: string } | null;
    const back = target ? `Link back to it from ${ctx.link(target)}, which it links to, or ${listIt(n)}` : `Link to it from a related note, or ${listIt(n)}`;
    return [ctx.finding("no-inbound", n.path, `No note links to "${n.name}" (it links out, but nothing links back)`, back)];
  };
  const orphans: Group[] = [];
  const noInbound: Group[] = [];
  for (const n of ctx.notes) {
    if (isMetaNote(n.path) || isSourceNote(n.path) || linked.has(n.id)) continue;
    if (n.outNotes === 0) orphans.push(new NoteGroup(n, 1, orphanFinding));
    else noInbound.push(new NoteGroup(n, 1, noInboundFinding));
  }
  return [
    { rule: "orphan-note", groups: orphans },
    { rule: "no-inbound", groups: noInbound },
  ];
}

/** The first note a note links to (not itself), for suggestions elsewhere. */
export function firstLinkedNote(db: Database, noteId: number): number | null {
  const r = db.query("SELECT t.id AS id FROM links l JOIN notes t ON t.path = l.resolved WHERE l.note_id = ? AND t.id != ? ORDER BY l.ord LIMIT 1").get(noteId, noteId) as {
    id: number;
  } | null;
  return r?.id ?? null;
}
