// The context an answer is synthesised from: the chosen pages' passages, best
// first, within a character budget (the model's window is finite, and an
// agent's money too), then each page's passages in document order. What a page
// contributes here is exactly what its quotes are checked against.
import { referenceBlock, type ReferenceBlock, type ReferenceItem } from "./prompts";
import type { ContextPage, ContextPassage } from "./validate";
import { sliceWhole } from "../text-cut";
import { envNumber } from "../env-number";

const DEFAULT_BUDGET = 16_000;
// One passage never takes more than this (stored passages are ≤ 8000 characters; split ones far less).
const MAX_PASSAGE_CHARS = 3_000;

/** LETTUCE_LLM_CONTEXT_CHARS (2,000–400,000), else 16,000 characters (about 4-5k tokens). */
export function contextBudget(env: Record<string, string | undefined> = process.env): number {
  return envNumber("LETTUCE_LLM_CONTEXT_CHARS", DEFAULT_BUDGET, { min: 2_000, max: 400_000, integer: true }, env);
}

export interface CandidatePage {
  path: string;
  title: string;
  /** Best first. */
  passages: ContextPassage[];
}

/**
 * Take passages round-robin, every page's best first, then every page's second,
 * … while they fit the budget. A page none of whose passages fit is left out
 * (and so is not in `retrieved`).
 */
export function buildContext(candidates: CandidatePage[], budget = contextBudget()): ContextPage[] {
  const taken = candidates.map(() => [] as ContextPassage[]);
  let used = 0;
  const depth = Math.max(0, ...candidates.map((c) => c.passages.length));
  for (let round = 0; round < depth; round++) {
    candidates.forEach((c, i) => {
      const p = c.passages[round];
      if (!p || !p.text.trim()) return;
      const text = p.text.length > MAX_PASSAGE_CHARS ? sliceWhole(p.text, MAX_PASSAGE_CHARS) : p.text;
      const cost = text.length + c.path.length + c.title.length + p.heading.length + 40;
      if (used + cost > budget) return;
      used += cost;
      taken[i]!.push(text === p.text ? p : { ...p, text });
    });
  }
  const out: ContextPage[] = [];
  candidates.forEach((c, i) => {
    if (taken[i]!.length) out.push({ path: c.path, title: c.title, passages: taken[i]!.sort((a, b) => a.ord - b.ord) });
  });
  return out;
}

/** The context as labelled, delimited reference data: one item per passage, with its page's path and title and its heading. */
export function contextBlock(pages: ContextPage[]): ReferenceBlock {
  const items: ReferenceItem[] = [];
  for (const p of pages) {
    for (const s of p.passages) {
      items.push({
        id: `S${items.length + 1}`,
        attrs: [
          ["path", p.path],
          ["title", p.title],
          ["heading", s.heading || "(top of the note)"],
        ],
        text: s.text,
      });
    }
  }
  return referenceBlock(items);
}
