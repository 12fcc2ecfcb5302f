// The second stage of hybrid retrieval: a cheap, model-free re-scoring of the
// fused top candidates by evidence a bag of words (BM25) and one vector per
// passage both miss: the query's words standing in a note's title or aliases
// (the note is ABOUT them), in one of its headings (a part of it is), and
// close together in its text (they are said of the same thing). Words are
// compared by their Porter stems, the query's function words left out.
import { stemmer } from "stemmer";
import { STOPWORDS } from "./keyword";

export interface RerankDoc {
  noteId: number;
  title: string;
  aliases: string[];
  headings: string[];
  body: string;
}

export interface RerankFeatures {
  /** Share of the query's words in the title or an alias (the better of the two). */
  title: number;
  /** Share of the query's words in the best single heading. */
  heading: number;
  /** Share of the query's words found within one window of PROXIMITY_WINDOW words of the text. */
  proximity: number;
}

const PROXIMITY_WINDOW = 24;
const stems = new Map<string, string>();

function stem(word: string): string {
  let s = stems.get(word);
  if (s === undefined) {
    s = stemmer(word);
    if (stems.size > 200_000) stems.clear(); // a bound for a long-lived server
    stems.set(word, s);
  }
  return s;
}

const fold = (s: string) => s.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();

/** The stems of a text's words, in order. */
export function stemsOf(text: string): string[] {
  return (fold(text).match(/[\p{L}\p{N}]+/gu) ?? []).map(stem);
}

/** The query's content words as stems (function words dropped unless nothing else is left). */
export function queryStems(query: string): string[] {
  const words = fold(query).match(/[\p{L}\p{N}]+/gu) ?? [];
  const kept = words.filter((w) => !STOPWORDS.has(w));
  return [...new Set((kept.length ? kept : words).map(stem))];
}

function share(q: string[], have: Set<string>): number {
  if (!q.length) return 0;
  let n = 0;
  for (const s of q) if (have.has(s)) n++;
  return n / q.length;
}

/** The largest share of query stems that one window of `size` consecutive words holds. */
function bestWindow(q: string[], words: string[], size: number): number {
  if (!q.length || !words.length) return 0;
  const want = new Map(q.map((s, i) => [s, i]));
  const counts = new Int32Array(q.length);
  let distinct = 0;
  let best = 0;
  for (let i = 0; i < words.length; i++) {
    const a = want.get(words[i]!);
    if (a !== undefined && counts[a]!++ === 0) distinct++;
    if (i >= size) {
      const b = want.get(words[i - size]!);
      if (b !== undefined && --counts[b]! === 0) distinct--;
    }
    if (distinct > best) best = distinct;
    if (best === q.length) break;
  }
  return best / q.length;
}

export function features(q: string[], d: RerankDoc): RerankFeatures {
  const title = Math.max(share(q, new Set(stemsOf(d.title))), ...d.aliases.map((a) => share(q, new Set(stemsOf(a)))));
  const heading = d.headings.reduce((m, h) => Math.max(m, share(q, new Set(stemsOf(h)))), 0);
  // A single content word has no proximity to speak of.
  const proximity = q.length > 1 ? bestWindow(q, stemsOf(d.body), PROXIMITY_WINDOW) : 0;
  return { title, heading, proximity };
}

/**
 * How well the keyword side did: over the best few BM25 candidates, the
 * largest share of the query's words that one of them holds in its title or
 * within one window of its text. 1 when some note says all the query's words
 * together (a keyword question, or a paraphrase that kept the page's words);
 * low when BM25 only matched words scattered about (a paraphrase in other words).
 */
export function keywordConfidence(query: string, docs: RerankDoc[]): number {
  const q = queryStems(query);
  let best = 0;
  for (const d of docs) {
    const f = features(q, d);
    best = Math.max(best, f.title, q.length > 1 ? f.proximity : share(q, new Set(stemsOf(d.body))));
  }
  return best;
}

export interface RerankWeights {
  title: number;
  heading: number;
  proximity: number;
}

/**
 * New scores for the candidates: the fused score scaled to the best one (so
 * 1 at the top), plus each feature times its weight.
 */
export function rerank(query: string, candidates: { noteId: number; score: number }[], docs: Map<number, RerankDoc>, w: RerankWeights): Map<number, number> {
  const q = queryStems(query);
  const top = candidates.reduce((m, c) => Math.max(m, c.score), 0);
  const out = new Map<number, number>();
  for (const c of candidates) {
    const base = top > 0 ? c.score / top : 0;
    const d = docs.get(c.noteId);
    if (!d) {
      out.set(c.noteId, base);
      continue;
    }
    const f = features(q, d);
    out.set(c.noteId, base + w.title * f.title + w.heading * f.heading + w.proximity * f.proximity);
  }
  return out;
}
