import type { Database } from "bun:sqlite";
import { getMeta, setMeta } from "../store/index-db";
import type { LinkRow, NoteRows } from "./note-rows";
import type { LinkResolver } from "./resolver";
import { turnEvery } from "../platform/turns";

// Links whose target a pass may have changed: a name or alias appeared or vanished.

// index.db meta: "1" while a pass that committed partway has links still to re-resolve.
export const RERESOLVE_PENDING = "reresolve_pending";

/** Resolve `links` again and store what changed; the notes they belong to go into `touched`. */
function retry(rows: NoteRows, resolver: LinkResolver, links: Iterable<LinkRow>, touched: Set<number>): void {
  for (const row of links) {
    const r = resolver.resolve(row, row.source);
    if (r !== row.resolved) {
      rows.setResolved(row, r);
      touched.add(row.noteId);
    }
  }
}

/**
 * After a cold start, re-resolve links whose target could now point elsewhere. Every link was resolved with
 * every note's name known (only aliases came later), so only the still-unresolved ones are retried: found in
 * one pass over them rather than one query per alias (obsidian-hub: 5,723 aliases, ~80 ms; 67 unresolved
 * links). Any other pass uses reresolveKeysInTurns.
 */
export function reresolveColdStart(rows: NoteRows, resolver: LinkResolver, keys: Set<string>): void {
  if (!keys.size) return;
  const touched = new Set<number>();
  retry(rows, resolver, rows.unresolvedLinks().filter((row) => keys.has(row.key)), touched);
  for (const id of touched) rows.recount(id);
}

/** Links re-resolved between two turns of other callers (see reresolveKeysInTurns). */
const SLICE_MS = 10;

/**
 * Re-resolve the links by `keys` after a pass that is not a cold start, giving other callers a turn
 * every SLICE_MS: renaming a note that 20,000 notes link to re-resolved 40,000 links in one stretch (~0.9 s).
 * The pass's write transaction stays open meanwhile, as it does between parse batches.
 */
export async function reresolveKeysInTurns(rows: NoteRows, resolver: LinkResolver, keys: Set<string>): Promise<void> {
  const touched = new Set<number>();
  const turn = turnEvery(SLICE_MS);
  for (const key of keys) {
    const links = rows.linksWithKey(key);
    for (let i = 0; i < links.length; i += RETRY_STEP) {
      await turn();
      retry(rows, resolver, links.slice(i, i + RETRY_STEP), touched);
    }
  }
  // Each note whose links changed is counted again (~50 µs a note: 8,000 of them in one stretch, ~0.4 s).
  for (const id of touched) {
    await turn();
    rows.recount(id);
  }
}
const RETRY_STEP = 256;

/** After a pass that committed partway and then died: every unresolved link is tried again, once. */
export function settleInterruptedResolution(db: Database, rows: NoteRows, resolver: LinkResolver): void {
  if (getMeta(db, RERESOLVE_PENDING) !== "1") return;
  const touched = new Set<number>();
  retry(rows, resolver, rows.unresolvedLinks(), touched);
  for (const id of touched) rows.recount(id);
  setMeta(db, RERESOLVE_PENDING, "0");
}
