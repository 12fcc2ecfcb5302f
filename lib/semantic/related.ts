// related_notes: the notes nearest in meaning to one note that it is not
// already linked with (either way).
import type { Database } from "bun:sqlite";
import { bestPassages, snippetOf, type SemanticHit } from "./search";
import type { SemanticService } from "./service";
import { noteVector, passagesByIds } from "./store";

/** Paths linked from or to a note (resolved links only). */
export function linkedPaths(db: Database, noteId: number, path: string): Set<string> {
  const out = new Set<string>();
  for (const r of db.query("SELECT DISTINCT resolved FROM links WHERE note_id = ? AND resolved IS NOT NULL").all(noteId) as { resolved: string }[]) out.add(r.resolved);
  for (const r of db.query("SELECT DISTINCT n.path AS path FROM links l JOIN notes n ON n.id = l.note_id WHERE l.resolved = ?").all(path) as { path: string }[]) out.add(r.path);
  return out;
}

export async function relatedNotes(svc: SemanticService, note: { id: number; path: string }, limit: number, offset = 0): Promise<{ items: SemanticHit[]; total: number }> {
  await svc.ensureFresh();
  const db = svc.vault.indexDb;
  const idx = svc.indexes();
  const v = noteVector(db, note.id);
  if (!idx || !v) return { items: [], total: 0 }; // an empty note has nothing to compare
  const linked = linkedPaths(db, note.id, note.path);
  const want = offset + limit;
  // Ask for enough neighbours to survive dropping the note itself and its linked notes.
  const hits = idx.notes.search(v, want + linked.size + 1).filter((h) => h.owner !== note.id);
  const ids = hits.map((h) => h.owner);
  const rows = ids.length
    ? new Map(
        (db.query(`SELECT id, path, title FROM notes WHERE id IN (${ids.map(() => "?").join(",")})`).all(...ids) as { id: number; path: string; title: string }[]).map((r) => [r.id, r]),
      )
    : new Map<number, { id: number; path: string; title: string }>();
  const kept = hits.filter((h) => rows.has(h.owner) && !linked.has(rows.get(h.owner)!.path));
  const pageHits = kept.slice(offset, want);
  const best = bestPassages(
    db,
    idx.passages,
    pageHits.map((h) => h.owner),
    v,
  );
  const texts = passagesByIds(
    db,
    [...best.values()].map((b) => b.passageId),
  );
  const items = pageHits.map((h) => {
    const r = rows.get(h.owner)!;
    const p = best.has(h.owner) ? texts.get(best.get(h.owner)!.passageId) : undefined;
    return { path: r.path, title: r.title, snippet: p ? snippetOf(p.text) : "", score: Math.round(h.score * 1e6) / 1e6 };
  });
  return { items, total: kept.length };
}
