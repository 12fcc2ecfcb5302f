// Translate the search tool's small query language into an FTS5 MATCH expression.
// Every term is emitted as a quoted FTS5 string, so nothing the user types can
// reach FTS5's own syntax (column filters, NEAR, ^, parentheses): the only
// operators are the ones the spec allows. Returns null for a malformed query,
// which the caller answers with no rows.
//
// The query also has a cost budget, because one FTS5 statement cannot be
// interrupted: at most MAX_QUERY_TERMS tokens, at most MAX_QUERY_CHARS
// characters (query-too-complex beyond either), and no prefix expansion for
// a word shorter than MIN_PREFIX_CHARS ("a*" expands to every token starting
// with a, the bulk of a vault's index): such a word matches exactly.
import { ToolError } from "../errors";
import { foldText } from "../vault/fold";
import { outOfIndexReach } from "./substring";
import { hasUnspacedRun, queryNgrams } from "../vault/ngram";
import { sqlLength } from "../store/sql-text";
import { withoutTrailing } from "../text-ends";

export { foldText };

export const MAX_QUERY_TERMS = 32;
export const MAX_QUERY_CHARS = 1000;
export const MIN_PREFIX_CHARS = 3;

/** One positive term as the tokenizer sees it: folded tokens (a phrase has several) and whether the last is a prefix. */
export interface QueryTerm {
  tokens: string[];
  prefix: boolean;
  /** Found anywhere in a word, not only at its start: text the index cannot split (lib/retrieval/substring.ts). */
  inside?: boolean;
}

export interface ParsedQuery {
  /** The FTS5 MATCH expression. */
  match: string;
  /** Terms that must or may match (not the excluded ones), in query order: for snippets and exact-title ranking. */
  positives: QueryTerm[];
  /** Excluded terms (-word, NOT word). */
  negatives: QueryTerm[];
  /** True when the query uses OR. */
  hasOr: boolean;
  /** The query holds text the index's words miss (outOfIndexReach: marks, Greek accents, ı): words are also looked for as substrings. */
  scan: boolean;
}

// `cost`: the tokens FTS5 reads a posting list for, counted against MAX_QUERY_TERMS.
type Tok = { t: "term"; fts: string; neg: boolean; term: QueryTerm; cost: number } | { t: "op"; op: "OR" | "NOT" };

function quote(s: string): string {
  return `"${s.replace(/"/g, '""')}"`;
}

// A bare word must contain something the tokenizer keeps, or FTS5 sees an empty phrase.
const HAS_TOKEN_CHAR = /[\p{L}\p{N}]/u;
// `title:x` or `body:x`, FTS5's column filter on the index's two columns (FTS5 reads column names in any
// case), which the spec leaves out of the language. Any other `word:…` is text a note holds (`std::vector`,
// `TODO:fix`, `doi:10.1000/xyz`, `mailto:…`, a URL, a time): a term like any other, quoted as every term is.
const COLUMN_FILTER = /^(?:title|body):(?!\/\/)./i;
// The full-width forms of ASCII's digits and letters (０–９, Ａ–Ｚ, ａ–ｚ), each 0xFEE0 above its ASCII one.
const FULL_WIDTH_ALNUM = /[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]/;
const FULL_WIDTH_ALNUM_G = new RegExp(FULL_WIDTH_ALNUM.source, "g");
/** `s` with its full-width letters and digits as ASCII (ＰＣ → PC); full-width punctuation is left as it is. */
export const toAscii = (s: string) => (FULL_WIDTH_ALNUM.test(s) ? s.replace(FULL_WIDTH_ALNUM_G, (c) => String.fromCharCode(c.charCodeAt(0) - 0xfee0)) : s);
// Scripts written without spaces between words: the tokenizer keeps a whole run as one token, so a short prefix is how a word is found.
const UNSPACED_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

/** The tokens FTS5 would make of `s`, folded. */
export function tokensOf(s: string): string[] {
  return foldText(s).match(/[\p{L}\p{N}]+/gu) ?? [];
}

function lex(query: string): Tok[] | null {
  const toks: Tok[] = [];
  let i = 0;
  const n = query.length;
  while (i < n) {
    const c = query[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    let neg = false;
    if (c === "-" && i + 1 < n && !/\s/.test(query[i + 1]!)) {
      neg = true;
      i++;
    }
    if (query[i] === '"') {
      const end = query.indexOf('"', i + 1);
      if (end === -1) return null; // unbalanced quote
      const phrase = query.slice(i + 1, end).trim();
      i = end + 1;
      if (!HAS_TOKEN_CHAR.test(phrase)) continue;
      const tokens = tokensOf(phrase);
      const ascii = toAscii(phrase);
      const fts = ascii === phrase ? quote(phrase) : `(${quote(phrase)} OR ${quote(ascii)})`;
      toks.push(ngramTerm(tokens, neg, false) ?? { t: "term", fts, neg, term: { tokens, prefix: false }, cost: Math.max(1, tokens.length) * (ascii === phrase ? 1 : 2) });
      continue;
    }
    let j = i;
    while (j < n && !/\s/.test(query[j]!) && query[j] !== '"') j++;
    const word = query.slice(i, j);
    i = j;
    // Full-width letters and digits (ＰＣ, ＯＲ: a Japanese input mode) read as their ASCII forms, for the
    // operators and column filters too; full-width punctuation stays text (（ＰＣ） is ordinary Japanese).
    const asciiWord = toAscii(word);
    if (!neg && (asciiWord === "OR" || asciiWord === "NOT")) {
      toks.push({ t: "op", op: asciiWord });
      continue;
    }
    // The spec has no (grouping) and no column:filter: such a query is malformed, not a word search.
    if (/[()]/.test(word) || COLUMN_FILTER.test(asciiWord)) return null;
    if (!HAS_TOKEN_CHAR.test(word)) continue; // punctuation alone matches nothing; drop it
    const bare = withoutTrailing(word, "*＊");
    const tokens = tokensOf(bare);
    const ng = ngramTerm(tokens, neg, true);
    if (ng) {
      toks.push(ng);
      continue;
    }
    const last = tokens[tokens.length - 1] ?? "";
    const prefix = [...last].length >= MIN_PREFIX_CHARS || UNSPACED_SCRIPT.test(last);
    const form = (w: string) => (prefix ? `${quote(w)}*` : quote(w));
    // Full-width Latin and digits (ＰＣ, typed in a Japanese input mode) are their own tokens to the tokenizer,
    // which folds no width: the ASCII form is asked too, which finds them written in ASCII, and glued to
    // Japanese or Chinese text (新しいＰＣを買った), whose n-grams hold them folded. A word more of the budget.
    const ascii = toAscii(bare);
    const fts = ascii === bare ? form(bare) : `(${form(bare)} OR ${form(ascii)})`;
    toks.push({ t: "term", fts, neg, term: { tokens, prefix }, cost: Math.max(1, tokens.length) * (ascii === bare ? 1 : 2) });
  }
  return toks;
}

/**
 * A term holding text of a script written without spaces (Chinese, Japanese, Thai…): the phrase of its n-grams
 * on the n-gram columns (ngramPhrase). null for any other term.
 */
function ngramTerm(tokens: string[], neg: boolean, bare: boolean): Tok | null {
  const ng = ngramPhrase(tokens, bare);
  return ng && { t: "term", fts: `{title_ng body_ng} : ${ng.phrases}`, neg, term: ng.term, cost: ng.cost };
}

/** A term's n-gram form, before a column filter: search_workspace matches titles alone with it too. */
export interface NgramPhrase {
  /** A quoted FTS5 phrase, or the parenthesised OR of two (the term typed apart and glued). */
  phrases: string;
  /** The term as a snippet looks for it: anywhere in a word. */
  term: QueryTerm;
  /** Its tokens, each a word of MAX_QUERY_TERMS. */
  cost: number;
}

/**
 * The phrase of a term's n-grams (lib/vault/ngram.ts), for the n-gram columns, which find it anywhere in a
 * run, with exact substring semantics (adjacent bigrams overlap); null when the term (its folded tokens,
 * tokensOf) holds no text of those scripts. A run of one character at the end is a prefix (it starts a bigram
 * or is a run's last character); so is a bare word's last Latin word of MIN_PREFIX_CHARS or more.
 * Each n-gram costs a word of the budget: a run of n characters costs n−1 (its pairs of characters), so a
 * long run is refused as query-too-complex rather than sent as a phrase of hundreds of tokens.
 */
export function ngramPhrase(tokens: string[], bare: boolean): NgramPhrase | null {
  const spaced = queryNgrams(tokens);
  if (!spaced) return null;
  // Words typed apart where one side is such text ("机器 学习", "使用 python") are also looked for glued
  // together, as those scripts are written ("机器学习", "我们使用Python编写"): either form matches.
  const glued = tokens.length > 1 ? queryNgrams(gluedAtRuns(tokens)) : null;
  const variants = glued && glued.tokens.join(" ") !== spaced.tokens.join(" ") ? [spaced, glued] : [spaced];
  let anyPrefix = false;
  const phrases = variants.map((ng) => {
    const prefix = ng.lastRunOfOne || (bare && ng.lastWord !== null && [...ng.lastWord].length >= MIN_PREFIX_CHARS);
    anyPrefix ||= prefix;
    return `${quote(ng.tokens.join(" "))}${prefix ? "*" : ""}`;
  });
  return {
    phrases: phrases.length > 1 ? `(${phrases.join(" OR ")})` : phrases[0]!,
    // The snippet looks for the words anywhere in a word (glued to a run, or inside one).
    term: { tokens, prefix: anyPrefix, inside: true },
    cost: variants.reduce((n, v) => n + v.tokens.length, 0),
  };
}

/** `words` with each pair that meets at a letter of a script written without spaces joined into one word. */
function gluedAtRuns(words: string[]): string[] {
  const out = [words[0]!];
  for (const w of words.slice(1)) {
    const prev = out[out.length - 1]!;
    if (hasUnspacedRun(Array.from(prev).at(-1)!) || hasUnspacedRun(String.fromCodePoint(w.codePointAt(0)!))) out[out.length - 1] = prev + w;
    else out.push(w);
  }
  return out;
}

function tooComplex(why: string): never {
  throw new ToolError("query-too-complex", `Query too complex: ${why}. Use fewer, longer words (at most ${MAX_QUERY_TERMS} words, ${MAX_QUERY_CHARS} characters).`, {
    maxTerms: MAX_QUERY_TERMS,
    maxChars: MAX_QUERY_CHARS,
  });
}

/**
 * Parse a search query: null when it is malformed (the spec answers no rows);
 * ToolError query-too-complex when it is over the budget.
 */
export function parseSearchQuery(query: string): ParsedQuery | null {
  // Characters as a person counts them (code points): 600 emoji are 1,200 UTF-16 units.
  if (query.length > MAX_QUERY_CHARS) {
    const chars = sqlLength(query);
    if (chars > MAX_QUERY_CHARS) tooComplex(`${chars} characters`);
  }
  const toks = lex(query);
  if (!toks) return null;
  let terms = 0;
  let ngrams = false;
  for (const t of toks) {
    if (t.t !== "term") continue;
    terms += t.cost;
    ngrams ||= !!t.term.inside;
  }
  if (terms > MAX_QUERY_TERMS) tooComplex(`${terms} words${ngrams ? " (text written without spaces counts one per pair of characters)" : ""}`);
  const pos: string[] = [];
  const negs: string[] = [];
  const positives: QueryTerm[] = [];
  const negatives: QueryTerm[] = [];
  let hasOr = false;
  let pendingOp: "OR" | "NOT" | null = null;
  for (const tok of toks) {
    if (tok.t === "op") {
      if (pendingOp || pos.length === 0) return null; // operator with no left operand
      pendingOp = tok.op;
      continue;
    }
    if (tok.neg) {
      if (pendingOp) return null;
      negs.push(tok.fts);
      negatives.push(tok.term);
      continue;
    }
    if (pendingOp) {
      pos.push(pendingOp, tok.fts);
      if (pendingOp === "OR") {
        hasOr = true;
        positives.push(tok.term);
      } else negatives.push(tok.term);
      pendingOp = null;
    } else {
      if (pos.length) pos.push("AND");
      pos.push(tok.fts);
      positives.push(tok.term);
    }
  }
  if (pendingOp || pos.length === 0) return null; // dangling operator, or nothing to match
  let expr = pos.join(" ");
  if (negs.length) expr = `(${expr}) NOT (${negs.join(" OR ")})`;
  const scan = outOfIndexReach(query);
  // The scan matches every word of such a query as a substring: so does its snippet.
  if (scan) for (const t of positives) t.inside = true;
  return { match: expr, positives, negatives, hasOr, scan };
}

export function toFtsQuery(query: string): string | null {
  return parseSearchQuery(query)?.match ?? null;
}

/**
 * Any-term form for ranking candidates (hybrid retrieval's keyword side), never null for a query with words.
 * Bounded like search: the first MAX_QUERY_TERMS distinct words (a long prose question keeps its opening).
 * A word typed in full-width Latin (ＰＣ) is also asked in ASCII, after the words, as search's terms are.
 */
export function toFtsAnyTerms(query: string): string | null {
  const words = query.match(/[\p{L}\p{N}_]+/gu);
  if (!words || words.length === 0) return null;
  const distinct = new Set(words.map((w) => w.toLowerCase()));
  for (const w of [...distinct]) distinct.add(toAscii(w));
  return [...distinct].slice(0, MAX_QUERY_TERMS).map((w) => quote(w)).join(" OR ");
}
