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
    while (text[i + n] === "`") n++;
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

/** `text` with each code span (its backticks too) turned to spaces; line breaks stay, so offsets and lines do not move. */
export function blankCodeSpans(text: string): string {
  const runs = backtickRuns(text);
  const n = runs.len.length;
  let out = "";
  let from = 0;
  for (let r = 0; r < n; ) {
    const close = runs.close[r]!;
    if (close < 0) {
      r++;
      continue;
    }
    const a = runs.start[r]!;
    const b = runs.start[close]! + runs.len[close]!;
    out += text.slice(from, a) + text.slice(a, b).replace(/[^\n]/g, " ");
    from = b;
    r = close + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}
