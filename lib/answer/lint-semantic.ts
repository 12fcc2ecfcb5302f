// lint_semantic: the LLM reads the vault batch by batch (related pages
// together, see ./batches.ts) and reports contradictions, stale claims,
// concepts without a page, data gaps, open questions and sources to read
// next. Advisory: nothing is written. Every finding's kind and paths are
// checked (a path must be a page of the batch the model was shown).
//
// A big vault is many model calls, so reviews are cached per batch (keyed by
// the model and the batch's notes and their content hashes): a call reviews at
// most `maxBatches` new batches and reports the rest as to do; calling again
// continues, and a batch whose notes did not change is never asked twice.
import { createHash } from "node:crypto";
import type { ChatProvider } from "../providers/types";
import type { VaultContext } from "../vault-context";
import { planBatches, planNotes, type Batch } from "./batches";
import { chatJson } from "./chat-json";
import { contextBudget } from "./context";
import { noteTexts } from "./note-text";
import { LINT_SYSTEM, referenceBlock } from "./prompts";
import { pathKey } from "./validate";

export const FINDING_KINDS = ["contradiction", "stale-claim", "missing-page", "data-gap", "open-question", "suggested-source"] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];

export interface SemanticFinding {
  kind: FindingKind;
  paths: string[];
  message: string;
  suggestion: string;
}

export interface SemanticLintReport {
  findings: SemanticFinding[];
  total: number;
  offset: number;
  limit: number;
  /** True when every batch of the plan has been reviewed (else call again to continue). */
  complete: boolean;
  batches: { done: number; total: number };
  notes: { reviewed: number; total: number };
  /** Findings the model gave that failed validation (unknown kind, a path it was not shown, no message). */
  dropped: number;
}

export interface SemanticLintOptions {
  /** Only notes in this folder (or this note). */
  scope?: string;
  offset?: number;
  limit?: number;
  /** At most this many batches are sent to the model in this call (cached ones are free). */
  maxBatches?: number;
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
}

// Prompt version: part of every cache key, so that a changed prompt reviews again.
const PROMPT_VERSION = "1";
const EXCERPT_CHARS = 1_200;
const MAX_TEXT = 300;
const MAX_PATHS = 6;
const CONCURRENCY = 2;
const CACHE_BATCHES = 5_000;

const SYNONYMS: Record<string, FindingKind> = {
  contradiction: "contradiction",
  conflict: "contradiction",
  inconsistency: "contradiction",
  "stale-claim": "stale-claim",
  stale: "stale-claim",
  outdated: "stale-claim",
  "outdated-claim": "stale-claim",
  "missing-page": "missing-page",
  "missing-concept": "missing-page",
  "concept-without-page": "missing-page",
  "data-gap": "data-gap",
  gap: "data-gap",
  "missing-data": "data-gap",
  "open-question": "open-question",
  question: "open-question",
  "suggested-source": "suggested-source",
  source: "suggested-source",
};

export function normalizeKind(v: unknown): FindingKind | null {
  if (typeof v !== "string") return null;
  const k = v.trim().toLowerCase().replace(/[\s_]+/g, "-");
  return SYNONYMS[k] ?? SYNONYMS[k.replace(/s$/, "")] ?? null;
}

const clip = (s: string, n = MAX_TEXT) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

interface Review {
  findings: SemanticFinding[];
  dropped: number;
}

const caches = new WeakMap<VaultContext, Map<string, Review>>();
function cacheOf(vault: VaultContext): Map<string, Review> {
  let c = caches.get(vault);
  if (!c) caches.set(vault, (c = new Map()));
  return c;
}

function batchKey(chat: ChatProvider, b: Batch, excerpt: number): string {
  const h = createHash("sha256").update(`${PROMPT_VERSION}\0${chat.id}\0${excerpt}`);
  for (const n of b.notes) h.update(`\0${n.path}\0${n.hash}`);
  return h.digest("hex");
}

/** Check one reply's findings against the batch: known kind, a message, paths all among the pages shown. */
export function validateFindings(raw: unknown[], shown: string[]): Review {
  const byKey = new Map(shown.map((p) => [pathKey(p), p]));
  const findings: SemanticFinding[] = [];
  let dropped = 0;
  for (const f of raw.slice(0, 100)) {
    const o = f && typeof f === "object" ? (f as Record<string, unknown>) : {};
    const kind = normalizeKind(o.kind);
    const message = typeof o.message === "string" ? o.message.trim() : "";
    const rawPaths = Array.isArray(o.paths) ? o.paths : typeof o.paths === "string" ? [o.paths] : typeof o.path === "string" ? [o.path] : [];
    const paths = rawPaths.map((p) => (typeof p === "string" ? byKey.get(pathKey(p)) : undefined));
    // One path the model was not shown is enough to distrust the finding.
    if (!kind || !message || !paths.length || paths.some((p) => !p)) {
      dropped++;
      continue;
    }
    const unique = [...new Set(paths as string[])].slice(0, MAX_PATHS);
    findings.push({ kind, paths: unique, message: clip(message), suggestion: clip(typeof o.suggestion === "string" ? o.suggestion.trim() : "") });
  }
  return { findings, dropped };
}

async function reviewBatch(vault: VaultContext, chat: ChatProvider, b: Batch, signal?: AbortSignal): Promise<Review> {
  const texts = noteTexts(
    vault.indexDb,
    b.notes.map((n) => n.id),
  );
  const shown: string[] = [];
  const block = referenceBlock(
    b.notes.flatMap((n, i) => {
      const t = texts.get(n.id);
      if (!t) return [];
      shown.push(t.path);
      const body = t.body.length > EXCERPT_CHARS ? `${t.body.slice(0, EXCERPT_CHARS)}\n…(rest of the page not shown)` : t.body;
      return [
        {
          id: `N${i + 1}`,
          attrs: [
            ["path", t.path],
            ["title", t.title],
            ["modified", new Date(t.mtime).toISOString().slice(0, 10)],
            ["tags", t.tags.join(", ") || "none"],
          ] as [string, string][],
          text: body,
        },
      ];
    }),
  );
  if (!shown.length) return { findings: [], dropped: 0 };
  const raw = await chatJson(chat, {
    what: "the wiki review",
    messages: [
      { role: "system", content: LINT_SYSTEM(block) },
      { role: "user", content: `${block.text}\n\nReview these ${shown.length} pages. Today is ${new Date().toISOString().slice(0, 10)}.` },
    ],
    maxTokens: 1_500,
    signal,
    read: (o) => (Array.isArray(o.findings) ? o.findings : null),
  });
  return validateFindings(raw, shown);
}

export async function lintSemantic(vault: VaultContext, chat: ChatProvider, o: SemanticLintOptions = {}): Promise<SemanticLintReport> {
  const notes = planNotes(vault.indexDb, o.scope);
  const budget = contextBudget();
  const excerpt = Math.min(EXCERPT_CHARS, Math.floor(budget / 4));
  const batches = planBatches(vault.indexDb, notes, budget, excerpt);
  const cache = cacheOf(vault);
  const keys = batches.map((b) => batchKey(chat, b, excerpt));
  const reviews: (Review | undefined)[] = keys.map((k) => cache.get(k));
  const todo = batches.map((_, i) => i).filter((i) => !reviews[i]);
  const budgetBatches = o.maxBatches ?? Infinity;
  const run = todo.slice(0, budgetBatches);
  let done = batches.length - todo.length;
  o.onProgress?.(done, batches.length);
  // A small pool: a local model serves one request at a time anyway, a hosted one a few.
  let next = 0;
  const worker = async () => {
    while (next < run.length) {
      const i = run[next++]!;
      const r = await reviewBatch(vault, chat, batches[i]!, o.signal);
      reviews[i] = r;
      cache.set(keys[i]!, r);
      if (cache.size > CACHE_BATCHES) cache.delete(cache.keys().next().value!);
      o.onProgress?.(++done, batches.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, run.length) }, worker));

  const all: SemanticFinding[] = [];
  const seen = new Set<string>();
  let dropped = 0;
  let reviewed = 0;
  reviews.forEach((r, i) => {
    if (!r) return;
    reviewed += batches[i]!.notes.length;
    dropped += r.dropped;
    for (const f of r.findings) {
      const key = `${f.kind}\0${[...f.paths].sort().join("\0")}\0${f.message.toLowerCase()}`;
      if (seen.has(key)) continue;
      seen.add(key);
      all.push(f);
    }
  });
  const offset = o.offset ?? 0;
  const limit = o.limit ?? 20;
  return {
    findings: all.slice(offset, offset + limit),
    total: all.length,
    offset,
    limit,
    complete: reviews.every((r) => r),
    batches: { done: reviews.filter((r) => r).length, total: batches.length },
    notes: { reviewed, total: notes.length },
    dropped,
  };
}
