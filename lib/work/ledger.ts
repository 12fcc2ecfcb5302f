import type { Database } from "bun:sqlite";
import { readVaultText } from "../vault/read-file";
import { cut, MAX_DIRECTIVE_TITLE } from "../vault/work-markers";

/**
 * log.md as a ledger, the LLM-wiki convention: one heading per event,
 * `## [YYYY-MM-DD] op | Title`, appended at the bottom. docs/hygiene.md
 * documents it for people and agents.
 */
export interface LedgerEntry {
  date: string;
  op: string;
  title: string;
  line: number;
}

// A ledger heading's start: `## [YYYY-MM-DD]`. The rest of the line is cut by hand: the one pattern for the
// whole line backtracked on a heading with a long run of spaces in it (2,000 took 3 s, 10,000 minutes, on the
// request thread that get_vault_info reads the ledger on).
const ENTRY_START = /^ {0,3}#{1,6}[ \t]+\[(\d{4})-(\d{2})-(\d{2})\]/;
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isCalendarDate(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1 || d > DAYS_IN_MONTH[m - 1]!) return false;
  return m !== 2 || d < 29 || (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0));
}

/** A code fence's marker (``` or ~~~ and longer, after up to three spaces), or null. */
function fenceOf(line: string): string | null {
  let i = 0;
  while (i < 3 && line[i] === " ") i++;
  const c = line[i];
  if (c !== "`" && c !== "~") return null;
  let j = i;
  while (line[j] === c) j++;
  return j - i >= 3 ? line.slice(i, j) : null;
}

const isBlank = (c: string | undefined) => c === " " || c === "\t";

/** `text` without a closing run of #s that follows a space or tab (`## [d] op | Title ##`). */
function withoutClosingHashes(text: string): string {
  let j = text.length;
  while (j > 0 && text[j - 1] === "#") j--;
  return j < text.length && isBlank(text[j - 1]) ? text.slice(0, j).trim() : text;
}

/** Where a parse stopped: the start of the text's last line (it may still grow), and what was open there. */
interface Resume {
  offset: number; // UTF-16 index of the last line's start
  line: number; // its index (0-based)
  fence: string | null;
  count: number; // entries before it
}

/** Entries in file order; headings inside code fences and malformed dates are skipped. */
export function parseLedger(text: string): LedgerEntry[] {
  return parseFrom(text, { offset: 0, line: 0, fence: null, count: 0 }, []).entries;
}

/** Parses `text` from `at` (a line's start, in the state `at` says), appending to `out`. */
function parseFrom(text: string, at: Resume, out: LedgerEntry[]): { entries: LedgerEntry[]; resume: Resume } {
  let fence = at.fence;
  let pos = at.offset;
  let i = at.line;
  let resume: Resume = at;
  for (;;) {
    const nl = text.indexOf("\n", pos);
    const end = nl === -1 ? text.length : nl;
    if (nl === -1) resume = { offset: pos, line: i, fence, count: out.length };
    let line = text.slice(pos, end);
    if (line.endsWith("\r")) line = line.slice(0, -1);
    const f = fenceOf(line);
    if (fence) {
      if (f && f[0] === fence[0] && f.length >= fence.length) fence = null;
    } else if (f) {
      fence = f;
    } else {
      const m = ENTRY_START.exec(line);
      if (m && isCalendarDate(Number(m[1]), Number(m[2]), Number(m[3]))) {
        const rest = line.slice(m[0].length);
        const bar = rest.indexOf("|");
        const op = (bar === -1 ? rest : rest.slice(0, bar)).trim().toLowerCase();
        // Cut as a directive's title is: recent_activity {limit: 1} answered 2 MB for one heading of that length.
        const title = bar === -1 ? "" : cut(withoutClosingHashes(rest.slice(bar + 1).trim()), MAX_DIRECTIVE_TITLE);
        out.push({ date: `${m[1]}-${m[2]}-${m[3]}`, op, title, line: i + 1 });
      }
    }
    if (nl === -1) return { entries: out, resume };
    pos = nl + 1;
    i++;
  }
}

interface Cached {
  hash: string;
  entries: LedgerEntry[];
  newest?: LedgerEntry[];
  /** The text's length and a hash of it, to tell an append (the log's one way of growing) from an edit. */
  length: number;
  digest: number | bigint;
  resume: Resume;
}

const cache = new WeakMap<Database, Cached>();

/**
 * The vault's root log.md (any case), parsed; re-read only when its indexed hash changes, and then, when
 * the new text is the old one with more at its end, parsed only from the old text's last line: each append
 * to a log of 100,000 entries re-parsed and re-sorted it all (0.4–0.7 s on the request thread of the next
 * get_vault_info; the review of 2026-12-07).
 */
export function readLedger(db: Database, root: string): LedgerEntry[] {
  const row = db.query("SELECT path, hash FROM notes WHERE path = 'log.md' COLLATE NOCASE ORDER BY path LIMIT 1").get() as { path: string; hash: string } | null;
  if (!row) return [];
  const hit = cache.get(db);
  if (hit && hit.hash === row.hash) return hit.entries;
  let text: string;
  try {
    text = readVaultText(root, row.path);
  } catch {
    return [];
  }
  const appended = hit !== undefined && text.length >= hit.length && Bun.hash(text.slice(0, hit.length)) === hit.digest;
  const { entries, resume } = appended
    ? parseFrom(text, hit.resume, hit.entries.slice(0, hit.resume.count))
    : parseFrom(text, { offset: 0, line: 0, fence: null, count: 0 }, []);
  cache.set(db, { hash: row.hash, entries, length: text.length, digest: Bun.hash(text), resume });
  return entries;
}

/**
 * Newest first: by date, and within a day the later line. The log is append-only, so its entries reversed
 * are nearly always in that order already: checked in one pass, sorted only when they are not.
 */
export function newestFirst(entries: LedgerEntry[]): LedgerEntry[] {
  const out = [...entries].reverse();
  for (let i = 1; i < out.length; i++) {
    if (out[i - 1]!.date < out[i]!.date) return out.sort((a, b) => (a.date === b.date ? b.line - a.line : a.date < b.date ? 1 : -1));
  }
  return out;
}

/**
 * The ledger newest first, sorted once per version of log.md: a log of 100,000 entries cost ~0.1 s of sorting
 * at every get_activity, /api/work and get_vault_info. Shared: callers filter or slice it, never sort it.
 */
export function ledgerNewestFirst(db: Database, root: string): readonly LedgerEntry[] {
  const entries = readLedger(db, root);
  const hit = cache.get(db);
  if (!hit || hit.entries !== entries) return newestFirst(entries); // not cached (no log.md, or unreadable)
  return (hit.newest ??= newestFirst(entries));
}

/** The date of the newest entry. */
export function lastLogDate(db: Database, root: string): string | null {
  return ledgerNewestFirst(db, root)[0]?.date ?? null;
}

/**
 * Notes under sources/ that no compiled page links to yet: inbound links from
 * log.md (which records the ingest) and from other sources do not count.
 */
export function uncompiledSources(db: Database): string[] {
  const rows = db
    .query(
      `SELECT s.path AS path FROM notes s
       WHERE s.path LIKE 'sources/%'
         AND NOT EXISTS (
           SELECT 1 FROM links l JOIN notes src ON src.id = l.note_id
           WHERE l.resolved = s.path AND src.id != s.id
             AND src.path NOT LIKE 'sources/%' AND lower(src.path) != 'log.md')
       ORDER BY s.path`,
    )
    .all() as { path: string }[];
  return rows.map((r) => r.path);
}
