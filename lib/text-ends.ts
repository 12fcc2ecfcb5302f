// A trailing run cut by one backwards scan. A regex such as /\/+$/ is tried from every position of a run that
// does not reach the end and costs the square of its length: a tag of 50,000 slashes before an "x" held the
// event loop 2 s, a line of 100,000 for 11 s (the read-side review of 2026-12-07).

/** `s` without the run of `chars` (each one UTF-16 unit) at its end. */
export function withoutTrailing(s: string, chars: string): string {
  let end = s.length;
  while (end > 0 && chars.includes(s[end - 1]!)) end--;
  return end === s.length ? s : s.slice(0, end);
}

/** The whitespace (as `\s` means it) at the end of `s`: String#trimEnd strips exactly that set. */
export function trailingSpace(s: string): string {
  return s.slice(s.trimEnd().length);
}

/** The whitespace at the start of `s`. */
export function leadingSpace(s: string): string {
  return s.slice(0, s.length - s.trimStart().length);
}

/** `s` without the run of `ch` (one UTF-16 unit) at either end. */
export function trimRuns(s: string, ch: string): string {
  let a = 0;
  while (a < s.length && s[a] === ch) a++;
  return withoutTrailing(s.slice(a), ch);
}
