// Keyword mode has no stored passages: a note's best passages for a query are found by splitting its body
// at query time and scoring each piece by the query's words it holds.
import type { Database } from "bun:sqlite";
import { splitPassages } from "./passages";
import { inList } from "./store";
import { sliceWhole } from "../text-cut";

/** Passage size used when a note is split at query time (keyword mode has no stored passages). */
export const KEYWORD_PASSAGE_CHARS = 1000;

/**
 * How much of a note is split at query time. Splitting costs ~0.1 s a megabyte (more before the code is
 * compiled): an 8 MB note held every other caller over a second per answer when it ran on the request thread
 * (the review of 2026-12-07; it runs in a read worker now, lib/offload/jobs.ts, where it still takes a worker
 * that long). Past this, keyword mode's passages (and an answer's quotes) come from the note's first megabyte;
 * embedding modes read the passages stored for the whole note.
 */
export const KEYWORD_SPLIT_CHARS = 1_000_000;

/** A note's passages as keyword mode splits it at query time (its first KEYWORD_SPLIT_CHARS). */
export function splitForQuery(body: string) {
  return splitPassages(body.length > KEYWORD_SPLIT_CHARS ? sliceWhole(body, KEYWORD_SPLIT_CHARS) : body, KEYWORD_PASSAGE_CHARS);
}

export interface KeywordPassage {
  ord: number;
  heading: string;
  text: string;
  score: number;
}

export interface KeywordNote {
  noteId: number;
  path: string;
  title: string;
  passages: KeywordPassage[];
}

/** The `want` best passages of each note for `query`, with the note's path and title; notes gone are absent. */
export function keywordPassagesOf(db: Database, ids: number[], query: string, want: number): KeywordNote[] {
  if (!ids.length) return [];
  const rows = db
    .query(`SELECT n.id AS id, n.path AS path, n.title AS title, f.body AS body FROM notes n JOIN fts f ON f.rowid = n.id WHERE ${inList("n.id")}`)
    .all(JSON.stringify(ids)) as { id: number; path: string; title: string; body: string }[];
  const words = queryWords(query);
  return rows.map((n) => ({
    noteId: n.id,
    path: n.path,
    title: n.title,
    passages: splitForQuery(n.body)
      .map((p) => ({ ord: p.ord, heading: p.heading, text: p.text, score: wordShare(p.text, words) }))
      .sort((a, b) => b.score - a.score || a.ord - b.ord)
      .slice(0, want),
  }));
}

const fold = (s: string) => s.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();

function queryWords(query: string): string[] {
  return [...new Set(fold(query).match(/[\p{L}\p{N}]{3,}/gu) ?? [])];
}

/** The share of the query's words (as prefixes of the passage's words) that a passage holds. */
function wordShare(text: string, words: string[]): number {
  if (!words.length) return 0;
  const have = new Set(fold(text).match(/[\p{L}\p{N}]+/gu) ?? []);
  let hits = 0;
  for (const w of words) {
    const stem = w.length > 5 ? w.slice(0, w.length - 2) : w;
    for (const h of have) {
      if (h.startsWith(stem)) {
        hits++;
        break;
      }
    }
  }
  return hits / words.length;
}
