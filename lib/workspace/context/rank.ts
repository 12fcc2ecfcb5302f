// Context Pack v2 ranking (docs/workspace.md, "Context packs"): which pages
// answer a task. When the vault's embeddings are there, retrieve()'s hybrid
// ranking (the one semantic_search and answer use), the agent's keywords' BM25
// added at half weight on its keyword side; without them, BM25 over titles
// (10×) and bodies for the task's words plus the keywords' at half weight,
// scaled by coverage. Then a link-graph prior, a boost for pages a person
// reviewed at their current content, and a penalty for deprecated or stale
// ones. The weights are RANKING; the bench (bench/context.ts) measures them.
import type { Database } from "bun:sqlite";
import { ToolError } from "../../errors";
import { selectEmbedder } from "../../providers/select";
import { noteCount, SUMMARY_COLUMNS, type NoteRow } from "../../retrieval/notes";
import { reviewsOf } from "../../store/reviews";
import { retrieve, type RetrievedNote } from "../../semantic/retrieve";
import { SemanticService } from "../../semantic/service";
import { embeddedModel, inList } from "../../semantic/store";
import type { VaultContext } from "../../vault-context";
import { inboundCounts } from "../neighbours";
import { ftsQuote } from "../text";
import { coverage, hasPairs, matchable, matchersOf, ngramTokens, termsOf, type PageText, type Term } from "./terms";
import { freshnessOf, trustOf, type Freshness, type TrustInfo } from "../trust";
import { indexMemo } from "../vault-cache";
import { FTS_WEIGHTS } from "../../store/fts-db";

export type { Term } from "./terms";

export const TRUST_POLICIES = ["any", "prefer-human-reviewed", "human-reviewed-only"] as const;
export type TrustPolicy = (typeof TRUST_POLICIES)[number];

export const RANKING = {
  /** Candidates each ranked list contributes. */
  depth: 40,
  keywordWeight: 0.5,
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
  /** Words in more than this share of the notes are left out of the query (BM25 gives them almost no weight, and scoring every note costs time). */
  commonShare: 0.5,
  /** Uninflected words in more notes than this share are matched exactly rather than as prefixes. */
  prefixShare: 0.1,
  /** Of the lexical score, this share depends on how many of the task's words the page holds (coverage), the rest on BM25 alone. */
  coverage: 0.5,
};

/** The FTS5 form of a term: a prefix query ("link"* finds links, linking), or the exact word (below). */
const prefixTerm = (t: Term) => (t.ngram ? t.fts : t.fts.length >= 3 ? `${ftsQuote(t.fts)}*` : ftsQuote(t.fts));

/**
 * What the ranking query asks for a term. A prefix merges the lists of every
 * word starting with it, which costs time in proportion to how common the
 * word is, and adds little for a word most notes hold anyway: so a common
 * uninflected word is matched exactly, an inflected one ("notes" → note*) or a
 * rarer one by prefix.
 */
function queryTerm(t: Term, df: number, notes: number): string {
  if (t.ngram) return t.fts;
  return t.fts !== t.word || df <= RANKING.prefixShare * notes ? prefixTerm(t) : ftsQuote(t.fts);
}

/** BM25 (higher is better) of the notes matching any of the query terms, best first. */
function bm25Any(db: Database, terms: string[], depth: number): Map<number, number> {
  if (!terms.length) return new Map();
  try {
    const rows = db
      .query(`SELECT rowid AS id, bm25(fts, ${FTS_WEIGHTS}) AS s FROM fts WHERE fts MATCH ? ORDER BY s LIMIT ?`)
      .all(terms.join(" OR "), depth) as { id: number; s: number }[];
    return new Map(rows.map((r) => [r.id, -r.s]));
  } catch {
    return new Map();
  }
}

// How many notes hold each term (as a prefix), per vault until the index changes: a count
// needs no scoring, but for a common word it still walks a long list, and agents repeat words.
const DF = {};

// prepare_context runs on the request thread as a series of statements (a count per word, two
// BM25 passes, one read per candidate): it gives the event loop a turn between them, so that
// other requests wait for one statement, not for the whole ranking (bench/abuse.ts --only heavy).
const nextTurn = () => new Promise<void>((r) => setImmediate(r));

async function documentFrequencies(vault: VaultContext, terms: Term[]): Promise<number[]> {
  const cache = indexMemo(vault, DF, () => new Map<string, number>());
  if (cache.size > 10_000) cache.clear();
  const q = vault.indexDb.query("SELECT count(*) AS n FROM fts WHERE fts MATCH ?");
  const out: number[] = [];
  for (const t of terms) {
    let n = cache.get(t.fts);
    if (n === undefined) {
      await nextTurn();
      try {
        n = (q.get(prefixTerm(t)) as { n: number }).n;
      } catch {
        n = 0;
      }
      cache.set(t.fts, n);
    }
    out.push(n);
  }
  return out;
}

/**
 * The query terms worth asking for: present somewhere and not in most notes;
 * when all present ones are common, the two rarest.
 */
function informative(terms: Term[], dfs: number[], notes: number): { terms: Term[]; query: string[] } {
  const present = terms.map((t, i) => ({ t, df: dfs[i]! })).filter((x) => x.df > 0);
  const rare = present.filter((x) => x.df <= RANKING.commonShare * notes);
  const kept = rare.length ? rare : present.sort((a, b) => a.df - b.df).slice(0, 2);
  return { terms: kept.map((x) => x.t), query: kept.map((x) => queryTerm(x.t, x.df, notes)) };
}

/** Coverage reads this much of a body at most: a word not in the first 64 KB of a huge page barely changes its coverage. */
const COVERAGE_CHARS = 65_536;

/**
 * Title and (the start of the) body of a candidate note, for coverage. One rowid lookup each; the n-gram
 * columns too when some term is a pair (about three characters there for each one of the text's runs).
 */
function candidateText(db: Database, id: number, pairs: boolean): PageText {
  if (!pairs) {
    const r = db.query("SELECT title, substr(body, 1, ?) AS body FROM fts WHERE rowid = ?").get(COVERAGE_CHARS, id) as { title: string; body: string } | null;
    return { text: r ? matchable(`${r.title}\n${r.body}`) : "", ng: "" };
  }
  const r = db
    .query("SELECT title, substr(body, 1, ?1) AS body, title_ng AS tng, substr(body_ng, 1, 3 * ?1) AS bng FROM fts WHERE rowid = ?2")
    .get(COVERAGE_CHARS, id) as { title: string; body: string; tng: string | null; bng: string | null } | null;
  return r ? { text: matchable(`${r.title}\n${r.body}`), ng: ngramTokens(r.tng, r.bng) } : { text: "", ng: "" };
}

/**
 * The task ranked by retrieve()'s hybrid (keyword and vector, fused and
 * re-scored as semantic_search and answer rank), when this vault has vectors
 * of the configured model; null when it has none (with why, when it tried).
 */
async function hybridRanking(vault: VaultContext, o: { task: string; keywords: string[]; signal?: AbortSignal }): Promise<{ notes: RetrievedNote[] } | { skipped: string } | null> {
  const model = embeddedModel(vault.indexDb);
  // No vectors yet: never start a vault-wide embedding from here (serve and `lettuce embed` build them).
  if (!model?.dim) return null;
  const sel = await selectEmbedder();
  if (!sel.provider || sel.provider.id !== model.id) return null;
  try {
    const r = await retrieve(SemanticService.for(vault), { query: o.task, keywords: o.keywords, limit: RANKING.depth, mode: "hybrid", signal: o.signal });
    return { notes: r.notes };
  } catch (e) {
    if (e instanceof ToolError) return { skipped: e.message };
    throw e;
  }
}

/** The words-only ranking: the task's BM25 plus half the keywords', each scaled by how many of the task's words the page holds. */
async function lexicalRanking(db: Database, task: { terms: Term[]; query: string[] }, keywords: { terms: Term[]; query: string[] }): Promise<Map<number, number>> {
  const lexical = bm25Any(db, task.query, RANKING.depth);
  await nextTurn();
  for (const [id, s] of bm25Any(db, keywords.query, RANKING.depth)) lexical.set(id, (lexical.get(id) ?? 0) + RANKING.keywordWeight * s);
  // Coverage: a page holding most of the task's (informative) words beats one repeating a few of them.
  const taskRes = matchersOf(task.terms);
  const keywordRes = matchersOf(keywords.terms);
  const pairs = hasPairs(task.terms) || hasPairs(keywords.terms);
  const kwShare = keywordRes.length ? RANKING.keywordWeight : 0;
  let read = 0;
  for (const [id, s] of lexical) {
    if (++read % 16 === 0) await nextTurn();
    const text = candidateText(db, id, pairs);
    const cov = (coverage(text, taskRes) + kwShare * coverage(text, keywordRes)) / (1 + kwShare);
    lexical.set(id, s * (1 - RANKING.coverage + RANKING.coverage * cov));
  }
  return lexical;
}

export interface Candidate {
  row: NoteRow;
  frontmatter: Record<string, unknown>;
  score: number;
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
  /** How many of the keywords' terms some page holds (0: none of the keywords matched anything). */
  keywordTermsFound: number;
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
  const notes = noteCount(db);
  const taskDf = await documentFrequencies(vault, taskTerms);
  // A pair is a piece of a clause, not a word: one the vault lacks (often one across two words) says
  // nothing while other pairs of the task are found, so pairs count as missing only when all are.
  const pairFound = taskTerms.some((t, i) => t.ngram && taskDf[i]! > 0);
  const missing = taskTerms.filter((t, i) => taskDf[i] === 0 && !(t.ngram && pairFound));
  const taskQuery = informative(taskTerms, taskDf, notes);
  const keywordQuery = informative(keywordTerms, await documentFrequencies(vault, keywordTerms), notes);
  await nextTurn();
  // With vectors, the ranking is retrieve()'s, the one every tool shares; without, the words' own.
  // The keywords as step 1 kept them: a word the task already has does not count twice.
  const hybrid = taskTerms.length || keywordTerms.length ? await hybridRanking(vault, { task: o.task, keywords: keywordTerms.map((t) => t.word), signal: o.signal }) : null;
  const fused = hybrid && "notes" in hybrid ? hybrid.notes : null;
  const base = fused ? new Map(fused.map((n) => [n.noteId, n.score])) : await lexicalRanking(db, taskQuery, keywordQuery);
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
  const vectorRank = new Map((fused ?? []).flatMap((n) => (n.vectorRank ? [[n.noteId, n.vectorRank] as const] : [])));

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
    candidates.push({ row, frontmatter: fm, score, vectorRank: vectorRank.get(id) ?? null, inbound: n, coLinked: 0, trust, fresh });
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
    ranking: fused ? "keyword+vector" : "keyword",
    ...(hybrid && "skipped" in hybrid ? { vectorSkipped: hybrid.skipped } : {}),
    taskTerms,
    keywordTerms,
    missing,
    keywordTermsFound: keywordQuery.terms.length,
    excludedByTrust,
  };
}
