import type { Database } from "bun:sqlite";
import { getMeta, setMeta } from "../store/index-db";
import type { LinkRow, NoteRows } from "./note-rows";
import type { LinkResolver } from "./resolver";

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
 * Re-resolve links whose target could now point elsewhere. On a cold start every link was resolved with every
 * note's name known (only aliases came later), so only the still-unresolved ones are retried: found in one
 * pass over them rather than one query per alias (obsidian-hub: 5,723 aliases, ~80 ms; 67 unresolved links).
 */
export function reresolveKeys(rows: NoteRows, resolver: LinkResolver, keys: Set<string>, coldStart: boolean): void {
  const touched = new Set<number>();
  if (coldStart) {
    if (keys.size) retry(rows, resolver, rows.unresolvedLinks().filter((row) => keys.has(row.key)), touched);
  } else for (const key of keys) retry(rows, resolver, rows.linksWithKey(key), touched);
  for (const id of touched) rows.recount(id);
}

/** After a pass that committed partway and then died: every unresolved link is tried again, once. */
export function settleInterruptedResolution(db: Database, rows: NoteRows, resolver: LinkResolver): void {
  if (getMeta(db, RERESOLVE_PENDING) !== "1") return;
  const touched = new Set<number>();
  retry(rows, resolver, rows.unresolvedLinks(), touched);
  for (const id of touched) rows.recount(id);
  setMeta(db, RERESOLVE_PENDING, "0");
}
