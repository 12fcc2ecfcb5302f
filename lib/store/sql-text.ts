// Text lengths as SQLite counts them. SQLite's substr() and length() count characters (code points);
// JavaScript's .length counts UTF-16 units, two for anything outside the Basic Multilingual Plane. A
// prefix test `substr(folder, 1, ?) = ?` built from .length matched nothing under "📁 Projects/" or a
// tag "𝒜lpha/…" (the Unicode audit of 2026-12-05).

/** How many characters SQLite counts in this string. */
export function sqlLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** A test that `column` starts with `prefix`, and its parameters. */
export function startsWith(column: string, prefix: string): { sql: string; params: [number, string] } {
  return { sql: `substr(${column}, 1, ?) = ?`, params: [sqlLength(prefix), prefix] };
}

/**
 * a < b (negative), equal (0) or a > b (positive) in SQLite's order for TEXT without a collation: UTF-8 bytes,
 * which is code point order. JavaScript's < compares UTF-16 units, where an emoji (a surrogate pair, D800–DFFF)
 * sorts before "Ｆ" (FF26) though SQLite puts it after: a cursor compared with < skipped rows.
 */
export function compareAsSql(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (D800–DFFF) stand for code points past FFFF: moved above E000–FFFF, which move down to make room.
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}
