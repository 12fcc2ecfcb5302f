// Substring search that stays linear. JSC's String indexOf/includes compares the needle from its start at
// each position, so a needle that nearly matches everywhere (20,000 "a"s around one "b", in 250 KB of "a")
// costs the product of the lengths: 1.4 s on the request thread for one apply_edits find, about a minute for
// a base's `contains` over its longest values. Past a short needle, Knuth–Morris–Pratt does it in one pass.

// Up to this length the native search is used: its worst case is this many comparisons a character.
const NATIVE_MAX = 64;

function failureTable(needle: string): Int32Array {
  const fail = new Int32Array(needle.length);
  for (let i = 1, k = 0; i < needle.length; i++) {
    while (k > 0 && needle.charCodeAt(i) !== needle.charCodeAt(k)) k = fail[k - 1]!;
    if (needle.charCodeAt(i) === needle.charCodeAt(k)) k++;
    fail[i] = k;
  }
  return fail;
}

/** Starts of matches of `needle` in `hay` from `from` on, overlapping ones included, at most `max` of them. */
export function findAll(hay: string, needle: string, max: number, from = 0): number[] {
  const out: number[] = [];
  if (max <= 0) return out;
  if (needle.length <= NATIVE_MAX) {
    for (let i = hay.indexOf(needle, from); i !== -1 && out.length < max; i = hay.indexOf(needle, i + 1)) out.push(i);
    return out;
  }
  const fail = failureTable(needle);
  const m = needle.length;
  for (let i = from, k = 0; i < hay.length; i++) {
    const c = hay.charCodeAt(i);
    while (k > 0 && c !== needle.charCodeAt(k)) k = fail[k - 1]!;
    if (c === needle.charCodeAt(k)) k++;
    if (k === m) {
      out.push(i - m + 1);
      if (out.length >= max) break;
      k = fail[k - 1]!;
    }
  }
  return out;
}

/** hay.indexOf(needle, from), linear in both lengths. */
export function findText(hay: string, needle: string, from = 0): number {
  if (needle.length <= NATIVE_MAX) return hay.indexOf(needle, from);
  return findAll(hay, needle, 1, from)[0] ?? -1;
}

/** hay.includes(needle), linear in both lengths. */
export function hasText(hay: string, needle: string): boolean {
  return findText(hay, needle) !== -1;
}
