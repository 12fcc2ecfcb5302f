// Keyword-to-keyword pseudo-relevance feedback (RM3-style): the words the
// keyword side's own best hits share, beyond the query's, name the subject in
// the vault's words, and a second BM25 list asks for them too. Off for every
// model (RankingParams.termFeedback; docs/retrieval-experiments.md, "thirteenth pass").
import type { Database } from "bun:sqlite";
import { addedHits, keywordRank, STOPWORDS, type KeywordHit } from "./keyword";
import { QueryTerms, stem } from "./rerank";
import { inList } from "./store";

export interface TermFeedback {
  /** How many of the best keyword hits are read. */
  docs: number;
  /** How many of their words are added. */
  terms: number;
  /** The second list's share: score = BM25 + weight × its BM25 rescaled to the first list's best. */
  weight: number;
  /** The second list asks for the query's words and the new ones (true), or the new ones alone. */
  withQuery: boolean;
  /**
   * RM3's interpolation instead of a second list: each new word's BM25 on its own, weighed by its
   * share of the feedback model, summed, times `weight` × the query's word count, added to the query's BM25
   * (`weight` = λ / (1 − λ) in RM3's terms).
   */
  weighted?: boolean;
}

// A feedback note is read up to this many characters (its subject is usually said early; the cost stays bounded).
const FEEDBACK_CHARS = 6000;
// Words weighed by their document frequency, at most this many (one vocabulary lookup each).
const SHORTLIST = 60;
const WORD = /[\p{L}\p{N}]+/gu;

const vocabReady = new WeakSet<Database>();

/** How many notes hold each stem in fts_stem (through a temporary fts5vocab table), and the number of notes. */
function frequencies(db: Database, stems: string[]): { df: Map<string, number>; n: number } {
  if (!vocabReady.has(db)) {
    db.exec("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_stem_vocab USING fts5vocab(main, fts_stem, 'row')");
    vocabReady.add(db);
  }
  const rows = db.query(`SELECT term, doc FROM temp.fts_stem_vocab WHERE ${inList("term")}`).all(JSON.stringify(stems)) as { term: string; doc: number }[];
  const n = (db.query("SELECT count(*) AS n FROM fts_stem_notes").get() as { n: number }).n;
  return { df: new Map(rows.map((r) => [r.term, r.doc])), n };
}

/**
 * The `count` words that best describe the best `docs` keyword hits beyond the query: each note's
 * share of a word (tf / length), weighed by the note's BM25 over the best one's (RM3's feedback
 * model), times the word's idf in the vault. Function words, the query's own words, numbers and
 * words of one note only are left out. Returned as one surface form per stem (FTS5 stems it back).
 */
export function feedbackTerms(db: Database, query: string, hits: KeywordHit[], docs: number, count: number): string[] {
  return weightedTerms(db, query, hits, docs, count).map((t) => t.word);
}

/** feedbackTerms with each word's share of the feedback model (tf / length weighed by the note's BM25, without idf), summing to 1. */
export function weightedTerms(db: Database, query: string, hits: KeywordHit[], docs: number, count: number): { word: string; share: number }[] {
  const top = hits.slice(0, docs);
  if (!top.length || count <= 0) return [];
  const rows = db
    .query(`SELECT n.id AS id, n.title AS title, substr(f.body, 1, ${FEEDBACK_CHARS}) AS body FROM notes n JOIN fts f ON f.rowid = n.id WHERE ${inList("n.id")}`)
    .all(JSON.stringify(top.map((h) => h.noteId))) as { id: number; title: string; body: string }[];
  const text = new Map(rows.map((r) => [r.id, `${r.title}\n${r.body}`]));
  const own = new Set(new QueryTerms(query).stems);
  const best = top[0]!.score || 1;
  const weight = new Map<string, number>();
  const surface = new Map<string, string>();
  for (const h of top) {
    const words = text.get(h.noteId)?.toLowerCase().match(WORD);
    if (!words?.length) continue;
    const tf = new Map<string, number>();
    for (const w of words) {
      if (w.length < 3 || w.length > 30 || STOPWORDS.has(w) || /^\d+$/.test(w)) continue;
      const s = stem(w);
      if (own.has(s)) continue;
      tf.set(s, (tf.get(s) ?? 0) + 1);
      if (!surface.has(s)) surface.set(s, w);
    }
    const w = Math.max(0, h.score) / best / words.length;
    for (const [s, c] of tf) weight.set(s, (weight.get(s) ?? 0) + c * w);
  }
  const shortlist = [...weight].sort((a, b) => b[1] - a[1]).slice(0, SHORTLIST);
  if (!shortlist.length) return [];
  let counted: ReturnType<typeof frequencies>;
  try {
    counted = frequencies(db, shortlist.map(([s]) => s));
  } catch {
    return []; // the vocabulary cannot be read: no feedback, the keyword list as it was
  }
  const { df, n } = counted;
  const chosen = shortlist
    .filter(([s]) => (df.get(s) ?? 0) >= 2)
    .map(([s, w]): [string, number, number] => {
      const d = df.get(s)!;
      return [s, w, w * Math.log(1 + (n - d + 0.5) / (d + 0.5))];
    })
    .sort((a, b) => b[2] - a[2])
    .slice(0, count);
  const sum = chosen.reduce((a, [, w]) => a + w, 0) || 1;
  return chosen.map(([s, w]) => ({ word: surface.get(s)!, share: w / sum }));
}

/** Each word's BM25 on its own (the note's fields, as keywordRank weighs them, no anchor text), weighed by its share, summed per note. */
function weightedScores(db: Database, terms: { word: string; share: number }[], limit: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const t of terms) for (const h of keywordRank(db, t.word, limit, false, undefined, 0)) out.set(h.noteId, (out.get(h.noteId) ?? 0) + t.share * h.score);
  return out;
}

/** The keyword hits with a second BM25 list, of the feedback terms (and the query), added at `fb.weight`. */
export function withTermFeedback(db: Database, query: string, hits: KeywordHit[], fb: TermFeedback, limit: number): KeywordHit[] {
  if (fb.weighted) {
    const terms = weightedTerms(db, query, hits, fb.docs, fb.terms);
    if (!terms.length || fb.weight <= 0) return hits;
    const extra = weightedScores(db, terms, limit);
    const scale = fb.weight * Math.max(1, new QueryTerms(query).stems.length);
    const score = new Map(hits.map((h) => [h.noteId, h.score]));
    for (const [id, s] of extra) score.set(id, (score.get(id) ?? 0) + scale * s);
    return [...score]
      .map(([noteId, s]) => ({ noteId, score: s }))
      .sort((a, b) => b.score - a.score)
      .slice(0, limit);
  }
  const terms = feedbackTerms(db, query, hits, fb.docs, fb.terms);
  if (!terms.length || fb.weight <= 0) return hits;
  const second = keywordRank(db, fb.withQuery ? `${query} ${terms.join(" ")}` : terms.join(" "), limit);
  if (!second.length) return hits;
  // The second list rescaled so that its best scores as the first list's best, then weighed.
  return addedHits(hits, second, (fb.weight * (hits[0]?.score ?? 1)) / (second[0]!.score || 1), limit);
}
