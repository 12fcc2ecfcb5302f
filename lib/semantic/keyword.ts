// Hybrid retrieval's keyword side: BM25 over ANY of the query's words (the
// search tool ANDs them, which is right for a person typing keywords and wrong
// for a question in prose), on a Porter-stemmed copy of the full-text index
// with the fields that name a note's subject kept apart from its body: title,
// aliases, headings and folder path each weigh more than a body word (see
// KEYWORD_WEIGHTS). Stemming lifts BM25 on BEIR SciFact from nDCG@10 0.673 to
// 0.690 (measured; see bench/retrieval.ts). The copy (fts_stem, contentless)
// is brought in step with the notes lazily, before each use, from the bodies
// already in `fts`.
//
// Text in scripts written without spaces (Chinese, Japanese, Thai…) is one
// token per run to unicode61, so a question's words would match only a note
// whose whole run is that word: such text is also kept as overlapping pairs of
// characters (lib/vault/ngram.ts) in the *_ng columns, which the query's runs
// are matched against (ngramAnyTerms).
import type { Database } from "bun:sqlite";
import { getMeta, setMeta } from "../store/index-db";
import { MAX_QUERY_TERMS, tokensOf, toFtsAnyTerms } from "../retrieval/fts-query";
import { hasUnspacedRun, ngramText, runPairs } from "../vault/ngram";
import { ANCHOR_WEIGHT, anchorRank, anchorReader, dropAnchors, rebuildAnchors, resetAnchors } from "./anchors";
import { writingTransaction } from "../store/write-lock";

/**
 * BM25 column weights: title, aliases, headings, folder path, body. A word in
 * a note's title or alias names its subject; one in a heading names a part of
 * it; the folder gives context (Obsidian Help's "Obsidian Sync/…"). Measured
 * on the tuning halves of our question sets and SciFact's train queries (see
 * docs/retrieval-experiments.md, "What we tried"). The n-gram columns weigh as the fields
 * they come from: titleNg holds the title's and aliases' pairs (fts.title_ng),
 * headingsNg the headings', bodyNg the body's (not measured: no question set
 * in those scripts).
 */
export const KEYWORD_WEIGHTS = { title: 3, aliases: 3, headings: 1.5, path: 1, body: 1, titleNg: 3, headingsNg: 1.5, bodyNg: 1 };

// The columns of fts_stem; a change re-creates the table and re-fills it from the notes
// (it is derived data, like the rest of index.db), and the anchor text's tables (./anchors.ts).
// fields-3: the n-gram columns. A note without such text has them NULL, which adds nothing to
// its length: in a vault without such text BM25's scores are those of fields-2 to the last bit. Where
// some notes hold it, their pairs lengthen them and the vault's average (FTS5 measures both over all
// columns): English scores move slightly (1e-5 relative on Obsidian Help, whose top 10s kept their order).
// fields-4: the anchor text's pairs in a table of their own (anchors.ts), re-created with fts_stem.
const LAYOUT = "fields-4";
const COLUMNS = "title, aliases, headings, path, body, title_ng, headings_ng, body_ng";
const NGRAM_COLUMNS = "{title_ng headings_ng body_ng}";
// A sync works in slices of about SLICE_MS, one transaction each, with `pause` between them. Slices
// of 500 notes held the request thread 230-260 ms each on obsidian-hub; slices of 25 ms hold it at
// most 60-75 ms (an FTS5 commit flushes its segment), for ~0.5 s more in all (hub 2.85 s against
// 2.35 s; the 10k vault 4.2-4.4 s against 3.5 s).
const SLICE_MS = 25;

export interface KeywordHit {
  noteId: number;
  score: number; // -bm25: higher is better
}

/** Make fts_stem hold this version's columns (once; the migration made an older, two-column one). */
function ensureLayout(db: Database): void {
  if (getMeta(db, "keyword_layout") === LAYOUT) return;
  writingTransaction(db, () => {
    db.exec("DROP TABLE IF EXISTS fts_stem");
    db.exec(`CREATE VIRTUAL TABLE fts_stem USING fts5(${COLUMNS}, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2')`);
    db.exec("DELETE FROM fts_stem_notes");
    resetAnchors(db);
    setMeta(db, "keyword_layout", LAYOUT);
  });
}

/** The folder part of a path as words ("Obsidian Sync/Version history.md" → "Obsidian Sync"). */
function folderWords(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "" : path.slice(0, i).replace(/\//g, " ");
}

/**
 * Bring fts_stem and the anchor text in step with notes; returns how many notes were (re)indexed or
 * dropped. A first sync reads every note (a second or more on a vault of thousands): `pause` runs
 * between slices of it, so that the server answers other requests meanwhile.
 */
export async function syncStemmed(db: Database, pause: () => Promise<void> = async () => {}, sliceMs = SLICE_MS): Promise<number> {
  ensureLayout(db);
  const stale = db
    .query(
      "SELECT n.id AS id, n.hash AS hash, n.title AS title, n.aliases AS aliases, n.path AS path FROM notes n LEFT JOIN fts_stem_notes s ON s.note_id = n.id WHERE s.hash IS NULL OR s.hash <> n.hash",
    )
    .all() as { id: number; hash: string; title: string; aliases: string; path: string }[];
  const gone = (db.query("SELECT note_id AS id FROM fts_stem_notes WHERE note_id NOT IN (SELECT id FROM notes)").all() as { id: number }[]).map((r) => r.id);
  if (!stale.length && !gone.length) {
    // An earlier sync cut short may have left anchor rows to rebuild.
    while (writingTransaction(db, () => rebuildAnchors(db, sliceMs))) await pause();
    return 0;
  }
  const del = db.query("DELETE FROM fts_stem WHERE rowid = ?");
  // The title's and body's n-grams are fts's own (made once, by the indexer); the headings' are made here
  // (a few short lines: for a note without such text, one regex test).
  const ins = db.query(`INSERT INTO fts_stem(rowid, ${COLUMNS}) SELECT rowid, ?, ?, ?, ?, body, title_ng, ?, body_ng FROM fts WHERE rowid = ?`);
  const headingsOf = db.query("SELECT title FROM headings WHERE note_id = ? ORDER BY ord");
  const setState = db.query("INSERT OR REPLACE INTO fts_stem_notes(note_id, hash) VALUES (?, ?)");
  const delState = db.query("DELETE FROM fts_stem_notes WHERE note_id = ?");
  const aliasText = (json: string) => {
    try {
      const a = JSON.parse(json) as unknown;
      return Array.isArray(a) ? a.filter((x) => typeof x === "string").join("\n") : "";
    } catch {
      return "";
    }
  };
  const pending = new Set(stale.map((r) => r.id));
  const readAnchors = anchorReader(db, pending);
  let next = 0;
  for (let first = true; first || next < stale.length; first = false) {
    if (!first) await pause();
    writingTransaction(db, () => {
      if (first) {
        for (const id of gone) {
          del.run(id);
          delState.run(id);
        }
        dropAnchors(db, gone);
      }
      const until = performance.now() + sliceMs;
      do {
        const r = stale[next];
        if (!r) break;
        next++;
        readAnchors(r.id);
        // The title heading (an H1 equal to the title) is already in the title column.
        const headings = (headingsOf.all(r.id) as { title: string }[]).map((h) => h.title).filter((h) => h !== r.title);
        del.run(r.id);
        // A blank line between headings: two headings are never one run (ngram.ts joins CJK across a single line break).
        ins.run(r.title, aliasText(r.aliases), headings.join("\n"), folderWords(r.path), ngramText(headings.join("\n\n")), r.id);
        setState.run(r.id, r.hash);
      } while (performance.now() < until);
    });
  }
  do await pause();
  while (writingTransaction(db, () => rebuildAnchors(db, sliceMs)));
  return stale.length + gone.length;
}

// English function words: with "any term" matching, "how do I …" would otherwise
// pull in every note with "how" in it (BM25's IDF discounts them but, in a small
// vault, not to zero). A query made only of such words keeps them.
export const STOPWORDS = new Set(
  "a an and are as at be been but by can could did do does for from had has have how i if in into is it its me my of on or our should so than that the their them then there these they this to was we were what when where which who why will with would you your".split(
    " ",
  ),
);

/** A query's FTS5 any-term expression in two parts, either null: its words, and its runs' n-grams (on the n-gram columns only). */
export interface KeywordQuery {
  words: string | null;
  ngrams: string | null;
  /** The n-grams' terms without a column filter (for the anchor text's own n-gram column). */
  pairs: string | null;
}

/**
 * The parts of a prose query (function words dropped). A query without text of those scripts has
 * ngrams null and words exactly the expression it had before the n-gram columns.
 */
export function keywordQuery(query: string, dropStopwords = true): KeywordQuery {
  const all = query.match(/[\p{L}\p{N}_]+/gu) ?? [];
  const words = all.filter((w) => !hasUnspacedRun(w));
  const runs = words.length < all.length ? ngramAnyTerms(query) : null;
  if (runs) for (const w of runs.glued) if (!words.includes(w)) words.push(w);
  const kept = dropStopwords ? words.filter((w) => !STOPWORDS.has(w.toLowerCase())) : words;
  // A query of function words only keeps them, unless it has runs to go by ("什么是 the" is 什么是).
  return { words: toFtsAnyTerms((kept.length || runs?.expr ? kept : words).join(" ")), ngrams: runs?.expr ?? null, pairs: runs?.terms ?? null };
}

/** The FTS5 any-term expression for a prose query (function words dropped). */
export function keywordMatch(query: string, dropStopwords = true): string | null {
  return joined(keywordQuery(query, dropStopwords));
}

function joined({ words, ngrams }: { words: string | null; ngrams: string | null }): string | null {
  return words && ngrams ? `${words} OR ${ngrams}` : (words ?? ngrams);
}

/**
 * The runs of a query as ANY of their pairs of characters on the n-gram columns, and the Latin words
 * glued to them ("使用Python编写": python), which the words' part looks for in every column.
 *
 * A pair each, OR-ed, as Lucene's CJK analyzer does with an OR query, not the phrase of a run's pairs
 * (what the search tool makes of a word): a question in those scripts comes without spaces, so a
 * "word" here is a whole clause (机器学习模型是怎么训练的), and the phrase would need that clause verbatim
 * in a note. On tests/semantic-cjk.test.ts's vault, the phrase per run found none of the questions'
 * notes; the pairs rank each first, BM25 giving a rare pair (学习) more than a common one (的是).
 *
 * At most MAX_QUERY_TERMS distinct pairs, the first ones (a long question keeps its opening, as the words
 * do): each is a posting list to read. A run of one character counts only in a query without any pair
 * (then as a prefix, c*: every pair starting with c, and c at a run's end); beside pairs it is mostly a
 * particle (的, は, を).
 */
export function ngramAnyTerms(query: string): { expr: string | null; terms: string | null; glued: string[] } {
  const { pairs, singles, glued } = runPairs(tokensOf(query), MAX_QUERY_TERMS);
  const list = pairs.length ? pairs.map((p) => `"${p}"`) : singles.map((c) => `"${c}"*`);
  const terms = list.length ? `(${list.join(" OR ")})` : null;
  return { expr: terms && `${NGRAM_COLUMNS} : ${terms}`, terms, glued };
}

function weightList(w: typeof KEYWORD_WEIGHTS): string {
  return [w.title, w.aliases, w.headings, w.path, w.body, w.titleNg, w.headingsNg, w.bodyNg].map((x) => Number(x).toFixed(3)).join(", ");
}

// With anchor text, both lists are read this deep before they are added up, so that a note
// that only its anchors lift can still reach the top (what was measured).
const ANCHOR_POOL = 300;

/**
 * Notes ranked by BM25 over any of the query's words, best first: the note's own fields, plus
 * `anchorWeight` × the BM25 of what other notes say beside their links to it (./anchors.ts).
 */
export function keywordRank(db: Database, query: string, limit: number, dropStopwords = true, weights = KEYWORD_WEIGHTS, anchorWeight = ANCHOR_WEIGHT): KeywordHit[] {
  const q = keywordQuery(query, dropStopwords);
  const match = joined(q);
  if (!match) return [];
  const w = weightList(weights);
  // The anchor text's words and its pairs are two tables (anchors.ts), each ranked by its own bm25, added up.
  // No anchor matches (a vault without links, or none near these words): the plain ranking, no deeper. A table
  // missing (an older layout: the caller did not sync first) ranks nothing.
  const pool = Math.max(limit, ANCHOR_POOL);
  const anchorWords = anchorWeight > 0 && q.words ? (anchorRank(db, q.words, pool) ?? []) : [];
  const anchorPairs = anchorWeight > 0 && q.pairs ? (anchorRank(db, q.pairs, pool, "fts_anchor_ng") ?? []) : [];
  const anchors = anchorPairs.length ? addedHits(anchorWords, anchorPairs, 1, pool) : anchorWords;
  const rank = (expr: string) =>
    db
      .query(`SELECT rowid AS noteId, -bm25(fts_stem, ${w}) AS score FROM fts_stem WHERE fts_stem MATCH ? ORDER BY bm25(fts_stem, ${w}) LIMIT ?`)
      .all(expr, anchors.length ? pool : limit) as KeywordHit[];
  let own: KeywordHit[];
  try {
    own = rank(match);
  } catch {
    // A table of an older layout (no n-gram columns: the caller did not sync first) still ranks the words.
    if (!q.ngrams || !q.words) return [];
    try {
      own = rank(q.words);
    } catch {
      return [];
    }
  }
  if (!anchors.length) return own;
  return addedHits(own, anchors, anchorWeight, limit);
}

/** `own` with `weight` × each of `extra`'s scores added, best first, the best `limit`. */
export function addedHits(own: KeywordHit[], extra: KeywordHit[], weight: number, limit: number): KeywordHit[] {
  const score = new Map(own.map((h) => [h.noteId, h.score]));
  for (const h of extra) score.set(h.noteId, (score.get(h.noteId) ?? 0) + weight * h.score);
  return [...score]
    .map(([noteId, s]) => ({ noteId, score: s }))
    .sort((a, b) => b.score - a.score)
    .slice(0, limit);
}
