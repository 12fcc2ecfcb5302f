// The two retrieval test sets as Lettuce vaults (one note per document), kept
// under the temp dir between runs so that their embeddings (in each vault's
// .lettuce/embeddings.db) are computed once.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { gunzipSync } from "node:zlib";

const CORPORA = resolve(import.meta.dir, "../../../shared/corpora");
export const BENCH_CACHE = process.env.LETTUCE_BENCH_CACHE ?? join(tmpdir(), "lettuce-bench");

export type QuestionKind = "keyword" | "paraphrase" | "detail";

export interface Query {
  id: string;
  text: string;
  relevant: Set<string>;
  /** Our own question sets: what kind of question, and which fixed half it belongs to. */
  kind?: QuestionKind;
  half?: "tune" | "report";
}

export interface RetrievalSet {
  name: string;
  vault: string;
  queries: Query[];
  /** Note path to document id. */
  docOf: (path: string) => string;
}

function writeIfMissing(file: string, content: string): void {
  if (existsSync(file)) return;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
}

/**
 * BEIR SciFact: 5,183 abstracts as `<id>.md` ("# title" then the abstract); the 300 test
 * queries (what is reported), or the 809 train queries (what fusion is tuned on).
 */
export function scifact(split: "test" | "train" = "test"): RetrievalSet {
  const dir = join(CORPORA, "beir-scifact");
  const vault = join(BENCH_CACHE, "scifact");
  const docs = gunzipSync(readFileSync(join(dir, "corpus.jsonl.gz")))
    .toString()
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { _id: string; title: string; text: string });
  for (const d of docs) writeIfMissing(join(vault, `${d._id}.md`), `# ${d.title}\n\n${d.text}\n`);
  const texts = new Map(
    readFileSync(join(dir, "queries.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { _id: string; text: string })
      .map((q) => [q._id, q.text]),
  );
  const rel = new Map<string, Set<string>>();
  for (const line of readFileSync(join(dir, `qrels/${split}.tsv`), "utf8").trim().split("\n").slice(1)) {
    const [q, d, score] = line.split("\t");
    if (Number(score) <= 0) continue;
    if (!rel.has(q!)) rel.set(q!, new Set());
    rel.get(q!)!.add(d!);
  }
  const queries = [...rel].map(([id, relevant]) => ({ id, text: texts.get(id)!, relevant }));
  return { name: `BEIR SciFact (${split}, ${queries.length} queries)`, vault, queries, docOf: (p) => p.replace(/\.md$/, "") };
}

/** Anthropic docs QA: 232 doc chunks as notes `<page>/<anchor>.md`; 100 questions with their correct chunks. */
export function anthropicDocs(): RetrievalSet {
  const dir = join(CORPORA, "anthropic-docs-qa");
  const vault = join(BENCH_CACHE, "anthropic-docs");
  const chunks = JSON.parse(readFileSync(join(dir, "data/anthropic_docs.json"), "utf8")) as { chunk_link: string; chunk_heading: string; text: string }[];
  const pathOf = (link: string) => {
    const u = new URL(link);
    const page = u.pathname.replace(/^\/en\/docs\//, "").replace(/^\/+|\/+$/g, "") || "index";
    return `${page}/${u.hash.slice(1) || "top"}.md`;
  };
  for (const c of chunks) {
    const body = c.text.startsWith(c.chunk_heading) ? c.text.slice(c.chunk_heading.length).trimStart() : c.text;
    writeIfMissing(join(vault, pathOf(c.chunk_link)), `# ${c.chunk_heading}\n\n${body}\n`);
  }
  const qs = JSON.parse(readFileSync(join(dir, "evaluation/docs_evaluation_dataset.json"), "utf8")) as { id: string; question: string; correct_chunks: string[] }[];
  const queries = qs.map((q) => ({ id: q.id, text: q.question, relevant: new Set(q.correct_chunks.map(pathOf)) }));
  return { name: "Anthropic docs QA (100 questions, 232 chunks)", vault, queries, docOf: (p) => p };
}

/** Copy a vault's Markdown notes (not its attachments: retrieval reads only notes) under BENCH_CACHE, once. */
export function copyNotes(from: string, to: string): void {
  const walk = (rel: string) => {
    for (const e of readdirSync(join(from, rel), { withFileTypes: true })) {
      if (e.name.startsWith(".")) continue;
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(r);
      else if (e.name.endsWith(".md") && !existsSync(join(to, r))) {
        mkdirSync(dirname(join(to, r)), { recursive: true });
        copyFileSync(join(from, r), join(to, r));
      }
    }
  };
  walk("");
}

/**
 * One of our own question sets (bench/data/*.jsonl): {id, kind, half, question, expected}
 * over a vault of ../shared/corpora, written by reading the pages. `half` is the fixed
 * split: fusion and ranking are tuned on "tune" and reported on "report". `corpus`: the
 * corpus folder the vault copies, or several, each into a folder of the vault.
 */
function questionSet(name: string, corpus: string | { from: string; into: string }[], data: string, cacheName: string, docOf: (path: string) => string = (p) => p): RetrievalSet {
  const vault = join(BENCH_CACHE, cacheName);
  for (const c of typeof corpus === "string" ? [{ from: corpus, into: "" }] : corpus) copyNotes(join(CORPORA, c.from), join(vault, c.into));
  const queries = readFileSync(resolve(import.meta.dir, "../data", data), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { id: string; kind: QuestionKind; half: "tune" | "report"; question: string; expected: string[] })
    .map((q) => ({ id: q.id, text: q.question, relevant: new Set(q.expected), kind: q.kind, half: q.half }));
  return { name, vault, queries, docOf };
}

/** Obsidian Help (en/, 173 notes): bench/data/obsidian-help.jsonl. */
export function obsidianHelp(): RetrievalSet {
  return questionSet("Obsidian Help", "obsidian-help/en", "obsidian-help.jsonl", "obsidian-help");
}

/** A path in a vault that holds Obsidian Help's en/ beside other notes, as the question sets name pages (only en/'s can be answers). */
const enPage = (p: string) => (p.startsWith("en/") ? p.slice(3) : `(outside en/) ${p}`);

/**
 * The same questions over the whole obsidian-help folder (568 notes): en/ beside its 364 release
 * notes and the 31-note Sandbox vault, which name the same features in other words. Only en/'s
 * pages count as answers: a release note or a Sandbox page in the top 5 is a miss.
 */
export function obsidianHelpAll(): RetrievalSet {
  return questionSet("Obsidian Help with its release notes and Sandbox", "obsidian-help", "obsidian-help.jsonl", "obsidian-help-all", enPage);
}

/**
 * The same questions over a large vault: Obsidian Help's en/ (as en/) beside the Obsidian Hub
 * community vault (as hub/, 6,571 notes about plugins, themes and workflows: other pages on the
 * same subjects). Only en/'s pages count as answers.
 */
export function obsidianHelpInHub(): RetrievalSet {
  const corpora = [
    { from: "obsidian-help/en", into: "en" },
    { from: "obsidian-hub", into: "hub" },
  ];
  return questionSet("Obsidian Help inside Obsidian Hub", corpora, "obsidian-help.jsonl", "obsidian-help-hub", enPage);
}

/** The D&D 5e SRD wiki (1,028 notes, with near-duplicate (Alt) folders): bench/data/srd-wiki.jsonl. */
export function srdWiki(): RetrievalSet {
  return questionSet("SRD wiki", "dnd-srd-wiki", "srd-wiki.jsonl", "srd-wiki");
}

/** nDCG@k with binary relevance (trec_eval's ndcg_cut). */
export function ndcg(ranked: string[], relevant: Set<string>, k: number): number {
  let dcg = 0;
  ranked.slice(0, k).forEach((d, i) => {
    if (relevant.has(d)) dcg += 1 / Math.log2(i + 2);
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(k, relevant.size); i++) ideal += 1 / Math.log2(i + 2);
  return ideal ? dcg / ideal : 0;
}

export function recall(ranked: string[], relevant: Set<string>, k: number): number {
  return relevant.size ? ranked.slice(0, k).filter((d) => relevant.has(d)).length / relevant.size : 0;
}

export function precision(ranked: string[], relevant: Set<string>, k: number): number {
  return ranked.slice(0, k).filter((d) => relevant.has(d)).length / k;
}

/** Reciprocal rank of the first relevant document within the top k. */
export function rr(ranked: string[], relevant: Set<string>, k: number): number {
  const i = ranked.slice(0, k).findIndex((d) => relevant.has(d));
  return i === -1 ? 0 : 1 / (i + 1);
}
