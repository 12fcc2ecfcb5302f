// eval: score retrieval (and, with an LLM, answer faithfulness) against the
// vault's own question set, eval/questions.jsonl. Faithfulness goes through
// answer's own synthesis and validation (lib/answer), so that it scores what
// the answer tool does.
import { ToolError } from "../errors";
import { readVaultText } from "../vault/read-file";
import { synthesize } from "./answer";
import { buildContext } from "./context";
import { foldText } from "./validate";
import type { ChatProvider } from "../providers/types";
import { retrieve, type RetrievedNote } from "../semantic/retrieve";
import type { SemanticService } from "../semantic/service";

export const EVAL_FILE = "eval/questions.jsonl";

export interface EvalQuestion {
  question: string;
  expected_paths: string[];
  must_contain: string[];
}

export interface QuestionScore {
  question: string;
  expected: string[];
  retrieved: string[];
  recall: number;
  precision: number;
  reciprocalRank: number;
  hit: boolean;
  faithful: boolean | null;
}

export interface EvalReport {
  k: number;
  count: number;
  retrieval: "hybrid" | "keyword";
  recallAtK: number;
  precisionAtK: number;
  mrr: number;
  hitRate: number;
  faithfulnessRate: number | null;
  perQuestion: QuestionScore[];
}

const key = (p: string) => (/\.md$/i.test(p) ? p : `${p}.md`).toLowerCase();

export function readQuestions(root: string): EvalQuestion[] {
  let text: string;
  try {
    text = readVaultText(root, EVAL_FILE); // never through a symlink: a link out of the vault would echo that file's lines
  } catch (e) {
    if (e instanceof ToolError) throw e;
    throw new ToolError(
      "note-not-found",
      `No ${EVAL_FILE} in the vault. Write one JSON object per line: {"question": "…", "expected_paths": ["Folder/Note.md"], "must_contain": ["a phrase the answer must hold"]}`,
    );
  }
  const out: EvalQuestion[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim()) return;
    let j: unknown;
    try {
      j = JSON.parse(line);
    } catch {
      throw new ToolError("invalid-input", `${EVAL_FILE} line ${i + 1} is not JSON`);
    }
    const o = j as Record<string, unknown>;
    if (!o || typeof o.question !== "string" || !o.question.trim()) throw new ToolError("invalid-input", `${EVAL_FILE} line ${i + 1} has no "question"`);
    const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : typeof v === "string" ? [v] : []);
    out.push({ question: o.question, expected_paths: strings(o.expected_paths), must_contain: strings(o.must_contain) });
  });
  if (!out.length) throw new ToolError("invalid-input", `${EVAL_FILE} holds no questions`);
  return out;
}

/** Top-k notes for a question, with their passages: hybrid retrieval when there is an embeddings provider, BM25 otherwise. */
async function retrieveFor(svc: SemanticService, question: string, k: number, hybrid: boolean): Promise<RetrievedNote[]> {
  return (await retrieve(svc, { query: question, limit: k, mode: hybrid ? "hybrid" : "keyword", passagesPerNote: 3 })).notes;
}

/**
 * Answer from the retrieved notes only, through answer's own synthesis, and
 * check: the model cited only pages it was shown (none of its citations had to
 * be dropped) and the answer says every must_contain span.
 */
async function faithful(chat: ChatProvider, q: EvalQuestion, notes: RetrievedNote[], signal?: AbortSignal): Promise<boolean> {
  const pages = buildContext(notes.map((n) => ({ path: n.path, title: n.title, passages: n.passages })));
  if (!pages.length) return false;
  const { reply, validated } = await synthesize(chat, q.question, pages, signal);
  const said = foldText(reply.answer).text;
  return validated.dropped.citations === 0 && q.must_contain.every((s) => said.includes(foldText(s).text));
}

/**
 * `signal`: the caller's request; a dropped caller stops the run between questions (each may cost model calls).
 * `questions`: read already (the CLI reads them before it embeds the vault, which can take minutes).
 */
export async function runEval(svc: SemanticService, k: number, o: { signal?: AbortSignal; questions?: EvalQuestion[] } = {}): Promise<EvalReport> {
  const { signal } = o;
  const questions = o.questions ?? readQuestions(svc.vault.root);
  const hybrid = await svc.hasEmbedder();
  const chat = (await svc.hasChat()) ? await svc.chat() : null;
  const perQuestion: QuestionScore[] = [];
  for (const q of questions) {
    signal?.throwIfAborted();
    const notes = await retrieveFor(svc, q.question, k, hybrid);
    const retrieved = notes.map((n) => n.path);
    const expected = new Set(q.expected_paths.map(key));
    const ranks = retrieved.map((p, i) => (expected.has(key(p)) ? i + 1 : 0)).filter((r) => r > 0);
    const hits = ranks.length;
    perQuestion.push({
      question: q.question,
      expected: q.expected_paths,
      retrieved,
      recall: expected.size ? hits / expected.size : 0,
      precision: hits / k,
      reciprocalRank: ranks.length ? 1 / ranks[0]! : 0,
      hit: hits > 0,
      faithful: chat ? await faithful(chat, q, notes, signal) : null,
    });
  }
  const mean = (f: (q: QuestionScore) => number) => Math.round((perQuestion.reduce((s, q) => s + f(q), 0) / perQuestion.length) * 1e4) / 1e4;
  return {
    k,
    count: perQuestion.length,
    retrieval: hybrid ? "hybrid" : "keyword",
    recallAtK: mean((q) => q.recall),
    precisionAtK: mean((q) => q.precision),
    mrr: mean((q) => q.reciprocalRank),
    hitRate: mean((q) => (q.hit ? 1 : 0)),
    faithfulnessRate: chat ? mean((q) => (q.faithful ? 1 : 0)) : null,
    perQuestion,
  };
}
