// use_graph: what the link graph knows about relevance, on top of retrieve()'s
// ranking (not a second ranking). A prior lifts well-linked notes (many other
// notes point at them: hubs, definitions) and notes sharing the top hit's tags
// (same topic), and the top page's own links are pulled in as context (a
// 1-hop expansion: the page an answer starts from often defers to them).
import type { Database } from "bun:sqlite";
import { inboundCounts, linkedNoteIds } from "../retrieval/links";
import { tagsOfNotes } from "../retrieval/tags";

// How much the prior may lift a note, relative to its retrieval score. Small on
// purpose: it breaks near-ties, it does not overrule relevance.
export const LINK_BOOST = 0.2;
export const TAG_BOOST = 0.15;
/** Linked neighbours of the top page added as extra context. */
export const EXPANSION = 2;

export interface Ranked {
  noteId: number;
  score: number;
}

/**
 * Reorder candidates by score × (1 + LINK_BOOST × log-scaled inbound links +
 * TAG_BOOST × [shares a tag with the top hit]). Scores are retrieve()'s
 * (higher is better, positive for keyword and hybrid ranking); each is taken
 * relative to the best so that the prior means the same on every scale.
 */
export function applyGraphPrior<T extends Ranked>(db: Database, ranked: T[]): T[] {
  if (ranked.length < 2) return ranked;
  const ids = ranked.map((r) => r.noteId);
  const inbound = inboundCounts(db, ids);
  const maxIn = Math.max(1, ...inbound.values());
  const tags = tagsOfNotes(db, ids);
  const topTags = new Set(tags.get(ranked[0]!.noteId) ?? []);
  const best = Math.max(...ranked.map((r) => Math.abs(r.score))) || 1;
  const boosted = ranked.map((r, i) => {
    const links = Math.log1p(inbound.get(r.noteId) ?? 0) / Math.log1p(maxIn);
    const shares = i > 0 && (tags.get(r.noteId) ?? []).some((t) => topTags.has(t)) ? 1 : 0;
    return { r, s: (r.score / best) * (1 + LINK_BOOST * links + TAG_BOOST * shares), i };
  });
  boosted.sort((a, b) => b.s - a.s || a.i - b.i);
  return boosted.map((b) => b.r);
}

/** Up to `n` notes the top page links to that are not already in the context, in link order. */
export function neighboursOf(db: Database, topNoteId: number, exclude: Set<number>, n = EXPANSION): number[] {
  return linkedNoteIds(db, topNoteId)
    .filter((id) => !exclude.has(id))
    .slice(0, n);
}
