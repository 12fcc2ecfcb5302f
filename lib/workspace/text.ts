// Text helpers shared by the workspace tools: folding for case- and
// accent-insensitive matching (the way the FTS5 index folds, plus Turkish
// dotted/dotless i, which unicode61 leaves alone), word splitting, scripts
// written without spaces, and the token estimate context packs budget with.

// The fold lives with the index's (lib/vault/fold.ts): search matches substrings with it too.
export { foldMatch as fold } from "../vault/fold";
import { foldMatch as fold } from "../vault/fold";

/** The words of a text, folded, in order (letters and digits; "_" splits like FTS5's tokenizer). */
export function foldedWords(s: string): string[] {
  return fold(s).match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Letters and digits in a text (how long a query "really" is). */
export function letterCount(s: string): number {
  return (s.match(/[\p{L}\p{N}]/gu) ?? []).length;
}

/** A quoted FTS5 string (nothing inside can reach FTS5's own syntax). */
export function ftsQuote(s: string): string {
  return `"${s.replace(/"/g, '""')}"`;
}

/**
 * Tokens an agent pays for, estimated: about 4 characters a token for text
 * in alphabetic scripts, and one token per character for CJK, Thai and other
 * scripts that tokenizers split finely (counting them at 4 a token would let a
 * Chinese pack run 3–4× over its budget). Thai to Mongolian, CJK, Yi, Hangul
 * and full-width forms count as 4 characters each.
 */
const DENSE_SCRIPT = /[\u0e00-\u1cff\u2e80-\u9fff\ua000-\ua6ff\uac00-\ud7ff\uf900-\ufaff\uff00-\uffef]/g;

export function estimateTokens(s: string): number {
  const dense = s.match(DENSE_SCRIPT)?.length ?? 0;
  return Math.ceil((s.length + 3 * dense) / 4);
}

// Words that say nothing about which page answers a task. Kept short: BM25's
// IDF already discounts common words; this list only stops them from counting
// as "words missing from the vault" and from crowding a 24-term query.
export const STOPWORDS = new Set(
  `a an and are as at be been but by can could do does did for from has have how i if in into is it its me my
  of on or our should so than that the their them then there these this those to was we were what when where which
  who why will with would you your about after before over under up down out not no yes all any some more most
  also just only very want need like get use using used make made way new one two via per vs etc`.split(/\s+/).filter(Boolean),
);

/** Function words only, for search_workspace (a query is short and every other word in it counts). */
export const FUNCTION_WORDS = new Set("a an and are as at be by for from how i in is it of on or that the this to was what when where which who why with".split(" "));

/**
 * A light stem for prefix matching: "properties" → "propert", "linking" →
 * "link", "notes" → "note". Used with FTS5 prefix queries, so the stem only
 * needs to be a prefix of the word's other forms, not a real word.
 */
export function lightStem(w: string): string {
  if (w.length > 5 && w.endsWith("ies")) return w.slice(0, -3);
  if (w.length > 5 && w.endsWith("ing")) return w.slice(0, -3);
  if (w.length > 4 && w.endsWith("ed")) return w.slice(0, -2);
  if (w.length > 4 && w.endsWith("es") && /(ss|sh|ch|x)es$/.test(w)) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith("s") && !w.endsWith("ss")) return w.slice(0, -1);
  return w;
}
