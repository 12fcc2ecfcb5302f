// marked's setext-heading rule ("Title\n====") costs ~30 µs per character of
// a paragraph under Bun's regex engine (V8 runs it in microseconds): 25 KB of
// one paragraph took 0.7 s, and a 1 MB line (a pasted data: image, minified
// JSON) would hold the thread that renders it for half a minute. A setext
// heading needs an underline line before the paragraph's first blank line, so
// a paragraph without one is answered "no heading here" without the rule.
const BLANK = /^[ \t]*$/;
const UNDERLINE = /^ {0,3}(?:=+|-+)[ \t]*$/;
// The lexer asks at every block; a look that ran to the first blank line each time would itself be quadratic in a
// long stretch without one. So a heading's text is looked for over this many lines at most, and a longer stretch
// is no setext heading (read as the paragraph and the rule it looks like): marked's rule over thousands of lines
// costs seconds, and a heading thousands of lines long is a pasted log above a `---`, not a title.
export const MAX_SETEXT_LINES = 200;

/** Whether a setext heading may start `src`: false when a blank line, the end or MAX_SETEXT_LINES lines come before any underline line. */
export function maySetextHeading(src: string): boolean {
  let i = src.indexOf("\n"); // the first line is the heading's text, never its underline
  for (let n = 0; i !== -1 && n < MAX_SETEXT_LINES; n++) {
    const next = src.indexOf("\n", i + 1);
    const line = src.slice(i + 1, next === -1 ? undefined : next);
    if (UNDERLINE.test(line)) return true;
    if (BLANK.test(line)) return false;
    i = next;
  }
  return false;
}

/**
 * marked's setext-heading rule only where an underline line can end the paragraph, as a marked extension's
 * tokenizer override ("false" runs marked's own rule; undefined is "no heading here").
 */
export const setextGuard = {
  lheading: (src: string): false | undefined => (maySetextHeading(src) ? false : undefined),
};
