// Text cut to a length in UTF-16 units never ends in the first half of a surrogate pair: a lone half is not
// Unicode, and a client with a strict JSON parser refuses the whole answer (a proposal's diff cut through
// an emoji; the Unicode audit of 2026-12-05).

/** The first `n` UTF-16 units of `s`, one fewer when the cut would split a surrogate pair. */
export function sliceWhole(s: string, n: number): string {
  if (s.length <= n) return s;
  const c = s.charCodeAt(n - 1);
  return s.slice(0, c >= 0xd800 && c <= 0xdbff ? n - 1 : n);
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
