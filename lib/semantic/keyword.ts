// Hybrid retrieval's keyword side: BM25 over ANY of the query's words (the
// search tool ANDs them, which is right for a person typing keywords and wrong
// for a question in prose), on a Porter-stemmed copy of the full-text index.
// Stemming lifts BM25 on BEIR SciFact from nDCG@10 0.673 to 0.690 (measured;
// see bench/retrieval.ts). The copy (fts_stem, contentless) is brought in step
// with the notes lazily, before each use, from the bodies already in `fts`.
import type { Database } from "bun:sqlite";
import { toFtsAnyTerms } from "../retrieval/fts-query";

// Title matches count a few times body matches: a note's title names its subject.
const WEIGHTS = "3.0, 1.0";
const SYNC_CHUNK = 500;

export interface KeywordHit {
  noteId: number;
  score: number; // -bm25: higher is better
}

/** Bring fts_stem in step with notes; returns how many notes were (re)indexed or dropped. */
export function syncStemmed(db: Database): number {
  const stale = db
    .query("SELECT n.id AS id, n.hash AS hash FROM notes n LEFT JOIN fts_stem_notes s ON s.note_id = n.id WHERE s.hash IS NULL OR s.hash <> n.hash")
    .all() as { id: number; hash: string }[];
  const gone = (db.query("SELECT note_id AS id FROM fts_stem_notes WHERE note_id NOT IN (SELECT id FROM notes)").all() as { id: number }[]).map((r) => r.id);
  if (!stale.length && !gone.length) return 0;
  const del = db.query("DELETE FROM fts_stem WHERE rowid = ?");
  const ins = db.query("INSERT INTO fts_stem(rowid, title, body) SELECT rowid, title, body FROM fts WHERE rowid = ?");
  const setState = db.query("INSERT OR REPLACE INTO fts_stem_notes(note_id, hash) VALUES (?, ?)");
  const delState = db.query("DELETE FROM fts_stem_notes WHERE note_id = ?");
  for (let i = 0; i < Math.max(stale.length, 1); i += SYNC_CHUNK) {
    db.transaction(() => {
      if (i === 0) {
        for (const id of gone) {
          del.run(id);
          delState.run(id);
        }
      }
      for (const r of stale.slice(i, i + SYNC_CHUNK)) {
        del.run(r.id);
        ins.run(r.id);
        setState.run(r.id, r.hash);
      }
    })();
  }
  return stale.length + gone.length;
}

// English function words: with "any term" matching, "how do I …" would otherwise
// pull in every note with "how" in it (BM25's IDF discounts them but, in a small
// vault, not to zero). A query made only of such words keeps them.
const STOPWORDS = new Set(
  "a an and are as at be been but by can could did do does for from had has have how i if in into is it its me my of on or our should so than that the their them then there these they this to was we were what when where which who why will with would you your".split(
    " ",
  ),
);

/** The FTS5 any-term expression for a prose query (function words dropped). */
export function keywordMatch(query: string, dropStopwords = true): string | null {
  const words = query.match(/[\p{L}\p{N}_]+/gu) ?? [];
  const kept = dropStopwords ? words.filter((w) => !STOPWORDS.has(w.toLowerCase())) : words;
  return toFtsAnyTerms((kept.length ? kept : words).join(" "));
}

/** Notes ranked by BM25 over any of the query's words, best first. */
export function keywordRank(db: Database, query: string, limit: number, dropStopwords = true): KeywordHit[] {
  const match = keywordMatch(query, dropStopwords);
  if (!match) return [];
  try {
    return db
      .query(`SELECT rowid AS noteId, -bm25(fts_stem, ${WEIGHTS}) AS score FROM fts_stem WHERE fts_stem MATCH ? ORDER BY bm25(fts_stem, ${WEIGHTS}) LIMIT ?`)
      .all(match, limit) as KeywordHit[];
  } catch {
    return [];
  }
}
