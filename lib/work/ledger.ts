import type { Database } from "bun:sqlite";
import { readVaultText } from "../vault/read-file";

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

const ENTRY = /^ {0,3}#{1,6}[ \t]+\[(\d{4}-\d{2}-\d{2})\][ \t]*([^|\n]*?)[ \t]*(?:\|[ \t]*(.*?))?[ \t]*$/;
const FENCE = /^ {0,3}(```+|~~~+)/;

function isCalendarDate(s: string): boolean {
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

/** Entries in file order; headings inside code fences and malformed dates are skipped. */
export function parseLedger(text: string): LedgerEntry[] {
  const out: LedgerEntry[] = [];
  let fence: string | null = null;
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const f = FENCE.exec(line);
    if (fence) {
      if (f && f[1]![0] === fence[0] && f[1]!.length >= fence.length) fence = null;
      continue;
    }
    if (f) {
      fence = f[1]!;
      continue;
    }
    const m = ENTRY.exec(line);
    if (!m || !isCalendarDate(m[1]!)) continue;
    const op = m[2]!.trim().toLowerCase();
    out.push({ date: m[1]!, op, title: (m[3] ?? "").replace(/[ \t]+#+$/, "").trim(), line: i + 1 });
  }
  return out;
}

const cache = new WeakMap<Database, { hash: string; entries: LedgerEntry[]; newest?: LedgerEntry[] }>();

/** The vault's root log.md (any case), parsed; re-read only when its indexed hash changes. */
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
  const entries = parseLedger(text);
  cache.set(db, { hash: row.hash, entries });
  return entries;
}

/** Newest first: by date, and within a day the later line (the log is append-only). */
export function newestFirst(entries: LedgerEntry[]): LedgerEntry[] {
  return [...entries].sort((a, b) => (a.date === b.date ? b.line - a.line : a.date < b.date ? 1 : -1));
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
