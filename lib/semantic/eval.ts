// eval: score retrieval (and, with an LLM, answer faithfulness) against the
// vault's own question set, eval/questions.jsonl.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ToolError } from "../errors";
import type { ChatProvider } from "../providers/types";
import { parseJsonObject } from "./expand";
import { retrieve } from "./retrieve";
import type { SemanticService } from "./service";
import { toToolError } from "./tool-error";

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
    text = readFileSync(join(root, EVAL_FILE), "utf8");
  } catch {
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

/** Top-k paths for a question, ranked as semantic_search's hybrid mode ranks them (BM25 alone without an embeddings provider). */
async function topPaths(svc: SemanticService, question: string, k: number, hybrid: boolean): Promise<string[]> {
  return (await retrieve(svc, { query: question, limit: k, mode: hybrid ? "hybrid" : "keyword" })).notes.map((n) => n.path);
}

/** Answer from the retrieved notes only, and check: cites only them, and says every must_contain span. */
async function faithful(svc: SemanticService, chat: ChatProvider, q: EvalQuestion, retrieved: string[]): Promise<boolean> {
  const bodies = retrieved.map((p) => {
    const r = svc.vault.indexDb.query("SELECT f.body AS body FROM notes n JOIN fts f ON f.rowid = n.id WHERE n.path = ?").get(p) as { body: string } | null;
    return `### ${p}\n${(r?.body ?? "").slice(0, 3000)}`;
  });
  let reply: string;
  try {
    reply = await chat.chat(
      [
        {
          role: "system",
          content:
            'Answer the question using only the notes given. Reply with one JSON object: {"answer": "...", "citations": ["path of each note you used"]}. If the notes do not answer it, say so in the answer and cite nothing.',
        },
        { role: "user", content: `Question: ${q.question}\n\nNotes:\n${bodies.join("\n\n")}` },
      ],
      { json: true, temperature: 0, maxTokens: 600 },
    );
  } catch (e) {
    throw toToolError(e);
  }
  const j = parseJsonObject(reply);
  const answer = typeof j?.answer === "string" ? j.answer : "";
  const citations = Array.isArray(j?.citations) ? j.citations.filter((c): c is string => typeof c === "string") : [];
  const shown = new Set(retrieved.map(key));
  const citesOnlyShown = citations.every((c) => shown.has(key(c)));
  const saysAll = q.must_contain.every((s) => answer.toLowerCase().includes(s.toLowerCase()));
  return answer.length > 0 && citesOnlyShown && saysAll;
}

export async function runEval(svc: SemanticService, k: number): Promise<EvalReport> {
  const questions = readQuestions(svc.vault.root);
  const hybrid = await svc.hasEmbedder();
  const chat = (await svc.hasChat()) ? await svc.chat() : null;
  const perQuestion: QuestionScore[] = [];
  for (const q of questions) {
    const retrieved = await topPaths(svc, q.question, k, hybrid);
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
      faithful: chat ? await faithful(svc, chat, q, retrieved) : null,
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
