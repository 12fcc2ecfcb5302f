// Context Pack v2 ranking (docs/workspace.md, "Context packs"): which pages
// answer a task. BM25 over titles (10×) and bodies for the task's words, plus
// the agent's keywords at half weight; fused with the vector ranking when the
// vault's embeddings are there; then a link-graph prior, a boost for pages a
// person reviewed at their current content, and a penalty for deprecated or
// stale ones. The weights are RANKING; the bench (bench/context.ts) measures them.
import type { Database } from "bun:sqlite";
import { ToolError } from "../../errors";
import { selectEmbedder } from "../../providers/select";
import { SUMMARY_COLUMNS, type NoteRow } from "../../retrieval/notes";
import { reviewsOf } from "../../store/reviews";
import { rrf } from "../../semantic/fusion";
import { retrieve } from "../../semantic/retrieve";
import { SemanticService } from "../../semantic/service";
import { embeddedModel, inList } from "../../semantic/store";
import type { VaultContext } from "../../vault-context";
import { inboundCounts } from "../neighbours";
import { fold, foldedWords, ftsQuote, lightStem, STOPWORDS } from "../text";
import { freshnessOf, trustOf, type Freshness, type TrustInfo } from "../trust";

export const TRUST_POLICIES = ["any", "prefer-human-reviewed", "human-reviewed-only"] as const;
export type TrustPolicy = (typeof TRUST_POLICIES)[number];

export const RANKING = {
  /** Candidates each ranked list contributes. */
  depth: 60,
  keywordWeight: 0.5,
  /** RRF constant when fusing with vectors: small, so the top of each list counts most. */
  rrfK: 10,
  /** × (1 + inbound · ln(1 + notes linking here)). */
  inbound: 0.04,
  /** × this when one / two or more of the three best candidates link to the page. */
  coLinked: [1, 1.08, 1.15],
  reviewed: 1.25,
  asserted: 1.08,
  deprecated: 0.35,
  stale: 0.75,
  /** Candidates scoring under this share of the best are not worth a concept slot. */
  floor: 0.2,
};

export interface Term {
  /** As the index gets it: lower-cased, lightly stemmed, accents left to the tokenizer. */
  fts: string;
  /** Folded and stemmed, for matching titles and bodies in JS (as a word prefix). */
  folded: string;
  /** The word as folded, unstemmed (for people: selectionReason, warnings). */
  word: string;
}

/** A text's search terms: words of two or more letters that are not stopwords, once each. */
export function termsOf(text: string, max: number): Term[] {
  const out: Term[] = [];
  const seen = new Set<string>();
  for (const raw of text.match(/[\p{L}\p{N}]+/gu) ?? []) {
    const folded = fold(raw);
    if (folded.length < 2 || STOPWORDS.has(folded) || seen.has(folded)) continue;
    seen.add(folded);
    out.push({ fts: lightStem(raw.toLowerCase()), folded: lightStem(folded), word: folded });
    if (out.length >= max) break;
  }
  return out;
}

const ftsTerm = (t: Term) => (t.fts.length >= 3 ? `${ftsQuote(t.fts)}*` : ftsQuote(t.fts));

/** BM25 (higher is better) of the notes matching any of the terms, best first. */
function bm25Any(db: Database, terms: Term[], depth: number): Map<number, number> {
  if (!terms.length) return new Map();
  try {
    const rows = db
      .query("SELECT rowid AS id, bm25(fts, 10.0, 1.0) AS s FROM fts WHERE fts MATCH ? ORDER BY s LIMIT ?")
      .all(terms.map(ftsTerm).join(" OR "), depth) as { id: number; s: number }[];
    return new Map(rows.map((r) => [r.id, -r.s]));
  } catch {
    return new Map();
  }
}

/** The terms that match no note at all. */
function missingTerms(db: Database, terms: Term[]): Term[] {
  const q = db.query("SELECT 1 AS x FROM fts WHERE fts MATCH ? LIMIT 1");
  return terms.filter((t) => {
    try {
      return q.get(ftsTerm(t)) === null;
    } catch {
      return true;
    }
  });
}

/** The vector ranking of the task, when this vault has vectors of the configured model; null otherwise (with why, when it tried). */
async function vectorRanking(vault: VaultContext, text: string, depth: number, signal?: AbortSignal): Promise<{ ids: number[] } | { skipped: string } | null> {
  const model = embeddedModel(vault.indexDb);
  // No vectors yet: never start a vault-wide embedding from here (serve and `lettuce embed` build them).
  if (!model?.dim) return null;
  const sel = await selectEmbedder();
  if (!sel.provider || sel.provider.id !== model.id) return null;
  try {
    const r = await retrieve(SemanticService.for(vault), { query: text, limit: depth, mode: "vector", signal });
    return { ids: r.notes.map((n) => n.noteId) };
  } catch (e) {
    if (e instanceof ToolError) return { skipped: e.message };
    throw e;
  }
}

export interface Candidate {
  row: NoteRow;
  frontmatter: Record<string, unknown>;
  score: number;
  taskScore: number;
  keywordScore: number;
  vectorRank: number | null;
  inbound: number;
  coLinked: number;
  trust: TrustInfo;
  fresh: Freshness;
}

export interface Ranking {
  candidates: Candidate[];
  ranking: "keyword" | "keyword+vector";
  vectorSkipped?: string;
  taskTerms: Term[];
  keywordTerms: Term[];
  missing: Term[];
  keywordHits: number;
  /** Matching pages left out by trustPolicy human-reviewed-only. */
  excludedByTrust: number;
}

function rowsByIds(db: Database, ids: number[]): Map<number, NoteRow> {
  if (!ids.length) return new Map();
  const rows = db.query(`SELECT ${SUMMARY_COLUMNS} FROM notes WHERE ${inList("id")}`).all(JSON.stringify(ids)) as NoteRow[];
  return new Map(rows.map((r) => [r.id, r]));
}

/** Notes the three best candidates link to, with which of the three link to each. */
function linkedByTop(db: Database, topIds: number[]): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  if (!topIds.length) return out;
  const rows = db.query(`SELECT DISTINCT note_id AS src, resolved AS path FROM links WHERE ${inList("note_id")} AND resolved IS NOT NULL`).all(JSON.stringify(topIds)) as { src: number; path: string }[];
  for (const r of rows) {
    const set = out.get(r.path) ?? new Set<number>();
    set.add(r.src);
    out.set(r.path, set);
  }
  return out;
}

export async function rankForTask(
  vault: VaultContext,
  o: { task: string; keywords: string[]; trustPolicy: TrustPolicy; maxConcepts: number; signal?: AbortSignal },
): Promise<Ranking> {
  const db = vault.indexDb;
  const taskTerms = termsOf(o.task, 24);
  const taskSet = new Set(taskTerms.map((t) => t.folded));
  const keywordTerms = termsOf(o.keywords.join(" "), 48).filter((t) => !taskSet.has(t.folded));
  const byTask = bm25Any(db, taskTerms, RANKING.depth);
  const byKeyword = bm25Any(db, keywordTerms, RANKING.depth);
  const vec = taskTerms.length || keywordTerms.length ? await vectorRanking(vault, [o.task, ...o.keywords].join("\n"), RANKING.depth, o.signal) : null;
  const vectorIds = vec && "ids" in vec ? vec.ids : null;

  // Lexical score: the task's BM25 plus half the keywords'.
  const lexical = new Map<number, number>();
  for (const [id, s] of byTask) lexical.set(id, s);
  for (const [id, s] of byKeyword) lexical.set(id, (lexical.get(id) ?? 0) + RANKING.keywordWeight * s);
  let base: Map<number, number>;
  if (vectorIds && vectorIds.length) {
    const lexIds = [...lexical].sort((a, b) => b[1] - a[1]).map(([id]) => id);
    base = rrf(
      [
        { ids: lexIds, weight: 1 },
        { ids: vectorIds, weight: 1 },
      ],
      RANKING.rrfK,
    );
  } else base = lexical;
  const max = Math.max(0, ...base.values());
  const ids = [...base.keys()];
  const rows = rowsByIds(db, ids);
  const reviews = reviewsOf(
    vault.stateDb,
    [...rows.values()].map((r) => r.path),
  );
  const inbound = inboundCounts(
    db,
    [...rows.values()].map((r) => r.path),
  );
  const vectorRank = new Map((vectorIds ?? []).map((id, i) => [id, i + 1]));

  let candidates: Candidate[] = [];
  for (const [id, b] of base) {
    const row = rows.get(id);
    if (!row || max <= 0) continue;
    let fm: Record<string, unknown> = {};
    try {
      fm = JSON.parse(row.frontmatter) ?? {};
    } catch {
      fm = {};
    }
    const trust = trustOf(row.hash, fm, reviews.get(row.path));
    const fresh = freshnessOf(fm, row.mtime);
    const n = inbound.get(row.path) ?? 0;
    let score = (b / max) * (1 + RANKING.inbound * Math.log1p(n));
    if (o.trustPolicy !== "any") score *= trust.trust === "human-reviewed" ? RANKING.reviewed : trust.trust === "external-human-asserted" ? RANKING.asserted : 1;
    if (fresh.deprecated) score *= RANKING.deprecated;
    else if (fresh.stale) score *= RANKING.stale;
    candidates.push({ row, frontmatter: fm, score, taskScore: byTask.get(id) ?? 0, keywordScore: byKeyword.get(id) ?? 0, vectorRank: vectorRank.get(id) ?? null, inbound: n, coLinked: 0, trust, fresh });
  }
  candidates.sort((a, b) => b.score - a.score || (a.row.path < b.row.path ? -1 : 1));
  // Graph prior, second half: pages the three best candidates point at.
  const linked = linkedByTop(
    db,
    candidates.slice(0, 3).map((c) => c.row.id),
  );
  for (const c of candidates) {
    const from = linked.get(c.row.path);
    c.coLinked = from ? from.size - (from.has(c.row.id) ? 1 : 0) : 0; // a page's link to itself is no vote
    c.score *= RANKING.coLinked[Math.min(2, c.coLinked)]!;
  }
  candidates.sort((a, b) => b.score - a.score || (a.row.path < b.row.path ? -1 : 1));
  let excludedByTrust = 0;
  if (o.trustPolicy === "human-reviewed-only") {
    const kept = candidates.filter((c) => c.trust.trust === "human-reviewed");
    excludedByTrust = candidates.length - kept.length;
    candidates = kept;
  }
  const top = candidates[0]?.score ?? 0;
  candidates = candidates.filter((c) => c.score >= RANKING.floor * top).slice(0, o.maxConcepts);
  return {
    candidates,
    ranking: vectorIds ? "keyword+vector" : "keyword",
    ...(vec && "skipped" in vec ? { vectorSkipped: vec.skipped } : {}),
    taskTerms,
    keywordTerms,
    missing: missingTerms(db, taskTerms),
    keywordHits: byKeyword.size,
    excludedByTrust,
  };
}

/** Which of the terms a text holds (as a prefix of one of its words). */
export function termsIn(text: string, terms: Term[]): Term[] {
  const words = new Set(foldedWords(text));
  return terms.filter((t) => {
    for (const w of words) if (w.startsWith(t.folded)) return true;
    return false;
  });
}
