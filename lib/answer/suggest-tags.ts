// suggest_tags: tags for the notes lint flags (untagged-note,
// missing-required-tag), from the chat model, in batches of a few notes.
// Suggestions prefer the vault's own tags: the model is shown them with their
// counts, and in code a new tag within a typo's distance of an existing one
// becomes that one. Where index.md declares a vocabulary (lint.tags), a tag
// outside it is dropped (it would be an unknown-tag warning). Advisory:
// nothing is written.
import type { Database } from "bun:sqlite";
import { boundedDistance, typoBudget } from "../hygiene/fuzzy";
import { lintPage } from "../hygiene/lint";
import { matchesAny, parseLintConfig } from "../hygiene/lint-config";
import { findTagTypos } from "../hygiene/lint-tags";
import type { ChatProvider } from "../providers/types";
import { tagCounts } from "../retrieval/tags";
import { chatJson } from "./chat-json";
import { indexFrontmatter, noteIdsByPath, noteTexts } from "./note-text";
import { referenceBlock, TAGS_SYSTEM } from "./prompts";
import { pathKey } from "./validate";
import { withoutTrailing } from "../text-ends";

export interface TagSuggestion {
  path: string;
  /** Existing tags first. */
  suggestedTags: string[];
  /** Which of suggestedTags no note carries yet. */
  newTags: string[];
  rationale: string;
}

export interface SuggestTagsOptions {
  scope?: string;
  offset?: number;
  limit?: number;
  signal?: AbortSignal;
}

const BATCH_NOTES = 8;
const EXCERPT_CHARS = 800;
const VOCABULARY = 300;
const MAX_TAGS = 5;
const TAG_SHAPE = /^[\p{L}\p{M}\p{N}_\-/]+$/u;

interface Candidate {
  path: string;
  /** What lint says the note lacks ("Missing a required tag …"), or "" for an untagged note. */
  needs: string[];
}

/** The notes lint flags for tags, in lint's order, each once. */
export function tagCandidates(db: Database, scope = ""): Candidate[] {
  const out = new Map<string, Candidate>();
  const findings = [...lintPage(db, { rule: "missing-required-tag", scope }, 0, Infinity).items, ...lintPage(db, { rule: "untagged-note", scope }, 0, Infinity).items];
  for (const f of findings) {
    let c = out.get(f.path);
    if (!c) out.set(f.path, (c = { path: f.path, needs: [] }));
    if (f.rule === "missing-required-tag") c.needs.push(f.message);
  }
  return [...out.values()];
}

export interface TagVocabulary {
  /** Lower-cased tag → the tag as the vault writes it. */
  existing: Map<string, string>;
  /** An existing tag lint calls a typo (lower-cased) → the much more common tag it mistypes. */
  typos: Map<string, string>;
  /** index.md's lint.tags patterns, or null when the vault declares none. */
  allowed: string[] | null;
  /** For the prompt: "tag (count)", most used first. */
  shown: string;
}

export function tagVocabulary(db: Database): TagVocabulary {
  const counts = tagCounts(db).items;
  const existing = new Map(counts.map((t) => [t.tag.toLowerCase(), t.tag]));
  const typos = new Map([...findTagTypos(counts.map((t) => ({ tag: t.tag, lc: t.tag.toLowerCase(), count: t.count })))].map(([lc, s]) => [lc, s.tag]));
  const allowed = parseLintConfig(indexFrontmatter(db)).allowed;
  const shown = counts
    .slice(0, VOCABULARY)
    .map((t) => `${t.tag} (${t.count})`)
    .join(", ");
  const declared = allowed ? ` Declared vocabulary (lint.tags in index.md): ${allowed.join(", ")}.` : "";
  return { existing, typos, allowed, shown: shown + declared };
}

/**
 * One suggested tag, checked: '#' and spaces trimmed, Obsidian's tag shape, not
 * all digits; an existing tag in any case, or one a typo away, is the existing
 * one; outside a declared vocabulary, nothing.
 */
export function checkTag(raw: unknown, vocab: TagVocabulary): string | null {
  if (typeof raw !== "string") return null;
  const t = withoutTrailing(raw.normalize("NFC").trim().replace(/^#+/, ""), "/").replace(/^\/+/, "");
  if (!t || t.length > 60 || !TAG_SHAPE.test(t) || /^[\d/]+$/.test(t)) return null;
  const lc = t.toLowerCase();
  let tag = vocab.existing.get(lc) ?? null;
  if (!tag) {
    const budget = typoBudget(lc.length);
    let best: { tag: string; d: number } | null = null;
    if (budget > 0) {
      for (const [k, v] of vocab.existing) {
        if (Math.abs(k.length - lc.length) > budget) continue;
        const d = boundedDistance(lc, k, budget);
        if (d <= budget && (!best || d < best.d)) best = { tag: v, d };
      }
    }
    tag = best?.tag ?? t;
  }
  // An existing tag that lint itself calls a typo ("gardenning" on one note) is not worth spreading.
  tag = vocab.typos.get(tag.toLowerCase()) ?? tag;
  if (vocab.allowed && !matchesAny(tag.toLowerCase(), vocab.allowed)) return null;
  return tag;
}

async function suggestBatch(db: Database, chat: ChatProvider, batch: Candidate[], vocab: TagVocabulary, signal?: AbortSignal): Promise<TagSuggestion[]> {
  const ids = noteIdsByPath(
    db,
    batch.map((c) => c.path),
  );
  const texts = noteTexts(db, [...ids.values()]);
  const shown = batch.filter((c) => ids.has(c.path) && texts.has(ids.get(c.path)!));
  const block = referenceBlock(
    shown.map((c, i) => {
      const t = texts.get(ids.get(c.path)!)!;
      return {
        id: `N${i + 1}`,
        attrs: [
          ["path", t.path],
          ["title", t.title],
          ["current tags", t.tags.join(", ") || "none"],
          ...c.needs.map((n): [string, string] => ["must", n]),
        ] as [string, string][],
        text: t.body.length > EXCERPT_CHARS ? `${t.body.slice(0, EXCERPT_CHARS)}…` : t.body,
      };
    }),
  );
  const raw = shown.length
    ? await chatJson(chat, {
        what: "the tag suggestions",
        messages: [
          { role: "system", content: TAGS_SYSTEM(block, vocab.shown, vocab.allowed !== null) },
          { role: "user", content: `${block.text}\n\nSuggest tags for each of these ${shown.length} notes.` },
        ],
        maxTokens: 200 + 120 * shown.length,
        signal,
        read: (o) => (Array.isArray(o.suggestions) ? o.suggestions : null),
      })
    : [];
  const byKey = new Map(shown.map((c) => [pathKey(c.path), c.path]));
  const got = new Map<string, { tags: string[]; rationale: string }>();
  for (const s of raw.slice(0, 100)) {
    const o = s && typeof s === "object" ? (s as Record<string, unknown>) : {};
    const path = typeof o.path === "string" ? byKey.get(pathKey(o.path)) : undefined;
    if (!path || got.has(path)) continue; // a path it was not shown, or a second answer for one note
    const current = new Set(texts.get(ids.get(path)!)!.tags.map((t) => t.toLowerCase()));
    const list = Array.isArray(o.suggestedTags) ? o.suggestedTags : typeof o.suggestedTags === "string" ? o.suggestedTags.split(/[,\s]+/) : [];
    const tags: string[] = [];
    for (const r of list.slice(0, 20)) {
      const t = checkTag(r, vocab);
      if (t && !current.has(t.toLowerCase()) && !tags.some((x) => x.toLowerCase() === t.toLowerCase())) tags.push(t);
    }
    const rationale = typeof o.rationale === "string" ? o.rationale.trim().slice(0, 300) : "";
    got.set(path, { tags: tags.slice(0, MAX_TAGS), rationale });
  }
  return batch.map((c) => {
    const g = got.get(c.path);
    if (!g || !g.tags.length) return { path: c.path, suggestedTags: [], newTags: [], rationale: g?.rationale ? `No usable tag was suggested (${g.rationale})` : "No usable tag was suggested" };
    const isNew = (t: string) => !vocab.existing.has(t.toLowerCase());
    const ordered = [...g.tags.filter((t) => !isNew(t)), ...g.tags.filter(isNew)];
    return { path: c.path, suggestedTags: ordered, newTags: ordered.filter(isNew), rationale: g.rationale };
  });
}

/** Suggestions for one page of the flagged notes (every note of the page gets an entry, possibly empty). */
export async function suggestTags(db: Database, chat: ChatProvider, o: SuggestTagsOptions = {}): Promise<TagSuggestion[]> {
  const offset = o.offset ?? 0;
  const page = tagCandidates(db, o.scope).slice(offset, offset + (o.limit ?? 20));
  if (!page.length) return [];
  const vocab = tagVocabulary(db);
  const out: TagSuggestion[] = [];
  for (let i = 0; i < page.length; i += BATCH_NOTES) out.push(...(await suggestBatch(db, chat, page.slice(i, i + BATCH_NOTES), vocab, o.signal)));
  return out;
}
