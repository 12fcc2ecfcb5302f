// Code spans found in one pass. A note is untrusted input: finding each span's
// end by searching ahead (or by a regex that does) is quadratic on a line of
// unclosed backtick runs: 100k backticks in a heading took 6 s to parse, 1 MB
// of them in a passage 100 s. CommonMark's rule, linear: a run of backticks
// opens a span that ends at the next run of exactly as many (none: the
// backticks are text).

export interface BacktickRuns {
  /** Where each run starts, then Infinity (a sentinel for loops that skip runs). */
  start: number[];
  len: number[];
  /** The index of the next run of the same length, or -1. */
  close: number[];
}

export function backtickRuns(text: string): BacktickRuns {
  const start: number[] = [];
  const len: number[] = [];
  for (let i = text.indexOf("`"); i >= 0; i = text.indexOf("`", i)) {
    let n = 1;
    while (text.charCodeAt(i + n) === 96 /* ` */) n++;
    start.push(i);
    len.push(n);
    i += n;
  }
  const close = new Array<number>(start.length).fill(-1);
  const later = new Map<number, number>();
  for (let k = start.length - 1; k >= 0; k--) {
    close[k] = later.get(len[k]!) ?? -1;
    later.set(len[k]!, k);
  }
  start.push(Infinity);
  return { start, len, close };
}

/** Where `text`'s code spans are, their backticks included: [start, end) pairs in order (what blankCodeSpans blanks). */
export function codeSpanRanges(text: string): number[] {
  const runs = backtickRuns(text);
  const out: number[] = [];
  for (let r = 0; r < runs.len.length; ) {
    const close = runs.close[r]!;
    if (close < 0) {
      r++;
      continue;
    }
    out.push(runs.start[r]!, runs.start[close]! + runs.len[close]!);
    r = close + 1;
  }
  return out;
}

/** `text` with each code span (its backticks too) turned to spaces; line breaks stay, so offsets and lines do not move. */
export function blankCodeSpans(text: string): string {
  const runs = backtickRuns(text);
  const n = runs.len.length;
  let out = "";
  let from = 0;
  let nl = -2; // the first line break at or after the span being blanked (-1: none)
  for (let r = 0; r < n; ) {
    const close = runs.close[r]!;
    if (close < 0) {
      r++;
      continue;
    }
    const a = runs.start[r]!;
    const b = runs.start[close]! + runs.len[close]!;
    // Most spans are on one line: their spaces are cut from one string, not made by a replace per span.
    // (The next line break is searched for again only once the spans are past it: one search from each
    // span would read a long line of spans again for each.)
    if (nl !== -1 && nl < a) nl = text.indexOf("\n", a);
    out += text.slice(from, a) + (nl === -1 || nl >= b ? spaces(b - a) : text.slice(a, b).replace(/[^\n]/g, " "));
    from = b;
    r = close + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

// Runs of spaces cut from one string (blanking is done for code spans and comments in most notes of a
// real vault: a new string of spaces each time was a few percent of the parse).
let SPACES = " ".repeat(256);
export function spaces(n: number): string {
  while (SPACES.length < n) SPACES += SPACES;
  return SPACES.slice(0, n);
}
