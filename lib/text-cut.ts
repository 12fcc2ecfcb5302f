// Text cut to a length in UTF-16 units never ends in the first half of a surrogate pair: a lone half is not
// Unicode, and a client with a strict JSON parser refuses the whole answer (a proposal's diff cut through
// an emoji; the Unicode audit of 2026-12-05).

// A combining mark (an accent, a Devanagari vowel sign, Arabic and Hebrew vowel points) belongs to the
// character before it: a cut just before one leaves the base bare and the mark without a base (`नमस्ते` cut
// to `नमस`). Variation selectors and the zero-width joiner are marks too (an emoji's ️ or a family's joins).
const MARK = /[\p{M}\u200d]/u;

/**
 * The greatest offset ≤ `n` at which `s` may be cut: never between a surrogate pair's halves, nor before a
 * combining mark (the mark's base goes with it). 0 ≤ result ≤ n.
 */
export function wholeCut(s: string, n: number): number {
  if (n >= s.length) return s.length;
  if (n <= 0) return 0;
  let i = n;
  const c = s.charCodeAt(i - 1);
  if (c >= 0xd800 && c <= 0xdbff) i--;
  // Cheap before the regex: marks are all past U+02FF, and ASCII text never pays for the test.
  while (i > 0 && s.charCodeAt(i) > 0x2ff && MARK.test(String.fromCodePoint(s.codePointAt(i)!))) {
    const p = s.charCodeAt(i - 1);
    i -= p >= 0xdc00 && p <= 0xdfff && i >= 2 ? 2 : 1;
  }
  return i;
}

/** The first `n` UTF-16 units of `s`, fewer when the cut would split a surrogate pair or leave a combining mark behind. */
export function sliceWhole(s: string, n: number): string {
  if (s.length <= n) return s;
  return s.slice(0, wholeCut(s, n));
}

/** `s` cut to at most `max` bytes of UTF-8, never inside a character (a file name built from another). */
export function fitBytes(s: string, max: number): string {
  if (Buffer.byteLength(s) <= max) return s;
  let out = "";
  let bytes = 0;
  for (const ch of s) {
    const b = Buffer.byteLength(ch);
    if (bytes + b > max) break;
    out += ch;
    bytes += b;
  }
  return out;
}
