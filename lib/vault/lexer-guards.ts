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

// marked's paragraph rule is one regex: the first line, then each further line unless a long negative lookahead
// (a rule, heading, quote, fence, list item, HTML block, table, blank line) matches at its start. Bun's regex engine
// takes ~8 µs a line for that lookahead, so 250 KB of short lines held the request thread 0.7–0.9 s. The same
// lookahead, taken from marked's own rule, is tried here only at lines whose first characters could start one of
// those (a superset: the answer is the rule's own) and skipped for the rest, the plain prose lines.
const RULE_HEAD = "^([^\\n]+(?:\\n(?!";
const RULE_TAIL = ")[^\\n]+)*)";
const interrupts = new WeakMap<RegExp, RegExp | null>();

function interruptOf(rule: RegExp): RegExp | null {
  let r = interrupts.get(rule);
  if (r === undefined) {
    const s = rule.source;
    const ok = s.startsWith(RULE_HEAD) && s.endsWith(RULE_TAIL);
    // Another shape (a marked upgrade): null, and marked's own rule runs.
    r = ok ? new RegExp(`(?:${s.slice(RULE_HEAD.length, -RULE_TAIL.length)})`, `${rule.flags.replace(/[gy]/g, "")}y`) : null;
    interrupts.set(rule, r);
  }
  return r;
}

const MAY_START = new Set([..."-_*#>`~+1< \t"].map((c) => c.charCodeAt(0)));
const TABLE_DELIMITER = new Set([..."|:-"].map((c) => c.charCodeAt(0)));

/** Whether the lookahead could match at the line from `q` to `e`: its first character, or the next line's (a table's delimiter row). */
function mayInterrupt(src: string, q: number, e: number): boolean {
  if (MAY_START.has(src.charCodeAt(q))) return true;
  let n = e + 1;
  while (src.charCodeAt(n) === 32) n++;
  return TABLE_DELIMITER.has(src.charCodeAt(n));
}

/** The length of the paragraph marked's rule would match at the start of `src` (-1: none), given the rule's lookahead. */
export function paragraphLength(src: string, interrupt: RegExp): number {
  if (!src || src.charCodeAt(0) === 10) return -1;
  let end = src.indexOf("\n");
  if (end < 0) return src.length;
  for (;;) {
    const q = end + 1;
    if (q >= src.length) break;
    let e = src.indexOf("\n", q);
    if (e < 0) e = src.length;
    if (e === q) break;
    if (mayInterrupt(src, q, e)) {
      interrupt.lastIndex = q;
      if (interrupt.test(src)) break;
    }
    end = e;
  }
  return end;
}

interface TokenizerThis {
  rules: { block: { paragraph: RegExp } };
  lexer: { inline(src: string): unknown[] };
}

/**
 * Overrides of marked's block tokenizer, as an extension's `tokenizer` ("false" runs marked's own rule):
 * the setext-heading rule only where an underline line can end the paragraph (undefined: "no heading
 * here"), and the paragraph rule without its per-line regex on prose lines.
 */
export const lexerGuards = {
  lheading: (src: string): false | undefined => (maySetextHeading(src) ? false : undefined),
  paragraph(this: TokenizerThis, src: string) {
    const interrupt = interruptOf(this.rules.block.paragraph);
    if (!interrupt) return false;
    const n = paragraphLength(src, interrupt);
    if (n < 0) return undefined;
    const raw = src.slice(0, n);
    return { type: "paragraph" as const, raw, text: raw, tokens: this.lexer.inline(raw) };
  },
};
