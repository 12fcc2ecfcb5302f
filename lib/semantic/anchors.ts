// Anchor text: the lines of other notes that link to a note, as a keyword
// field of its own for hybrid retrieval. A person who links to a page says in
// their own words what it is for ("you can open a note in its own window"
// beside [[Pop-out windows]]), and those are the words a paraphrased question
// uses where the page's own text does not. On Obsidian Help the keyword
// ranking found 12 paraphrased questions of 21 with it against 7 without
// (tuning half), 8 against 5 (report half); the hybrid 46 and 41 questions of
// 51 against 42 and 39 (docs/retrieval-experiments.md, "eighth pass").
//
// A table of its own, not a column of fts_stem: FTS5's bm25() counts every
// column in a document's length, so a column of anchor lines made a
// well-linked note longer and cost it the score the anchors brought (one
// paraphrase gained as a column, four as a score of its own, tuning half).
//
// Kept in step from what changed: the notes whose text changed (their lines
// are read again) and the notes that are new or changed as targets (links
// from unchanged notes that now resolve to them). A link whose target moves
// to another existing note without either note changing (a name that was
// ambiguous and no longer is) keeps its old anchor until one of them changes:
// a ranking hint a little stale, never a wrong answer.
import type { Database } from "bun:sqlite";
import { bodyLinks } from "../vault/parse";
import { ngramText } from "../vault/ngram";

/**
 * How much an anchor match counts beside the note's own fields (bm25 scores added). Tuning half,
 * with AROUND_LINK 100: 0.6-0.9 found the most (0.75 the best MRR); 0.35 and 1 a question fewer.
 */
export const ANCHOR_WEIGHT = 0.75;
// A line can be a whole paragraph: the words near the link speak about it. Tuning half: 80-150
// characters either side rank best (100 the best MRR); 60 loses questions, 200-400 rank lower.
const AROUND_LINK = 100;
// A note linked from thousands of places (an index page) keeps the first lines, by linking note.
const MAX_ANCHOR_CHARS = 8000;

const TOKENIZE = "tokenize = 'porter unicode61 remove_diacritics 2'";

/** (Re)create the anchor tables, empty (keyword.ts calls this when its layout changes). */
export function resetAnchors(db: Database): void {
  db.exec("DROP TABLE IF EXISTS fts_anchor");
  db.exec("DROP TABLE IF EXISTS fts_anchor_ng");
  db.exec("DROP TABLE IF EXISTS anchor_lines");
  db.exec("DROP TABLE IF EXISTS anchor_dirty");
  db.exec(`CREATE VIRTUAL TABLE fts_anchor USING fts5(text, content = '', contentless_delete = 1, ${TOKENIZE})`);
  // The lines' Chinese, Japanese or Thai as pairs of characters (../vault/ngram.ts), for targets whose lines hold
  // any. A table of its own, not a column of fts_anchor: bm25() counts every column in a row's length, and the
  // pairs of one such line lengthened a short anchor row enough to move English matches by up to 6% and reorder
  // top tens in a vault that mixes the two (the review of 2026-12-06).
  db.exec(`CREATE VIRTUAL TABLE fts_anchor_ng USING fts5(text_ng, content = '', contentless_delete = 1, ${TOKENIZE})`);
  // One row per linking note and target: the text it gives that target.
  db.exec("CREATE TABLE anchor_lines (src_id INTEGER NOT NULL, target_id INTEGER NOT NULL, text TEXT NOT NULL, PRIMARY KEY (src_id, target_id)) WITHOUT ROWID");
  db.exec("CREATE INDEX anchor_lines_target ON anchor_lines(target_id)");
  // Targets whose fts_anchor row is to be rebuilt: kept on disk so that a sync cut short finishes next time.
  db.exec("CREATE TABLE anchor_dirty (target_id INTEGER PRIMARY KEY)");
}

/** A link's line without link markup: a wikilink's target (already the title field's) goes, its display text stays. */
function anchorWords(line: string): string {
  return line
    .replace(/\[\[[^\]|]*\|?/g, " ")
    .replace(/\]\]|\]\([^)]*\)|[[\]#*>`-]/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/** What note `src` says about each note it links to (by target id), read from its body in the full-text index. */
function linesFrom(db: Database, src: number, idOfPath: (p: string) => number | undefined): Map<number, string> {
  const out = new Map<number, string>();
  const links = db.query("SELECT resolved FROM links WHERE note_id = ? ORDER BY ord").all(src) as { resolved: string | null }[];
  if (!links.some((l) => l.resolved !== null)) return out;
  const body = (db.query("SELECT body FROM fts WHERE rowid = ?").get(src) as { body: string | null } | null)?.body;
  if (typeof body !== "string") return out;
  const found = bodyLinks(body);
  // Links in properties come first and are not in the body (lib/vault/parse.ts): the body's are the last
  // found.length rows. The body is what those were parsed from; fewer rows (an index older than this code): nothing.
  if (found.length > links.length) return out;
  const skip = links.length - found.length;
  const seen = new Map<number, Set<string>>();
  for (let k = 0; k < found.length; k++) {
    const path = links[skip + k]!.resolved;
    const target = path === null ? undefined : idOfPath(path);
    if (target === undefined || target === src) continue;
    const { index, lineStart, lineEnd } = found[k]!;
    const from = Math.max(lineStart, index - AROUND_LINK);
    const to = Math.min(lineEnd, index + AROUND_LINK);
    const words = anchorWords(body.slice(from, to));
    if (!words) continue;
    let s = seen.get(target);
    if (!s) seen.set(target, (s = new Set()));
    s.add(words);
  }
  for (const [t, s] of seen) out.set(t, [...s].join("\n"));
  return out;
}

/** Notes that went: what they said about others goes, and what others said about them. */
export function dropAnchors(db: Database, gone: number[]): void {
  const dirty = db.query("INSERT OR IGNORE INTO anchor_dirty(target_id) SELECT target_id FROM anchor_lines WHERE src_id = ?");
  const lines = db.query("DELETE FROM anchor_lines WHERE src_id = ? OR target_id = ?");
  const row = db.query("DELETE FROM fts_anchor WHERE rowid = ?");
  const rowNg = db.query("DELETE FROM fts_anchor_ng WHERE rowid = ?");
  const mark = db.query("DELETE FROM anchor_dirty WHERE target_id = ?");
  for (const id of gone) {
    dirty.run(id);
    lines.run(id, id);
    row.run(id);
    rowNg.run(id);
    mark.run(id);
  }
}

/**
 * A reader for one sync: `read(id)` reads again what note `id` (new, or its text changed) says beside
 * its links, and what unchanged notes say about it (a link that now resolves to a new note); the
 * targets touched are marked for rebuildAnchors. `pending`: every note of this sync still to come
 * through here, whose lines are read when its own turn comes. Call inside the caller's transaction.
 */
export function anchorReader(db: Database, pending: Set<number>): (id: number) => void {
  const idQuery = db.query("SELECT id FROM notes WHERE path = ?");
  const ids = new Map<string, number | undefined>();
  const idOfPath = (p: string) => {
    if (!ids.has(p)) ids.set(p, (idQuery.get(p) as { id: number } | null)?.id);
    return ids.get(p);
  };
  const markOld = db.query("INSERT OR IGNORE INTO anchor_dirty(target_id) SELECT target_id FROM anchor_lines WHERE src_id = ?");
  const mark = db.query("INSERT OR IGNORE INTO anchor_dirty(target_id) VALUES (?)");
  const dropSource = db.query("DELETE FROM anchor_lines WHERE src_id = ?");
  const put = db.query("INSERT OR REPLACE INTO anchor_lines(src_id, target_id, text) VALUES (?, ?, ?)");
  const has = db.query("SELECT 1 FROM anchor_lines WHERE src_id = ? AND target_id = ?");
  const linkers = db.query("SELECT DISTINCT l.note_id AS src FROM links l JOIN notes n ON n.path = l.resolved WHERE n.id = ?");
  return (id) => {
    pending.delete(id);
    markOld.run(id);
    dropSource.run(id);
    for (const [t, text] of linesFrom(db, id, idOfPath)) {
      put.run(id, t, text);
      mark.run(t);
    }
    mark.run(id);
    for (const { src } of linkers.all(id) as { src: number }[]) {
      if (pending.has(src) || has.get(src, id)) continue;
      const text = linesFrom(db, src, idOfPath).get(id);
      if (text) put.run(src, id, text);
    }
  };
}

/** Rebuild the fts_anchor rows of marked targets for about `ms` milliseconds; returns how many were done (0: none left). */
export function rebuildAnchors(db: Database, ms: number): number {
  const until = performance.now() + ms;
  // More than one slice's worth (a target takes tens of microseconds), not the whole backlog of a big vault.
  const targets = (db.query("SELECT target_id AS t FROM anchor_dirty LIMIT 4096").all() as { t: number }[]).map((r) => r.t);
  const textsOf = db.query("SELECT text FROM anchor_lines WHERE target_id = ? ORDER BY src_id");
  const drop = db.query("DELETE FROM fts_anchor WHERE rowid = ?");
  const dropNg = db.query("DELETE FROM fts_anchor_ng WHERE rowid = ?");
  const add = db.query("INSERT INTO fts_anchor(rowid, text) VALUES (?, ?)");
  const addNg = db.query("INSERT INTO fts_anchor_ng(rowid, text_ng) VALUES (?, ?)");
  const done = db.query("DELETE FROM anchor_dirty WHERE target_id = ?");
  const exists = db.query("SELECT 1 FROM notes WHERE id = ?");
  let n = 0;
  for (const t of targets) {
    if (n++ > 0 && performance.now() >= until) return n - 1;
    drop.run(t);
    dropNg.run(t);
    done.run(t);
    // Gone since it was marked (its own sync will drop the rest).
    if (!exists.get(t)) continue;
    let text = "";
    // Stepped, not read whole: a page linked from tens of thousands of notes needs only its first rows.
    for (const r of textsOf.iterate(t) as IterableIterator<{ text: string }>) {
      if (text.length + r.text.length > MAX_ANCHOR_CHARS) break;
      text += (text ? "\n" : "") + r.text;
    }
    if (!text) continue;
    add.run(t, text);
    const ng = ngramText(text);
    if (ng) addNg.run(t, ng);
  }
  return n;
}

/**
 * Notes whose anchor text matches the FTS5 expression, by bm25 (higher is better): `table` fts_anchor for
 * words, fts_anchor_ng for pairs of characters. null when FTS5 refuses it (a table of an older layout).
 */
export function anchorRank(db: Database, match: string, limit: number, table: "fts_anchor" | "fts_anchor_ng" = "fts_anchor"): { noteId: number; score: number }[] | null {
  try {
    return db.query(`SELECT rowid AS noteId, -bm25(${table}) AS score FROM ${table} WHERE ${table} MATCH ? ORDER BY bm25(${table}) LIMIT ?`).all(match, limit) as {
      noteId: number;
      score: number;
    }[];
  } catch {
    return null;
  }
}
