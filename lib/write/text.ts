// Pure text transforms behind the surgical write tools. They work on the LF
// text from decodeText() and touch only the lines they must, so everything
// else in the note (frontmatter included) keeps its bytes.
import { ToolError } from "../errors";
import { findAll } from "../text-find";
import { wholeCut } from "../text-cut";
import { blocks } from "../vault/blocks";
import { parseHeadings, type ParsedHeading } from "../vault/parse";

/** Lines with their terminators (\n, \r\n or a lone \r), as the parser counts them. */
export function splitLines(text: string): string[] {
  const out: string[] = [];
  const re = /[^\r\n]*(?:\r\n|\r|\n|$)/g;
  for (let m = re.exec(text); m && m[0] !== ""; m = re.exec(text)) out.push(m[0]);
  return out;
}

export const hasEol = (line: string) => /[\r\n]$/.test(line);
const withEol = (line: string) => (hasEol(line) ? line : line + "\n");
const isBlank = (line: string) => line.trim() === "";

export interface Edit {
  find: string;
  replace: string;
}

/**
 * Matches (overlapping) of `find` are counted up to MAX_COUNTED, in one linear pass (lib/text-find.ts):
 * uncapped, each match of a long `find` in a long run of one character cost the find's length again
 * (1 MB of "a" and a find of 20,000 "a"s took 13 s on the request thread, only to say "ambiguous"), and
 * the native search itself costs the product of the lengths on a find that nearly matches everywhere.
 */
const MAX_COUNTED = 100;

/**
 * Text an agent sends to be written (or matched) holds whole characters only: half of a surrogate pair became
 * U+FFFD on disk without a word (write_note, patch_section, file_page, append_log), and in a find it matched
 * half an emoji. Every write tool refuses it the same way: invalid-input, `data.field` names the argument.
 */
export function refuseHalfPairs(field: string, s: string | undefined, data: Record<string, unknown> = {}): void {
  if (s === undefined || s.isWellFormed()) return;
  throw new ToolError("invalid-input", `${field} holds half of a surrogate pair; send whole characters`, { field, ...data });
}

/**
 * Apply find/replace pairs in order; each `find` must occur exactly once in
 * the text as the previous edits left it. Any miss refuses the whole call.
 */
export function applyEditsToText(text: string, edits: Edit[]): string {
  let out = text;
  edits.forEach((e, i) => {
    refuseHalfPairs(`edits[${i}].find`, e.find, { edit: i });
    refuseHalfPairs(`edits[${i}].replace`, e.replace, { edit: i });
    const found = findAll(out, e.find, MAX_COUNTED).filter((at) => wholeCharacters(out, at, at + e.find.length));
    const count = found.length;
    if (count !== 1) {
      const kind = count === 0 ? "edit-no-match" : "edit-ambiguous";
      const times = count >= MAX_COUNTED ? `at least ${MAX_COUNTED}` : String(count);
      const why = count === 0 ? "does not occur" : `occurs ${times} times; add surrounding text so it matches once`;
      throw new ToolError(kind, `edits[${i}].find ${why} in the current text; nothing was written`, { edit: i, matches: count });
    }
    const first = found[0]!;
    out = out.slice(0, first) + e.replace + out.slice(first + e.find.length);
  });
  return out;
}

/**
 * A match that neither starts on nor stops before a combining mark: "Cafe" in a decomposed "Café" matched the
 * letters before its accent, and the replacement took the accent over.
 */
function wholeCharacters(text: string, start: number, end: number): boolean {
  // text-cut.ts's rule for a place text may be cut at: not inside a pair, not before a mark.
  return wholeCut(text, start) === start && wholeCut(text, end) === end;
}

export type SectionMode = "replace" | "append" | "prepend";

const MAX_HEADINGS_IN_ERROR = 30;

/** Find a heading by slug id, else by title (case-insensitive); refuse when none or several match. */
export function findHeading(headings: ParsedHeading[], wanted: string, path: string): ParsedHeading {
  // "## Design" names the heading Design; "#project status" is first a title that starts with # (a tag in it).
  const w = wanted.replace(/^\s*#+[ \t]+/, "").trim();
  const bare = wanted.replace(/^\s*#+\s*/, "").trim();
  const titled = (t: string) => headings.filter((h) => h.title.toLowerCase() === t.toLowerCase());
  const byId = headings.filter((h) => h.id === w || h.id === bare);
  if (byId.length === 1) return byId[0]!;
  let byTitle = titled(w);
  if (!byTitle.length && bare !== w) byTitle = titled(bare);
  if (byTitle.length === 1) return byTitle[0]!;
  if (byTitle.length > 1) {
    throw new ToolError("heading-ambiguous", `${byTitle.length} headings in ${path} are titled ${JSON.stringify(w)}; pass one's id instead`, {
      candidates: byTitle.map((h) => ({ level: h.level, title: h.title, id: h.id, line: h.line })),
    });
  }
  // The first headings are enough to spot a typo; a long note's whole outline cost kilobytes (read_outline has it all).
  throw new ToolError("heading-not-found", `No heading ${JSON.stringify(w)} in ${path}; read_outline lists its headings`, {
    headings: headings.slice(0, MAX_HEADINGS_IN_ERROR).map((h) => ({ level: h.level, title: h.title, id: h.id })),
    ...(headings.length > MAX_HEADINGS_IN_ERROR ? { headingsTotal: headings.length } : {}),
  });
}

// Lines that continue a block of their kind without a blank line between them: list items, table rows,
// quotes. Kinds do not mix: a list item put against a person's table took the table into the item.
function blockKind(line: string): string | null {
  const m = /^[ \t]*(?:([-*+]|\d{1,9}[.)])(?:[ \t]|$)|(\|)|(>))/.exec(line);
  return m ? (m[1] ? "list" : m[2] ? "table" : "quote") : null;
}

function needsBlankBetween(above: string, below: string): boolean {
  const kind = blockKind(above);
  return kind === null || kind !== blockKind(below);
}

function contentLines(content: string): string[] {
  const trimmed = content.replace(/^(?:[ \t]*\n)+/, "").replace(/\s+$/, "");
  return trimmed === "" ? [] : splitLines(trimmed + "\n");
}

/**
 * Replace, append to or prepend to the body under a heading: the lines after
 * it up to the next heading of the same or a higher level (deeper headings
 * belong to the section). append/prepend keep lists, tables and quotes
 * continuous and put a blank line between paragraphs.
 */
export function patchSectionText(path: string, text: string, heading: string, mode: SectionMode, content: string): string {
  const headings = parseHeadings(text);
  const h = findHeading(headings, heading, path);
  const lines = splitLines(text);
  const hIdx = h.line - 1;
  let bodyStart = hIdx + 1;
  // A setext heading (Title + ==== / ----) owns its underline, and its title may run over several lines
  // above it: the first underline before a blank line ends the heading (checking only the next line
  // took the person's second title line and the underline as the section's body, and replaced them).
  if (!/^ {0,3}#/.test(lines[hIdx] ?? "")) {
    for (let j = hIdx + 1; j < lines.length && !isBlank(lines[j]!); j++) {
      if (/^ {0,3}(?:=+|-+)[ \t]*[\r\n]*$/.test(lines[j]!)) {
        bodyStart = j + 1;
        break;
      }
    }
  }
  const next = headings.find((o) => o.line > h.line && o.level <= h.level);
  const end = next ? next.line - 1 : lines.length;
  const body = lines.slice(bodyStart, end);
  const add = contentLines(content);
  const nonBlank = body.map((l, i) => (isBlank(l) ? -1 : i)).filter((i) => i !== -1);
  let newBody: string[];

  if (mode === "replace" || nonBlank.length === 0) {
    newBody = add.length ? ["\n", ...add] : [];
    if (next) newBody.push("\n");
  } else if (mode === "append") {
    const last = nonBlank[nonBlank.length - 1]!;
    const gap = add.length && needsBlankBetween(body[last]!, add[0]!) ? ["\n"] : [];
    newBody = [...body.slice(0, last), withEol(body[last]!), ...gap, ...add, ...body.slice(last + 1)];
  } else {
    const firstIdx = nonBlank[0]!;
    const gap = add.length && needsBlankBetween(add[add.length - 1]!, body[firstIdx]!) ? ["\n"] : [];
    const lead = firstIdx === 0 ? ["\n"] : body.slice(0, firstIdx);
    newBody = [...lead, ...add, ...gap, ...body.slice(firstIdx)];
  }
  const head = lines.slice(0, bodyStart);
  if (head.length && newBody.length) head[head.length - 1] = withEol(head[head.length - 1]!);
  return [...head, ...newBody, ...lines.slice(end)].join("");
}

const OPEN_DIRECTIVE = /^([ \t]*(?:>[ \t]*)+)\[!ai\]/i;
const DONE_DIRECTIVE = /^[ \t]*(?:>[ \t]*)+\[!ai-done\]/i;

/**
 * Flip the `> [!ai]` callout on `line` (1-based) to `> [!ai-done]`, and add
 * the agent's answer to the callout's body when one is given.
 */
export function completeDirectiveText(path: string, text: string, line: number, answer?: string): string {
  const lines = splitLines(text);
  const idx = line - 1;
  const cur = lines[idx];
  if (cur === undefined || !OPEN_DIRECTIVE.test(cur)) {
    if (cur !== undefined && DONE_DIRECTIVE.test(cur)) {
      throw new ToolError("directive-done", `The directive on line ${line} of ${path} is already done`, { path, line });
    }
    throw new ToolError("not-a-directive", `Line ${line} of ${path} holds no open > [!ai] directive; call pending_directives for current line numbers`, {
      path,
      line,
    });
  }
  const prefix = OPEN_DIRECTIVE.exec(cur)![1]!;
  lines[idx] = cur.replace(/\[!ai\]/i, "[!ai-done]");
  if (answer && answer.trim()) {
    const depth = (prefix.match(/>/g) ?? []).length;
    const quote = "> ".repeat(depth);
    const inBlock = new RegExp(`^[ \\t]*(?:>[ \\t]*){${depth}}`);
    let last = idx;
    while (last + 1 < lines.length && inBlock.test(lines[last + 1]!)) last++;
    const answerLines = answer.replace(/\s+$/, "").split(/\r?\n/).map((l) => (l.trim() ? `${quote}${l}\n` : `${quote.trimEnd()}\n`));
    lines[last] = withEol(lines[last]!);
    lines.splice(last + 1, 0, `${quote.trimEnd()}\n`, ...answerLines);
  }
  return lines.join("");
}

export interface LogEntry {
  date: string;
  op: string;
  title: string;
  body?: string;
}

/** The `## [YYYY-MM-DD] op | Title` ledger heading. */
export function logHeading(e: LogEntry): string {
  return `## [${e.date}] ${e.op} | ${e.title}`;
}

/** The ledger heading and its body. */
export function formatLogEntry(e: LogEntry): string {
  const body = e.body?.replace(/\s+$/, "");
  return `${logHeading(e)}\n` + (body ? `\n${body}\n` : "");
}

/** Append an entry at the bottom of log.md (newest last), or start the log. */
export function appendLogText(text: string | null, e: LogEntry): string {
  if (text === null || text.trim() === "") return `# Log\n\n${formatLogEntry(e)}`;
  let t = text;
  if (!t.endsWith("\n")) t += "\n";
  // A log that ends inside a code block left open would take the entry into it, out of sight: closed first
  // (the open block already ran to the end, so the person's text renders as before).
  const fence = openFenceAtEnd(t);
  if (fence) t += fence + "\n";
  if (!t.endsWith("\n\n")) t += "\n";
  return t + formatLogEntry(e);
}

/** The fence that closes a fenced code block left open at the end of `text` ("```" for "```js"), or null. */
function openFenceAtEnd(text: string): string | null {
  if (!text.includes("```") && !text.includes("~~~")) return null;
  const lines = text.replace(/\n$/, "").split("\n");
  const last = blocks(lines).at(-1);
  if (!last || last.type !== "code" || last.startLine + last.lineCount < lines.length) return null;
  const run = /^ {0,3}(`{3,}|~{3,})/.exec(lines[last.startLine]!)?.[1];
  if (!run) return null;
  const closing = new RegExp(`^ {0,3}${run[0] === "`" ? "`" : "~"}{${run.length},}[ \\t]*$`);
  return last.lineCount > 1 && closing.test(lines[lines.length - 1]!) ? null : run;
}

/** Today's date where the server runs (the person's calendar day), as YYYY-MM-DD. */
export function localDate(d = new Date()): string {
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
}
