// Substring matching over the indexed notes, for text the full-text index's words cannot reach: words written
// with marks the tokenizer splits at or does not fold (see MARKED_SCRIPT). Shared by `search` (merged with its
// index matches) and search_workspace (its fallback, which also uses it for Chinese, Japanese and Thai; `search`
// finds those through the index's n-gram columns, lib/vault/ngram.ts, in every note, with no budget).
//
// Bodies are matched in JS, folded (case and accents, every script): SQLite's LIKE folds ASCII case only,
// and its worst case is a body times the query. The scan is bounded: at most SUBSTRING_SCAN_BYTES of bodies
// per call, read a slice at a time, so that a caller on the event loop can give other requests a turn
// between slices (a few ms each), and one query cannot hold the server.
import type { Database } from "bun:sqlite";
import { foldMatch, isAscii } from "../vault/fold";

/** Bytes of note bodies one substring scan may read (about 30 ms here; obsidian-hub holds 14.7 MB of notes). */
export const SUBSTRING_SCAN_BYTES = 4 * 1024 * 1024;
// Bytes of bodies read per statement: the caller may yield between them.
const SCAN_SLICE_BYTES = 128 * 1024;
// Characters read of one body: a fragment past the first megabyte of a huge note is not found.
const BODY_CHARS = 1024 * 1024;

// Text whose words the index splits or does not fold as the query's: Greek keeps its accents (remove_diacritics
// 2 folds Latin only: αθηνα missed Αθήνα), Hebrew and Arabic vowel points and the vowel signs of the Indic
// scripts split a word into letters (ذَهَبَ → ذ|ه|ب, so ذهب missed it), and Turkish dotless ı is not i (ışık
// missed Işık). Greek to Malayalam, plus ı and İ.
const MARKED_SCRIPT = /[\u0370-\u03ff\u1f00-\u1fff\u0590-\u08ff\u0900-\u0dff\u0131\u0130]/;

/**
 * Whether a query holds text that the index's words can miss, so that it is also matched as substrings. Not
 * Chinese, Japanese or Thai any more: the index's n-gram columns find a word anywhere in such a run.
 */
export function outOfIndexReach(query: string): boolean {
  return !isAscii(query) && MARKED_SCRIPT.test(query);
}

/** foldMatch, with ASCII's fast path (most of a body's bytes, most of the time). */
export const foldBody = (body: string) => (isAscii(body) ? body.toLowerCase() : foldMatch(body));

/**
 * Where the character at `at` of foldBody(body) came from in `body` (the fold keeps no map). It adds up
 * over code points (marks are dropped, never moved onto a neighbour), so whole chunks are skipped by their
 * folded length, and only the chunk holding `at` is walked a code point at a time (1M characters of
 * Cyrillic: 180 ms a hit walked whole). A match that starts inside one character's expansion (a Hangul
 * syllable folds to jamo) maps to the next character.
 */
export function unfoldedOffset(body: string, at: number): number {
  if (isAscii(body)) return at;
  const CHUNK = 2048;
  let folded = 0;
  let i = 0;
  while (i < body.length) {
    let end = Math.min(body.length, i + CHUNK);
    const last = body.charCodeAt(end - 1);
    if (end < body.length && last >= 0xd800 && last <= 0xdbff) end++; // not between a surrogate pair's halves
    const chunk = body.slice(i, end);
    const n = foldMatch(chunk).length;
    if (folded + n <= at) {
      folded += n;
      i = end;
      continue;
    }
    for (const ch of chunk) {
      if (folded >= at) return i;
      folded += foldMatch(ch).length;
      i += ch.length;
    }
  }
  return i;
}

export interface ScannedNote {
  id: number;
  path: string;
  title: string;
  /** The title and aliases as the index holds them (one string). */
  names: string;
  /** The first BODY_CHARS characters of the body. */
  body: string;
}

/**
 * The indexed notes in index order, one slice (about SCAN_SLICE_BYTES of bodies) per step, until
 * `budget` bytes are read. Returns true when the budget ran out before every note was read. A caller on
 * the event loop yields between steps; one in a read worker just runs through.
 */
export function* scanNotes(db: Database, budget = SUBSTRING_SCAN_BYTES): Generator<ScannedNote[], boolean> {
  const sizes = db.query("SELECT id, size FROM notes ORDER BY id").all() as { id: number; size: number }[];
  const read = db.query(
    `SELECT n.id AS id, n.path AS path, n.title AS title, f.title AS names, substr(f.body, 1, ${BODY_CHARS}) AS body
     FROM fts f JOIN notes n ON n.id = f.rowid WHERE f.rowid BETWEEN ? AND ? ORDER BY f.rowid`,
  );
  let i = 0;
  let scanned = 0;
  while (i < sizes.length && scanned < budget) {
    const from = sizes[i]!.id;
    let chunk = 0;
    while (i < sizes.length && chunk < SCAN_SLICE_BYTES && scanned + chunk < budget) chunk += Math.min(sizes[i++]!.size, BODY_CHARS);
    scanned += chunk;
    yield read.all(from, sizes[i - 1]!.id) as ScannedNote[];
  }
  return i < sizes.length;
}
