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
// A blockquote's rule is a run of '>' lines, each holding a paragraph of the same kind (its own lookahead) or a blank.
const QUOTE_HEAD = "^( {0,3}> ?(?:(?![ \\t]*(?:\\n|$))(([^\\n]+(?:\\n(?!";
const QUOTE_TAIL = ")[^\\n]+)*))|[^\\n]*)(?:\\n|$))+";
const lookaheads = new WeakMap<RegExp, RegExp | null>();

/** A rule's paragraph lookahead as a regex of its own, sticky; null when the rule has another shape (a marked upgrade: its own rule runs). */
function lookaheadOf(rule: RegExp, head: string, tail: string): RegExp | null {
  let r = lookaheads.get(rule);
  if (r === undefined) {
    const s = rule.source;
    const ok = s.startsWith(head) && s.endsWith(tail);
    r = ok ? new RegExp(`(?:${s.slice(head.length, -tail.length)})`, `${rule.flags.replace(/[gy]/g, "")}y`) : null;
    lookaheads.set(rule, r);
  }
  return r;
}

// The first characters of a line at which a lookahead can match (rules, headings, quotes, fences, list items, HTML,
// blank lines, each after up to three spaces), for either rule.
const MAY_START = new Set([..."-_*#>`~+<0123456789 \t"].map((c) => c.charCodeAt(0)));
const TABLE_DELIMITER = new Set([..."|:-"].map((c) => c.charCodeAt(0)));

/** Whether the lookahead could match at the line from `q` to `e`: its first character, or the next line's (a table's delimiter row). */
function mayInterrupt(src: string, q: number, e: number): boolean {
  if (MAY_START.has(src.charCodeAt(q))) return true;
  let n = e + 1;
  while (src.charCodeAt(n) === 32) n++;
  return TABLE_DELIMITER.has(src.charCodeAt(n));
}

/** Where the paragraph that marked's rule (given its lookahead) matches from `from` ends (-1: none). */
function paragraphEnd(src: string, interrupt: RegExp, from: number): number {
  if (from >= src.length || src.charCodeAt(from) === 10) return -1;
  let end = src.indexOf("\n", from);
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

/** The length of the paragraph marked's rule would match at the start of `src` (-1: none), given the rule's lookahead. */
export function paragraphLength(src: string, interrupt: RegExp): number {
  return paragraphEnd(src, interrupt, 0);
}

/** The length of the blockquote marked's rule would match at the start of `src` (-1: none), given its paragraph lookahead. */
export function quoteLength(src: string, interrupt: RegExp): number {
  let p = 0;
  let matched = false;
  while (p < src.length) {
    let i = p;
    while (i < p + 3 && src.charCodeAt(i) === 32) i++;
    if (src.charCodeAt(i) !== 62 /* > */) break;
    i++;
    if (src.charCodeAt(i) === 32) i++;
    let e = src.indexOf("\n", i);
    if (e < 0) e = src.length;
    let k = i;
    while (k < e && (src.charCodeAt(k) === 32 || src.charCodeAt(k) === 9)) k++;
    // A blank rest of the line is read as it is; anything else is a paragraph, running on over lazy lines.
    const end = k === e ? e : paragraphEnd(src, interrupt, i);
    matched = true;
    p = end < src.length ? end + 1 : src.length;
  }
  return matched ? p : -1;
}

/**
 * An override of marked's block tokenizer, as an extension's `tokenizer` ("false" runs marked's own rule):
 * the setext-heading rule only where an underline line can end the paragraph (undefined: "no heading here").
 * (Not the paragraph rule: marked mends a false table start by merging paragraphs only while its own
 * paragraph method is in place; the scans below go in through the rules instead.)
 */
export const lexerGuards = {
  lheading: (src: string): false | undefined => (maySetextHeading(src) ? false : undefined),
};

interface BlockRules {
  paragraph: RegExp | RuleScan;
  blockquote: RegExp | RuleScan;
}
interface RuleScan {
  exec(src: string): string[] | null;
}
const fastBlocks = new WeakMap<object, BlockRules>();

/** The block rules with the paragraph and blockquote patterns replaced by the scans (the same matches); built once per rule set. */
function fastBlockRules(block: BlockRules): BlockRules {
  let fast = fastBlocks.get(block);
  if (!fast) {
    fast = { ...block };
    const para = block.paragraph instanceof RegExp ? lookaheadOf(block.paragraph, RULE_HEAD, RULE_TAIL) : null;
    if (para) {
      fast.paragraph = {
        exec(src: string) {
          const n = paragraphLength(src, para);
          if (n < 0) return null;
          const raw = src.slice(0, n);
          return [raw, raw]; // the match and its group, as marked reads them
        },
      };
    }
    // The same lookahead in marked's blockquote rule cost 250 KB of '>' lines 0.25 s; marked's own blockquote
    // code still lexes the quote's content (lazy lines, nested lists).
    const quote = block.blockquote instanceof RegExp ? lookaheadOf(block.blockquote, QUOTE_HEAD, QUOTE_TAIL) : null;
    if (quote) {
      fast.blockquote = {
        exec(src: string) {
          const n = quoteLength(src, quote);
          return n < 0 ? null : [src.slice(0, n)];
        },
      };
    }
    fastBlocks.set(block, fast);
  }
  return fast;
}

/** `lexer` (a marked Lexer, just made) with its tokenizer reading the fast block rules. */
export function withFastRules<L extends object>(lexer: L): L {
  // The tokenizer is private in marked's types; its rules are set by the Lexer's constructor, per lexer.
  const tokenizer = (lexer as unknown as { tokenizer: { rules: { block: BlockRules } } }).tokenizer;
  tokenizer.rules = { ...tokenizer.rules, block: fastBlockRules(tokenizer.rules.block) };
  return lexer;
}
