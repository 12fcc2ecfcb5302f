// related_notes: the notes nearest in meaning to one note that it is not
// already linked with (either way).
import type { Database } from "bun:sqlite";
import { snippetsFor, type SemanticHit } from "./search";
import type { SemanticService } from "./service";
import { notesByIds, noteVector } from "./store";

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
  const rows = notesByIds(db, hits.map((h) => h.owner));
  const kept = hits.filter((h) => rows.has(h.owner) && !linked.has(rows.get(h.owner)!.path));
  const pageHits = kept.slice(offset, want);
  const snippets = snippetsFor(
    db,
    idx.passages,
    pageHits.map((h) => h.owner),
    v,
  );
  const items = pageHits.map((h) => {
    const r = rows.get(h.owner)!;
    return { path: r.path, title: r.title, snippet: snippets.get(h.owner) ?? "", score: Math.round(h.score * 1e6) / 1e6 };
  });
  return { items, total: kept.length };
}
