// The second stage of hybrid retrieval: a cheap, model-free re-scoring of the
// fused top candidates by evidence a bag of words (BM25) and one vector per
// passage both miss: the query's words standing in a note's title or aliases
// (the note is ABOUT them), in one of its headings (a part of it is), and
// close together in its text (they are said of the same thing). Words are
// compared by their Porter stems, the query's function words left out.
import { stemmer } from "stemmer";
import { STOPWORDS } from "./keyword";
import { eachPair, hasUnspacedRun, runPairs, runPieces } from "../vault/ngram";
import { MAX_QUERY_TERMS } from "../retrieval/fts-query";

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
  /** The smaller of the title's share of the query's words and the query's share of the title's words (the better of title and aliases). */
  named: number;
  /** Share of the query's words in the best single heading (a heading that repeats the title left out). */
  heading: number;
  /** Share of the query's words found within one window of PROXIMITY_WINDOW words of the text (its first PROXIMITY_CHARS). */
  proximity: number;
}

const PROXIMITY_WINDOW = 24;
// Proximity reads the start of each candidate's text, up to this many characters: the top candidates
// notes' whole bodies would cost more than the rest of a query (a note's subject is usually said early).
export const PROXIMITY_CHARS = 10_000;
const stems = new Map<string, string>();

/** A word's Porter stem (the stem FTS5's porter tokenizer gives it), cached. */
export function stem(word: string): string {
  let s = stems.get(word);
  if (s === undefined) {
    s = stemmer(word);
    if (stems.size > 200_000) stems.clear(); // a bound for a long-lived server
    stems.set(word, s);
  }
  return s;
}

// Lower case, and accents off when there are any (NFD is slow on long ASCII bodies for nothing).
const fold = (s: string) => {
  const lower = s.toLowerCase();
  return /[^\x00-\x7f]/.test(lower) ? lower.normalize("NFD").replace(/\p{M}/gu, "") : lower;
};
const WORD = /[\p{L}\p{N}]+/gu;
const LETTER = /[\p{L}\p{N}\p{M}]/u;
const wordChars = new Map<number, boolean>();

/** Is this UTF-16 code unit part of a word (a letter, digit or combining mark)? ASCII by range, the rest looked up once. */
function isWordChar(c: number): boolean {
  if (c < 128) return (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || (c >= 65 && c <= 90);
  let w = wordChars.get(c);
  if (w === undefined) {
    w = LETTER.test(String.fromCharCode(c)) || (c >= 0xd800 && c <= 0xdfff);
    wordChars.set(c, w);
  }
  return w;
}

/** The query's content words as Porter stems, and a fast test of whether a word is one of them. */
export class QueryTerms {
  readonly stems: string[];
  private index: Map<string, number>;
  // A word can only stem to a query stem if it starts with the stem's first letters
  // (Porter stems are prefixes of their words but for a last y/i): most words are ruled out unstemmed.
  private heads: Set<string>;

  /**
   * Whether the query holds text of a script written without spaces (Chinese, Japanese, Thai…). Its runs are
   * terms as pairs of characters, as the keyword side matches them (keyword.ts ngramAnyTerms): a question
   * there is a clause without spaces, which as one word no note holds, so every share was 0 and the keyword
   * side's confidence with it (the English-only built-in model's list then weighed as for a paraphrase).
   */
  private runs = false;

  constructor(query: string) {
    const words = fold(query).match(WORD) ?? [];
    const kept = words.filter((w) => !STOPWORDS.has(w));
    const list = kept.length ? kept : words;
    const plain = list.filter((w) => !hasUnspacedRun(w));
    this.runs = plain.length < list.length;
    // The runs' pairs as the keyword side takes them (runPairs), and the words glued to runs, stemmed as words.
    const { pairs, singles, glued } = runPairs(list, MAX_QUERY_TERMS);
    // A run of one character beside pairs is mostly a particle (的, は): a term only in a query without pairs.
    this.stems = [...new Set([...[...plain, ...glued].map(stem), ...(pairs.length ? pairs : singles)])];
    this.index = new Map(this.stems.map((s, i) => [s, i]));
    this.heads = new Set(this.stems.map((s) => s.slice(0, 3)));
    this.short = this.stems.some((s) => s.length < 3);
  }
  private short: boolean;

  /** The query term a word stands for, or -1. */
  termOf(word: string): number {
    if (word.length < 3) return this.short ? (this.index.get(word) ?? -1) : -1;
    if (!this.heads.has(word.slice(0, 3))) return -1;
    return this.index.get(stem(word)) ?? -1;
  }

  /**
   * Call `hit(position, term)` for each word of a text that is one of the
   * query's terms (position = word number). The text is scanned by character
   * code, and a word is cut out of it only when its
   * first letters could make it a query term: this runs on the top candidates'
   * whole bodies for every query, so it avoids a regular expression and
   * Unicode normalisation of the whole text.
   */
  private scan(text: string, hit: (pos: number, term: number) => void): void {
    const lower = text.toLowerCase();
    const n = lower.length;
    let pos = 0;
    let i = 0;
    while (i < n) {
      if (!isWordChar(lower.charCodeAt(i))) {
        i++;
        continue;
      }
      const start = i;
      let ascii = true;
      for (let c: number; i < n && isWordChar((c = lower.charCodeAt(i))); i++) if (c > 127) ascii = false;
      if (ascii) {
        const len = i - start;
        if (len >= 3 ? this.heads.has(lower.slice(start, start + 3)) : this.short) {
          const t = this.termOf(lower.slice(start, i));
          if (t >= 0) hit(pos, t);
        }
      } else {
        // Accents off ("café" is the query's "cafe"), only for the few words that have any.
        const word = fold(lower.slice(start, i));
        if (this.runs && hasUnspacedRun(word)) {
          pos = this.scanRuns(word, pos, hit);
          continue;
        }
        const t = this.termOf(word);
        if (t >= 0) hit(pos, t);
      }
      pos++;
    }
  }

  /** A word holding runs, for a query that has some: each pair of a run's characters is a position, as in the index. Returns the next position. */
  private scanRuns(word: string, pos: number, hit: (pos: number, term: number) => void): number {
    const at = (t: number | undefined) => {
      if (t !== undefined) hit(pos, t);
      pos++;
    };
    for (const [piece, run] of runPieces(word)) {
      if (!run) {
        const t = this.termOf(piece);
        at(t >= 0 ? t : undefined);
      } else eachPair(piece, (p) => at(this.index.get(p)), (c) => at(this.index.get(c)));
    }
    return pos;
  }

  /** Share of the query's terms that occur in a text. */
  share(text: string): number {
    if (!this.stems.length) return 0;
    const seen = new Set<number>();
    this.scan(text, (_p, t) => seen.add(t));
    return seen.size / this.stems.length;
  }

  /** The largest share of the query's terms that one window of `size` consecutive words of a text holds. */
  bestWindow(text: string, size = PROXIMITY_WINDOW): number {
    const n = this.stems.length;
    if (!n) return 0;
    // Each pair of a run is a position: a question of more pairs than the window (a 25-character Chinese
    // question), said word for word, would never fit in it. Twice its terms: room for its pairs past the cap.
    if (this.runs) size = Math.max(size, 2 * n);
    const hits: { pos: number; term: number }[] = [];
    this.scan(text, (pos, term) => hits.push({ pos, term }));
    const counts = new Int32Array(n);
    let distinct = 0;
    let best = 0;
    let lo = 0;
    for (const h of hits) {
      if (counts[h.term]!++ === 0) distinct++;
      while (hits[lo]!.pos <= h.pos - size) {
        if (--counts[hits[lo]!.term]! === 0) distinct--;
        lo++;
      }
      if (distinct > best) best = distinct;
      if (best === n) break;
    }
    return best / n;
  }
}

/**
 * The share of a name's own content words (title or alias) that the query
 * holds: 1 when the query names the note outright, low when it shares a few
 * words with a long title (a paper's title against a scientific claim).
 */
export function nameCoverage(q: QueryTerms, name: string): number {
  const own = new QueryTerms(name).stems;
  if (!own.length) return 0;
  const mine = new Set(q.stems);
  return own.filter((s) => mine.has(s)).length / own.length;
}

export function features(q: QueryTerms, d: RerankDoc): RerankFeatures {
  const title = Math.max(q.share(d.title), ...d.aliases.map((a) => q.share(a)));
  // A heading that repeats the title (an H1 "# Title") would count the title twice.
  const name = fold(d.title).trim();
  const heading = d.headings.reduce((m, h) => (fold(h).trim() === name ? m : Math.max(m, q.share(h))), 0);
  // A single content word has no proximity to speak of.
  const proximity = q.stems.length > 1 ? q.bestWindow(d.body.slice(0, PROXIMITY_CHARS)) : 0;
  // The second stage's title evidence: the query's words in a name AND that name's words in the query (the
  // smaller of the two shares), for the title and each alias. On SciFact, where long paper titles share a few
  // words with every claim, the one-sided share cost 0.004–0.01 nDCG@10 (docs/retrieval-experiments.md, "third pass").
  const named = Math.max(Math.min(q.share(d.title), nameCoverage(q, d.title)), ...d.aliases.map((a) => Math.min(q.share(a), nameCoverage(q, a))));
  return { title, heading, proximity, named };
}

/**
 * How well the keyword side did: over the best few BM25 candidates, the
 * largest share of the query's words that one of them holds in its title or
 * within one window of its text. 1 when some note says all the query's words
 * together (a keyword question, or a paraphrase that kept the page's words);
 * low when BM25 only matched words scattered about (a paraphrase in other words).
 */
export function keywordConfidence(query: string, docs: RerankDoc[]): number {
  const q = new QueryTerms(query);
  let best = 0;
  for (const d of docs) {
    const f = features(q, d);
    best = Math.max(best, f.title, q.stems.length > 1 ? f.proximity : q.share(d.body.slice(0, PROXIMITY_CHARS)));
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
 * 1 at the top), plus each feature times its weight (the title weight on the
 * two-sided `named` share).
 */
export function rerank(query: string, candidates: { noteId: number; score: number }[], docs: Map<number, RerankDoc>, w: RerankWeights): Map<number, number> {
  const q = new QueryTerms(query);
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
    out.set(c.noteId, base + w.title * f.named + w.heading * f.heading + w.proximity * f.proximity);
  }
  return out;
}
