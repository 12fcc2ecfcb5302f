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
