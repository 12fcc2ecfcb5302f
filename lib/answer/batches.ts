// lint_semantic reads the vault in batches that fit the model's window, and
// a contradiction or a missing page only shows when related pages sit in the
// same batch. So batches are grown along links: a seed (the best-linked note
// not yet placed), then repeatedly the unplaced note with the most links into
// the batch, until the batch is full or has no linked note left; then notes of
// the seed's folder fill the rest. Deterministic for a given vault, so that a
// batch's review can be cached and a second call pages through the same plan.
import type { Database } from "bun:sqlite";
import { noteLinkPairs } from "../retrieval/links";
import { isMetaNote } from "../hygiene/wiki-layout";

export interface PlanNote {
  id: number;
  path: string;
  folder: string;
  size: number;
  hash: string;
}

export interface Batch {
  notes: PlanNote[];
}

// What one note costs in a batch besides its excerpt: the header line (path, title, date, tags).
const HEADER_CHARS = 160;

/** Notes to review: every note (or those under `scope`), the wiki's scaffolding (index.md, log.md, AGENTS.md) excepted. */
export function planNotes(db: Database, scope = ""): PlanNote[] {
  const rows = db.query("SELECT id, path, folder, size, hash FROM notes ORDER BY path").all() as PlanNote[];
  return rows.filter((n) => !isMetaNote(n.path) && (!scope || n.path === scope || n.path.startsWith(`${scope}/`)));
}

export function planBatches(db: Database, notes: PlanNote[], budgetChars: number, excerptChars: number): Batch[] {
  const cost = (n: PlanNote) => Math.min(n.size, excerptChars) + HEADER_CHARS;
  const byId = new Map(notes.map((n) => [n.id, n]));
  const adj = new Map<number, Set<number>>();
  for (const { src, dst } of noteLinkPairs(db)) {
    if (!byId.has(src) || !byId.has(dst)) continue;
    for (const [a, b] of [
      [src, dst],
      [dst, src],
    ] as const) {
      let s = adj.get(a);
      if (!s) adj.set(a, (s = new Set()));
      s.add(b);
    }
  }
  const degree = (id: number) => adj.get(id)?.size ?? 0;
  const seeds = [...notes].sort((a, b) => degree(b.id) - degree(a.id) || (a.path < b.path ? -1 : 1));
  const byFolder = new Map<string, PlanNote[]>();
  for (const n of notes) {
    const list = byFolder.get(n.folder);
    if (list) list.push(n);
    else byFolder.set(n.folder, [n]);
  }
  const placed = new Set<number>();
  const batches: Batch[] = [];
  for (const seed of seeds) {
    if (placed.has(seed.id)) continue;
    const batch: PlanNote[] = [seed];
    placed.add(seed.id);
    let used = cost(seed);
    // Unplaced neighbours, with how many links they have into the batch.
    const frontier = new Map<number, number>();
    const grow = (id: number) => {
      for (const nb of adj.get(id) ?? []) if (!placed.has(nb)) frontier.set(nb, (frontier.get(nb) ?? 0) + 1);
    };
    grow(seed.id);
    while (frontier.size) {
      let best = -1;
      let bestLinks = -1;
      for (const [id, links] of frontier) {
        const n = byId.get(id)!;
        if (used + cost(n) > budgetChars) continue;
        // Most links into the batch; then the more specific (less linked) note; then path order.
        if (links > bestLinks || (links === bestLinks && (degree(id) < degree(best) || (degree(id) === degree(best) && n.path < byId.get(best)!.path)))) {
          best = id;
          bestLinks = links;
        }
      }
      if (best < 0) break; // nothing linked fits any more
      frontier.delete(best);
      placed.add(best);
      batch.push(byId.get(best)!);
      used += cost(byId.get(best)!);
      grow(best);
    }
    // Room left: the seed's folder-mates, which are often about the same thing.
    for (const n of byFolder.get(seed.folder) ?? []) {
      if (placed.has(n.id) || used + cost(n) > budgetChars) continue;
      placed.add(n.id);
      batch.push(n);
      used += cost(n);
    }
    batches.push({ notes: batch });
  }
  return batches;
}
