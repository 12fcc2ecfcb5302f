// Translate the search tool's small query language into an FTS5 MATCH expression.
// Every term is emitted as a quoted FTS5 string, so nothing the user types can
// reach FTS5's own syntax (column filters, NEAR, ^, parentheses): the only
// operators are the ones the spec allows. Returns null for a malformed query,
// which the caller answers with no rows.

type Tok = { t: "term"; fts: string; neg: boolean } | { t: "op"; op: "OR" | "NOT" };

function quote(s: string): string {
  return `"${s.replace(/"/g, '""')}"`;
}

// A bare word must contain something the tokenizer keeps, or FTS5 sees an empty phrase.
const HAS_TOKEN_CHAR = /[\p{L}\p{N}]/u;
// `title:x` (FTS5's column filter), but not a URL (`https://…`), a time (`10:30`) or a trailing colon (`Summary:`).
const COLUMN_FILTER = /^[\p{L}_][\p{L}\p{N}_]*:(?!\/\/)./u;

function lex(query: string): Tok[] | null {
  const toks: Tok[] = [];
  let i = 0;
  const n = query.length;
  while (i < n) {
    const c = query[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    let neg = false;
    if (c === "-" && i + 1 < n && !/\s/.test(query[i + 1]!)) {
      neg = true;
      i++;
    }
    if (query[i] === '"') {
      const end = query.indexOf('"', i + 1);
      if (end === -1) return null; // unbalanced quote
      const phrase = query.slice(i + 1, end).trim();
      i = end + 1;
      if (!HAS_TOKEN_CHAR.test(phrase)) continue;
      toks.push({ t: "term", fts: quote(phrase), neg });
      continue;
    }
    let j = i;
    while (j < n && !/\s/.test(query[j]!) && query[j] !== '"') j++;
    const word = query.slice(i, j);
    i = j;
    if (!neg && (word === "OR" || word === "NOT")) {
      toks.push({ t: "op", op: word });
      continue;
    }
    // The spec has no (grouping) and no column:filter: such a query is malformed, not a word search.
    if (/[()]/.test(word) || COLUMN_FILTER.test(word)) return null;
    if (!HAS_TOKEN_CHAR.test(word)) continue; // punctuation alone matches nothing; drop it
    toks.push({ t: "term", fts: `${quote(word.replace(/\*+$/, ""))}*`, neg });
  }
  return toks;
}

export function toFtsQuery(query: string): string | null {
  const toks = lex(query);
  if (!toks) return null;
  const pos: string[] = [];
  const negs: string[] = [];
  let pendingOp: "OR" | "NOT" | null = null;
  for (const tok of toks) {
    if (tok.t === "op") {
      if (pendingOp || pos.length === 0) return null; // operator with no left operand
      pendingOp = tok.op;
      continue;
    }
    if (tok.neg) {
      if (pendingOp) return null;
      negs.push(tok.fts);
      continue;
    }
    if (pendingOp) {
      pos.push(pendingOp, tok.fts);
      pendingOp = null;
    } else {
      if (pos.length) pos.push("AND");
      pos.push(tok.fts);
    }
  }
  if (pendingOp || pos.length === 0) return null; // dangling operator, or nothing to match
  let expr = pos.join(" ");
  if (negs.length) expr = `(${expr}) NOT (${negs.join(" OR ")})`;
  return expr;
}

/** Any-term form for ranking candidates (hybrid retrieval's keyword side), never null for a query with words. */
export function toFtsAnyTerms(query: string): string | null {
  const words = query.match(/[\p{L}\p{N}_]+/gu);
  if (!words || words.length === 0) return null;
  return [...new Set(words.map((w) => w.toLowerCase()))].map((w) => quote(w)).join(" OR ");
}
