// Trimming the end of one Markdown line by hand, where a pattern anchored only at the line's end
// ("[ \t]+#+[ \t]*$", "(.*?)[ \t]*#*[ \t]*$") is tried from every position of a long run of blanks: a
// heading of 64 KB of spaces took 2.5 s to read, 4 KB in the passage splitter 19 s (a review, 2026-12-05).
// Each function here reads the line once, from its end.

const isBlank = (c: number) => c === 32 || c === 9;
const HASH = 35;

/** Where the run of blanks ending at `end` starts. */
function blanksBack(s: string, end: number): number {
  while (end > 0 && isBlank(s.charCodeAt(end - 1))) end--;
  return end;
}

/** `s` without trailing blanks (spaces and tabs only: s.replace(/[ \t]+$/, "")). */
export function trimBlanksEnd(s: string): string {
  const e = blanksBack(s, s.length);
  return e === s.length ? s : s.slice(0, e);
}

/** s.replace(/[ \t]+#+[ \t]*$/, ""): a closing run of '#' after a blank, and the blanks around it. */
export function withoutClosingHashes(s: string): string {
  const e1 = blanksBack(s, s.length);
  let e2 = e1;
  while (e2 > 0 && s.charCodeAt(e2 - 1) === HASH) e2--;
  if (e2 === e1) return s;
  const e3 = blanksBack(s, e2);
  return e3 === e2 ? s : s.slice(0, e3);
}

/** An ATX heading line as /^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$/ reads it: its level and text, or null. */
export function atxHeading(line: string): { level: number; text: string } | null {
  let i = 0;
  while (i < 3 && line.charCodeAt(i) === 32) i++;
  let level = 0;
  while (level < 7 && line.charCodeAt(i + level) === HASH) level++;
  if (level < 1 || level > 6 || !isBlank(line.charCodeAt(i + level))) return null;
  if (/[\n\r\u2028\u2029]/.test(line)) return null; // one line only: '.' crosses no line terminator
  let start = i + level;
  while (start < line.length && isBlank(line.charCodeAt(start))) start++;
  let e = blanksBack(line, line.length);
  while (e > start && line.charCodeAt(e - 1) === HASH) e--;
  e = Math.max(start, blanksBack(line, e));
  return { level, text: line.slice(start, e) };
}
