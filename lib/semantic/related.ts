// related_notes: the notes nearest in meaning to one note that it is not
// already linked with (either way). The ranking is retrieve.ts's, like every
// other "which notes" question.
import type { Database } from "bun:sqlite";
import { retrieveRelated } from "./retrieve";
import { partialOf, snippetOf, type SemanticHit } from "./search";
import type { EmbeddingProgress, SemanticService } from "./service";

/** Paths linked from or to a note (resolved links only). */
export function linkedPaths(db: Database, noteId: number, path: string): Set<string> {
  const out = new Set<string>();
  for (const r of db.query("SELECT DISTINCT resolved FROM links WHERE note_id = ? AND resolved IS NOT NULL").all(noteId) as { resolved: string }[]) out.add(r.resolved);
  for (const r of db.query("SELECT DISTINCT n.path AS path FROM links l JOIN notes n ON n.id = l.note_id WHERE l.resolved = ?").all(path) as { path: string }[]) out.add(r.path);
  return out;
}

export async function relatedNotes(svc: SemanticService, note: { id: number; path: string }, limit: number, offset = 0): Promise<{ items: SemanticHit[]; total: number; partial?: true; progress?: EmbeddingProgress }> {
  const r = await retrieveRelated(svc, note.id, { limit, offset, exclude: linkedPaths(svc.vault.indexDb, note.id, note.path) });
  const items = r.notes.map((n) => ({ path: n.path, title: n.title, snippet: n.passages[0] ? snippetOf(n.passages[0].text) : "", score: Math.round(n.score * 1e6) / 1e6 }));
  return { items, total: r.total, ...partialOf(r.partial) };
}
