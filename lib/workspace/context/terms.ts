// A task's search terms for prepare_context's words-only ranking (./rank.ts), and
// how a page's text is checked for them (coverage, selection reasons).
//
// Text in scripts written without spaces (Chinese, Japanese, Thai…) is one token
// per run to the index's tokenizer, so a task written in it would be one term
// matching nothing. Its runs become their pairs of characters instead, matched on
// the n-gram columns (lib/vault/ngram.ts), as the keyword side of retrieve() does
// (lib/semantic/keyword.ts ngramAnyTerms): a task comes without spaces, so a "word"
// is a whole clause, and only its pairs can be found in a note.
import { MAX_QUERY_TERMS } from "../../retrieval/fts-query";
import { foldText } from "../../vault/fold";
import { hasUnspacedRun, ngramText, runPairs } from "../../vault/ngram";
import { fold, ftsQuote, lightStem, STOPWORDS } from "../text";

export interface Term {
  /** As the index gets it: lower-cased, lightly stemmed, accents left to the tokenizer; for a pair, its whole FTS5 expression (column filter included). */
  fts: string;
  /** Folded and stemmed, for matching titles and bodies in JS (as a word prefix); a pair as the index folds it. */
  folded: string;
  /** The word as folded, unstemmed (for people: selectionReason, warnings); a pair itself. */
  word: string;
  /** A pair of characters of a run (or a run's only character, as a prefix), found on the n-gram columns only. */
  ngram?: true;
}

// Not the title and body columns: there a pair is a whole run of two characters, which the n-gram columns
// hold too, and BM25 would count it twice.
const NGRAM_COLUMNS = "{title_ng body_ng}";

function pairTerm(p: string, prefix: boolean): Term {
  return { fts: `${NGRAM_COLUMNS} : ${ftsQuote(p)}${prefix ? "*" : ""}`, folded: p, word: p, ngram: true };
}

/**
 * A text's search terms: words of two or more letters that are not stopwords, once each, at most `max`;
 * then its runs' pairs, at most MAX_QUERY_TERMS more (as the keyword side: each is a posting list to read
 * and a document frequency to count), or, with no pair, their runs of one character.
 */
export function termsOf(text: string, max: number): Term[] {
  const out: Term[] = [];
  const seen = new Set<string>();
  const add = (raw: string) => {
    const folded = fold(raw);
    if (folded.length < 2 || STOPWORDS.has(folded) || seen.has(folded)) return;
    seen.add(folded);
    out.push({ fts: lightStem(raw.toLowerCase()), folded: lightStem(folded), word: folded });
  };
  const words = text.match(/[\p{L}\p{N}]+/gu) ?? [];
  if (!hasUnspacedRun(text)) {
    for (const raw of words) {
      add(raw);
      if (out.length >= max) break;
    }
    return out;
  }
  // Cut at letters, digits and marks, folded after: a Thai word's vowel and tone marks (\p{M}) must not
  // split it before the fold drops them, or the pairs across them (ต้มยำ: ตม, มย) are lost, as the index has them.
  const runs: string[] = [];
  for (const chunk of text.match(/[\p{L}\p{N}\p{M}]+/gu) ?? []) {
    if (hasUnspacedRun(chunk)) runs.push(foldText(chunk));
    else for (const raw of chunk.match(/[\p{L}\p{N}]+/gu) ?? []) if (out.length < max) add(raw);
  }
  const { pairs, singles, glued } = runPairs(runs, MAX_QUERY_TERMS);
  for (const w of glued) if (out.length < max) add(w);
  if (pairs.length) for (const p of pairs) out.push(pairTerm(p, false));
  else for (const c of singles) out.push(pairTerm(c, true));
  return out;
}

/**
 * Lower-cased text, folded only when it holds letters that can carry accents
 * (Latin beyond ASCII, Greek, Cyrillic, …): folding is the slow part, and
 * emoji or CJK need none.
 */
export function matchable(text: string): string {
  const lower = text.toLowerCase();
  return /[\u00c0-\u1fff]/.test(lower) ? fold(lower) : lower;
}

/**
 * A page as the matchers read it: its matchable() text, and, when some term is a pair, its n-gram
 * tokens as the index holds them (ngramText: folded by foldText, soft line breaks joined), each between
 * spaces; a pair is found there and not in the text, whose fold (foldMatch) and line breaks differ.
 */
export interface PageText {
  text: string;
  ng: string;
}

export const hasPairs = (terms: Term[]): boolean => terms.some((t) => t.ngram);

/** ngramText's output (or the stored title_ng/body_ng) as PageText.ng. */
export const ngramTokens = (...ng: (string | null)[]): string => ` ${ng.filter(Boolean).join(" ")} `;

/** Matchers for terms: a word as the start of a word of the text, a pair as one of the page's tokens (a run's one character as a token's start). */
export function matchersOf(terms: Term[]): ((p: PageText) => boolean)[] {
  return terms.map((t) => {
    if (t.ngram) {
      const needle = t.fts.endsWith("*") ? ` ${t.folded}` : ` ${t.folded} `;
      return (p) => p.ng.includes(needle);
    }
    const re = new RegExp(`(?:^|[^\\p{L}\\p{N}])${t.folded.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`, "u");
    return (p) => re.test(p.text);
  });
}

/** The share of the matchers a page satisfies. */
export function coverage(page: PageText, matchers: ((p: PageText) => boolean)[]): number {
  if (!matchers.length) return 0;
  let hits = 0;
  for (const m of matchers) if (m(page)) hits++;
  return hits / matchers.length;
}

/** Which of the terms a text holds; `prepared`: the text is already matchable(). */
export function termsIn(text: string, terms: Term[], prepared = false): Term[] {
  const t = prepared ? text : matchable(text);
  const page = { text: t, ng: hasPairs(terms) ? ngramTokens(ngramText(t)) : "" };
  const ms = matchersOf(terms);
  return terms.filter((_, i) => ms[i]!(page));
}
