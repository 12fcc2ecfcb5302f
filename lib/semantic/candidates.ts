// The parts of hybrid ranking that read candidate notes back from the index:
// the second stage (re-scoring the fused top by ./rerank.ts's features) and
// keyword-to-vector pseudo-relevance feedback. Used by ./retrieve.ts.
import type { Database } from "bun:sqlite";
import { normalize } from "../providers/types";
import { PRF_DEPTH, type Scored } from "./fusion";
import type { RankingParams } from "./ranking";
import { PROXIMITY_CHARS, rerank, type RerankDoc } from "./rerank";
import { inList, noteVector } from "./store";

/**
 * Re-score the fused top candidates (RankingParams.rerankDepth) with the model-free features of ./rerank.ts;
 * the rest keep their order below them. `known`: candidates' texts already read (only the others are read here).
 */
export function secondStage(db: Database, query: string, fused: [number, number][], p: RankingParams, known?: Map<number, RerankDoc>): [number, number][] {
  if (p.rerankDepth <= 0 || !fused.length) return fused;
  fused.sort((a, b) => b[1] - a[1]);
  const head = fused.slice(0, p.rerankDepth);
  const docs = new Map(known);
  for (const [id, d] of rerankDocs(
    db,
    head.map(([id]) => id).filter((id) => !docs.has(id)),
  ))
    docs.set(id, d);
  const scores = rerank(
    query,
    head.map(([noteId, score]) => ({ noteId, score })),
    docs,
    p.rerank,
  );
  // The tail stays below the re-scored head, in its fused order.
  const floor = Math.min(...scores.values());
  const tailTop = fused[p.rerankDepth]?.[1] ?? 0;
  const rescored: [number, number][] = head.map(([id]) => [id, scores.get(id)!]);
  const tail: [number, number][] = fused.slice(p.rerankDepth).map(([id, s], i) => [id, floor > 0 && tailTop > 0 ? (s / tailTop) * floor * 0.999 : -(i + 1) / 1e6]);
  return [...rescored, ...tail];
}

export function rerankDocs(db: Database, ids: number[]): Map<number, RerankDoc> {
  const list = JSON.stringify(ids);
  // Only the start of a body is scored (PROXIMITY_CHARS): read whole, a top note of 8 MB was copied into a
  // string on each hybrid call.
  const rows = db
    .query(`SELECT n.id AS id, n.title AS title, n.aliases AS aliases, substr(f.body, 1, ${PROXIMITY_CHARS}) AS body FROM notes n JOIN fts f ON f.rowid = n.id WHERE ${inList("n.id")}`)
    .all(list) as { id: number; title: string; aliases: string; body: string }[];
  const headings = new Map<number, string[]>();
  for (const h of db.query(`SELECT note_id AS id, title FROM headings WHERE ${inList("note_id")} ORDER BY note_id, ord`).all(list) as { id: number; title: string }[]) {
    const l = headings.get(h.id);
    if (l) l.push(h.title);
    else headings.set(h.id, [h.title]);
  }
  const aliasList = (json: string): string[] => {
    try {
      const a = JSON.parse(json) as unknown;
      return Array.isArray(a) ? a.filter((x): x is string => typeof x === "string") : [];
    } catch {
      return [];
    }
  };
  return new Map(rows.map((r) => [r.id, { noteId: r.id, title: r.title, aliases: aliasList(r.aliases), headings: headings.get(r.id) ?? [], body: r.body }]));
}

/** Rocchio feedback: the query vector moved `beta` toward the mean note vector of the best keyword hits. */
export function towardKeywordHits(db: Database, query: Float32Array, keyword: Scored, beta: number): Float32Array {
  const top = [...keyword].sort((a, b) => b[1].score - a[1].score).slice(0, PRF_DEPTH);
  const q = normalize(Float32Array.from(query));
  let n = 0;
  const mean = new Float32Array(q.length);
  for (const [id] of top) {
    const v = noteVector(db, id);
    if (!v || v.length !== q.length) continue;
    const u = normalize(Float32Array.from(v));
    for (let i = 0; i < q.length; i++) mean[i]! += u[i]!;
    n++;
  }
  if (!n) return query;
  return normalize(Float32Array.from(q, (x, i) => x + (beta * mean[i]!) / n));
}
