// The n-gram form of text in scripts written without spaces (Chinese, Japanese, Thai, Lao, Khmer, Myanmar,
// Tibetan), for the full-text index's title_ng and body_ng columns (lib/store/fts-db.ts). FTS5's unicode61
// tokenizer keeps a whole run of such text as one token, so a word inside the run could not be found through
// the index. As Lucene's CJK analyzer does, each maximal run of those letters becomes its overlapping bigrams
// of code points: a word of n ≥ 2 characters is then the phrase of its n−1 bigrams, found wherever it occurs.
//
// The column holds, in that form, the lines of a note that hold such text (NULL for a note without any), so
// that positions, and so phrases, are exact across the other words of those lines too:
//   - a run of n characters: its n−1 bigrams, then its last character alone (the run-final unigram; a run of
//     one character is just that), so that a 1-character query word is found at every place (a prefix query
//     on the bigrams, `c*`, finds each one starting with c, and the unigram finds c at a run's end), and a run
//     that must end at a given place ("使用Python": 使用 then python) can say so;
//   - a word glued to a run (我们使用Python编写): its letters as a plain token, so that `python` finds it;
//   - every other word: MARK + the word, a token no query word for the title and body columns can match
//     (MARK is a private-use character, which unicode61 keeps inside a token), so that a Latin word is not
//     counted twice by BM25 (once in body, once here), while phrases mixing words and runs stay exact.
// The query side (lib/retrieval/fts-query.ts) makes the same tokens of a query's words with queryNgrams.
//
// A line break between two Chinese or Japanese characters is no break in the run: Markdown wraps CJK prose
// with soft line breaks, which are rendered as nothing between two such characters (CSS Text 3, segment break
// transformation), so 机器\n学习 is the word 机器学习 to a reader. Between Thai words (or anything else) a
// line break separates, as a space does.
//
// Text is folded as the index folds it (lib/vault/fold.ts foldText: NFKD, marks dropped, lower case), so
// Thai tone marks and Japanese voicing marks are ignored on both sides, as the substring scan ignored them.
import { foldText } from "./fold";

/** Characters of a title or body turned into n-grams: past them, text of those scripts is not found (a hostile note). */
export const NGRAM_MAX_CHARS = 1024 * 1024;

/** Prefixed to a word that is not part of a run (see above). U+E000, private use: a token character for unicode61. */
export const NGRAM_MARK = "\ue000";

// Letters and digits of those scripts, with their Script_Extensions (the katakana-hiragana prolonged sound mark ー
// and the iteration marks are Common by Script but part of a Japanese word). U+02BC, whose extensions oddly
// include them, is left out (every other one lies at or past U+0E00).
const RUN_CLASS = String.raw`[[[\p{L}\p{N}]&&[\p{scx=Han}\p{scx=Hira}\p{scx=Kana}\p{scx=Thai}\p{scx=Laoo}\p{scx=Khmr}\p{scx=Mymr}\p{scx=Tibt}]]--[\u02bc]]`;
const RUN_CHAR = new RegExp(RUN_CLASS, "v");
const RUN_SPLIT = new RegExp(`(${RUN_CLASS}+)`, "v");
// Chinese and Japanese only, for the soft line break rule.
const WIDE = String.raw`[[[\p{L}\p{N}]&&[\p{scx=Han}\p{scx=Hira}\p{scx=Kana}]]--[\u02bc]]`;
// A line break with no spaces before it (two would make a hard break), the next line's indentation after it.
const SOFT_BREAK = new RegExp(`(?<=${WIDE})\\r?\\n[ \\t]*(?=${WIDE})`, "gv");
// A superset of RUN_CLASS as plain UTF-16 ranges (astral planes by their high surrogates), which the regex engine
// tests at ~0.3 ms a megabyte (Latin-1 text) to ~1.5 ms (other text), where RUN_CLASS costs ~3 ms: the whole cost
// of the n-grams to a vault without such text. tests/search-ngram.test.ts checks that it covers RUN_CLASS.
export const MAY_RUN = /[\u0e01-\u0f8c\u1000-\u1099\u1780-\u17f9\u3005-\u30ff\u3192-\u3195\u31f0-\u3229\u3280-\u3289\u3400-\u4dbf\u4e00-\u9fff\ua9e0-\ua9fe\uaa60-\uaa7f\uf900-\ufad9\uff66-\uff9f\ud805\ud81b\ud82b\ud82c\ud834\ud840-\ud88d]/;
const WORD = /[\p{L}\p{N}]+/gu;

/** Whether `s` holds a letter or digit of a script written without spaces. */
export function hasUnspacedRun(s: string): boolean {
  return MAY_RUN.test(s) && RUN_CHAR.test(s);
}

/** The pieces of a folded word: [text, isRun] in order (a word of no run is one piece). */
export function runPieces(word: string): [string, boolean][] {
  if (!hasUnspacedRun(word)) return [[word, false]];
  const out: [string, boolean][] = [];
  word.split(RUN_SPLIT).forEach((p, i) => {
    if (p) out.push([p, i % 2 === 1]);
  });
  return out;
}

/** A run's bigrams onto `out`, and its last character alone when `final` (always, on the note side). */
function pushRun(out: string[], run: string, final: boolean): void {
  let prev = "";
  for (const ch of run) {
    if (prev) out.push(prev + ch);
    prev = ch;
  }
  if (final) out.push(prev);
}

const MAY_RUN_ALL = new RegExp(MAY_RUN.source, "g");

/**
 * The lines of `t` that hold a run, as chunks of adjacent lines (joined by their line breaks): a note of
 * English with a few Chinese words pays for those lines only, not for a second copy of all its words.
 */
function runLines(t: string): string[] {
  const chunks: string[] = [];
  let chunk = "";
  let chunkEnd = -2; // where the chunk's last line ends (its line break, or the text's end)
  MAY_RUN_ALL.lastIndex = 0;
  for (let m = MAY_RUN_ALL.exec(t); m; m = MAY_RUN_ALL.exec(t)) {
    const start = t.lastIndexOf("\n", m.index) + 1;
    let end = t.indexOf("\n", m.index);
    if (end === -1) end = t.length;
    MAY_RUN_ALL.lastIndex = end + 1;
    const line = t.slice(start, end);
    if (!RUN_CHAR.test(line)) continue;
    if (chunk && start === chunkEnd + 1) chunk += "\n" + line;
    else {
      if (chunk) chunks.push(chunk);
      chunk = line;
    }
    chunkEnd = end;
  }
  if (chunk) chunks.push(chunk);
  return chunks;
}

/**
 * The n-gram column's text for a title or body, or null when it holds no text of those scripts (the column
 * is then NULL: a vault without such text pays one pass of MAY_RUN over its text). Only the lines holding
 * such text are written, with NGRAM_MARK alone (a token no query makes) where lines were left out between
 * them, so that a phrase never joins two runs that were apart. Only the first NGRAM_MAX_CHARS characters
 * are read: a 64 MB note of random Chinese would otherwise make some 20 million distinct tokens.
 */
export function ngramText(text: string): string | null {
  let t = text;
  if (t.length > NGRAM_MAX_CHARS) {
    let end = NGRAM_MAX_CHARS;
    const c = t.charCodeAt(end - 1);
    if (c >= 0xd800 && c <= 0xdbff) end--; // not between a surrogate pair's halves
    t = t.slice(0, end);
  }
  const chunks = runLines(t);
  if (!chunks.length) return null;
  const out: string[] = [];
  chunks.forEach((chunk, i) => {
    if (i) out.push(NGRAM_MARK);
    for (const word of foldText(chunk).replace(SOFT_BREAK, "").match(WORD) ?? []) {
      const ps = runPieces(word);
      if (ps.length === 1 && !ps[0]![1]) out.push(NGRAM_MARK + word);
      else for (const [p, run] of ps) run ? pushRun(out, p, true) : out.push(p);
    }
  });
  return out.join(" ");
}

/** A query term in n-gram form: the tokens of an FTS5 phrase on the n-gram columns. */
export interface NgramTerm {
  tokens: string[];
  /** The last token must be a prefix: the term ends with a run of one character (c* finds every c). */
  lastRunOfOne: boolean;
  /** The last token is a word's letters (a glued one, or a marked word) that a bare word may take as a prefix. */
  lastWord: string | null;
}

/**
 * A query term's folded words (fts-query.ts tokensOf) in n-gram form, or null when none holds a run (the term
 * then goes to the title and body columns as before). The same tokens as ngramText makes, except that a run's
 * final unigram is added only when something follows it in the term (the note's run must end there); a run
 * of one character with nothing after it becomes a prefix (lastRunOfOne).
 */
export function queryNgrams(words: string[]): NgramTerm | null {
  if (!words.some(hasUnspacedRun)) return null;
  const all: [string, boolean, boolean][] = []; // piece, isRun, isAlone (a word without a run)
  for (const w of words) {
    const ps = runPieces(w);
    if (ps.length === 1 && !ps[0]![1]) all.push([NGRAM_MARK + w, false, true]);
    else for (const [p, run] of ps) all.push([p, run, false]);
  }
  const tokens: string[] = [];
  let lastRunOfOne = false;
  let lastWord: string | null = null;
  all.forEach(([p, run, alone], i) => {
    const last = i === all.length - 1;
    if (!run) {
      tokens.push(p);
      if (last) lastWord = alone ? p.slice(NGRAM_MARK.length) : p;
      return;
    }
    if (last && p.length <= 2 && [...p].length === 1) {
      tokens.push(p);
      lastRunOfOne = true;
    } else pushRun(tokens, p, !last);
  });
  return { tokens, lastRunOfOne, lastWord };
}

/** Each pair of adjacent characters (code points) of a run, in order, or `single` for a run of one character. */
export function eachPair(run: string, pair: (p: string) => void, single: (c: string) => void): void {
  const chars = Array.from(run);
  if (chars.length === 1) single(chars[0]!);
  for (let k = 0; k + 1 < chars.length; k++) pair(chars[k]! + chars[k + 1]!);
}

/**
 * A query's runs for an any-pair match: their distinct pairs of characters in order, at most `max` (each is
 * a posting list to read, and a long question keeps its opening), the runs of one character (at most `max`),
 * and the words glued to runs ("使用Python编写": python). `words` are folded (foldText). Shared by the
 * keyword side of retrieval (lib/semantic/keyword.ts) and prepare_context's lexical ranking.
 */
export function runPairs(words: string[], max: number): { pairs: string[]; singles: string[]; glued: string[] } {
  const pairs = new Set<string>();
  const singles = new Set<string>();
  const glued: string[] = [];
  for (const word of words) {
    if (pairs.size >= max) break;
    if (!hasUnspacedRun(word)) continue;
    for (const [piece, run] of runPieces(word)) {
      if (!run) {
        if (!glued.includes(piece)) glued.push(piece);
        continue;
      }
      eachPair(
        piece,
        (p) => pairs.size < max && pairs.add(p),
        (c) => singles.size < max && singles.add(c),
      );
    }
  }
  return { pairs: [...pairs], singles: [...singles], glued };
}
