// Validation, the heart of `answer`: a citation survives only if it names a
// page the model was shown; a quote survives only if it is a verbatim
// substring (after folding case, whitespace and typographic variants) of the
// text that very page contributed, and it then carries the heading and ordinal
// of the passage it came from. Everything else is dropped and counted.

/** One passage a page contributed to the model's context. */
export interface ContextPassage {
  ord: number;
  heading: string;
  text: string;
}

export interface ContextPage {
  path: string;
  title: string;
  passages: ContextPassage[];
}

export interface QuotedSpan {
  path: string;
  title: string;
  quote: string;
  heading: string;
  ordinal: number;
}

// Typographic variants a model (or a keyboard) swaps freely; folding them is not paraphrase.
const FOLD: Record<string, string> = {
  "\u2018": "'",
  "\u2019": "'",
  "\u201a": "'",
  "\u201b": "'",
  "\u2032": "'",
  "\u201c": '"',
  "\u201d": '"',
  "\u201e": '"',
  "\u2033": '"',
  "\u2010": "-",
  "\u2011": "-",
  "\u2012": "-",
  "\u2013": "-",
  "\u2014": "-",
  "\u2212": "-",
  "\u00a0": " ",
};

export interface Folded {
  /** The original, in Unicode NFC (spans are cut from this). */
  source: string;
  text: string;
  /** For each character of `text`, the index in the original string it came from. */
  from: number[];
}

/**
 * Case-, width- and whitespace-folded text with a map back to the original:
 * NFKC, lower case, typographic quotes and dashes to ASCII, every run of
 * whitespace to one space, trimmed.
 */
export function foldText(raw: string): Folded {
  // Canonical composition first: "é" typed as one code point or as e + accent is the same text.
  const s = raw.normalize("NFC");
  let text = "";
  const from: number[] = [];
  let space = false;
  let i = 0;
  for (const ch of s) {
    const at = i;
    i += ch.length;
    if (/\s/u.test(ch)) {
      space = text.length > 0;
      continue;
    }
    const f = (FOLD[ch] ?? ch).normalize("NFKC").toLowerCase();
    if (/^\s+$/u.test(f)) {
      space = text.length > 0;
      continue;
    }
    if (space) {
      text += " ";
      from.push(at);
      space = false;
    }
    for (const c of f) {
      text += c;
      for (let k = 0; k < c.length; k++) from.push(at);
    }
  }
  return { source: s, text, from };
}

/** Where `quote` occurs in `text` (folded), as the original span of `text`; null if it does not. */
export function findVerbatim(text: string, quote: string, folded: Folded = foldText(text)): string | null {
  const q = foldText(quote).text;
  if (!q) return null;
  const at = folded.text.indexOf(q);
  if (at < 0) return null;
  const src = folded.source;
  const start = folded.from[at]!;
  const lastFrom = folded.from[at + q.length - 1]!;
  const last = String.fromCodePoint(src.codePointAt(lastFrom)!);
  return src.slice(start, lastFrom + last.length);
}

/** How a model may name a page: its path, with or without ".md", in any case, as a [[wikilink]]; trimmed. */
export function pathKey(p: string): string {
  let s = p.trim().replace(/^\[\[|\]\]$/g, "").replace(/\|.*$/, "").replace(/^\.?\/+/, "").trim();
  if (!/\.md$/i.test(s)) s += ".md";
  return s.normalize("NFC").toLowerCase();
}

// A "quote" shorter than this says nothing (a word like "the" is in every page).
export const MIN_QUOTE_CHARS = 8;
export const MAX_QUOTE_CHARS = 1000;
// A hostile or runaway model can list thousands; only this many are looked at (the rest count as dropped).
const MAX_ITEMS = 50;
/** A raw quote longer than this is not folded: see validateAnswer. */
const RAW_QUOTE_CHARS = 16 * MAX_QUOTE_CHARS;

export interface Validated {
  citations: { path: string; title: string }[];
  quotedSpans: QuotedSpan[];
  dropped: { citations: number; quotes: number };
}

export function validateAnswer(pages: ContextPage[], rawCitations: unknown[], rawQuotes: unknown[]): Validated {
  const byKey = new Map(pages.map((p) => [pathKey(p.path), p]));
  const dropped = { citations: 0, quotes: 0 };
  const citations: { path: string; title: string }[] = [];
  const cited = new Set<string>();
  rawCitations.forEach((c, i) => {
    const page = typeof c === "string" && i < MAX_ITEMS ? byKey.get(pathKey(c)) : undefined;
    if (!page) {
      dropped.citations++;
      return;
    }
    if (cited.has(page.path)) return; // a repeat is not a second citation
    cited.add(page.path);
    citations.push({ path: page.path, title: page.title });
  });

  const folded = new Map<ContextPassage, Folded>();
  const quotedSpans: QuotedSpan[] = [];
  const seen = new Set<string>();
  rawQuotes.forEach((q, i) => {
    const o = q && typeof q === "object" ? (q as { path?: unknown; quote?: unknown }) : null;
    const page = i < MAX_ITEMS && typeof o?.path === "string" ? byKey.get(pathKey(o.path)) : undefined;
    const quote = typeof o?.quote === "string" ? o.quote : "";
    // Folded only when it could be a quote: folding is per character, and a model's 58 MB quote (or 30,000
    // quotes past the fiftieth) held the request thread 15 s. A quote 16 times the longest kept is no
    // passage's words copied out (only a run of blanks could fold it that short): dropped unfolded.
    const size = page && quote.length <= RAW_QUOTE_CHARS ? foldText(quote).text.length : Infinity;
    const span = page && size >= MIN_QUOTE_CHARS && size <= MAX_QUOTE_CHARS ? locate(page, quote, folded) : null;
    if (!page || !span) {
      dropped.quotes++;
      return;
    }
    const key = `${page.path}\u0000${span.passage.ord}\u0000${foldText(span.text).text}`;
    if (seen.has(key)) return;
    seen.add(key);
    quotedSpans.push({ path: page.path, title: page.title, quote: span.text, heading: span.passage.heading, ordinal: span.passage.ord });
  });
  return { citations, quotedSpans, dropped };
}

/** The first of the page's passages that holds the quote, and the quote as the passage writes it. */
function locate(page: ContextPage, quote: string, cache: Map<ContextPassage, Folded>): { passage: ContextPassage; text: string } | null {
  for (const passage of page.passages) {
    let f = cache.get(passage);
    if (!f) {
      f = foldText(passage.text);
      cache.set(passage, f);
    }
    const text = findVerbatim(passage.text, quote, f);
    if (text) return { passage, text };
  }
  return null;
}
