// The reads that run in the vault's read workers (./pool.ts), one typed function each: what a tool or
// page calls instead of the engine function, to keep the event loop free while it runs.
import type { WikiHealth } from "../hygiene/health";
import type { Finding, LintFilter, Severity } from "../hygiene/lint";
import type { Rule } from "../hygiene/lint-config";
import type { DatabaseSchema, QueryInput } from "../bases/query";
import type { LinkSuggestion } from "../hygiene/suggest-links";
import type { SplitJob, SplitResult } from "../semantic/split-notes";
import type { KeywordScoresAsk } from "../semantic/keyword-scores";
import type { KeywordNote } from "../semantic/keyword-passages";
import type { RetrievalMode } from "../semantic/retrieve";
import type { ContextPassage } from "../answer/validate";
import type { PackedVectors } from "../semantic/pair-jobs";
import type { NoteReadPlan } from "../retrieval/note-read";
import type { TagCount } from "../retrieval/tags";
import type { PageMode, PagePlan, PlannedPage } from "../workspace/page-build";
import type { NoteClass, Siblings } from "../workspace/databases";
import type { TitleMatch } from "../workspace/title-cache";
import type { VaultContext } from "../vault-context";
import type { NoteSource, PackedChanges, PackedLinkLines } from "../write/big-note-links";
import { JsonText, type WireText } from "./json-text";
import type { JournalDiff } from "../changes/diff";
import type { GraphAsk } from "../render/graph-draw";
import type { DrawGraph } from "../web/graph-wire";
import type { NoteListing, NotePage } from "../retrieval/notes";
import { readPool } from "./pool";

export interface HygieneReport {
  health: WikiHealth;
  rules: { rule: Rule; severity: Severity; count: number; items: Finding[] }[];
}

/**
 * The offloaded reads. search, linkGraph and lint answer the tool's whole
 * result as JsonText ({items, total, offset, limit}, the LinkGraph, a lint
 * page); health answers the engine function's own object.
 */
export const offloaded = {
  search: async (vault: VaultContext, query: string, limit: number, offset: number, signal?: AbortSignal) =>
    new JsonText(await readPool(vault).run<WireText>({ kind: "search", query, limit, offset }, signal)),
  linkGraph: async (vault: VaultContext, center: string, depth: number, maxNodes: number, signal?: AbortSignal) =>
    new JsonText(await readPool(vault).run<WireText>({ kind: "graph", center, depth, maxNodes }, signal)),
  lint: async (vault: VaultContext, filter: LintFilter, offset: number, limit: number, signal?: AbortSignal) =>
    new JsonText(await readPool(vault).run<WireText>({ kind: "lint", filter, offset, limit }, signal)),
  health: (vault: VaultContext, signal?: AbortSignal) => readPool(vault).run<WikiHealth>({ kind: "health" }, signal),
  hygieneReport: (vault: VaultContext, perRule: number) => readPool(vault).run<HygieneReport>({ kind: "hygieneReport", perRule }),
  queryDatabase: async (vault: VaultContext, input: QueryInput, signal?: AbortSignal) =>
    new JsonText(await readPool(vault).run<WireText>({ kind: "queryDatabase", root: vault.root, input }, signal)),
  databaseSchema: (vault: VaultContext, databaseId: string, signal?: AbortSignal) =>
    readPool(vault).run<DatabaseSchema>({ kind: "databaseSchema", root: vault.root, databaseId }, signal),
  titleMatches: (vault: VaultContext, query: string, limit: number, signal?: AbortSignal) =>
    readPool(vault).run<TitleMatch[]>({ kind: "titleMatches", query, limit }, signal),
  tagCounts: (vault: VaultContext, limit: number, offset: number, signal?: AbortSignal) =>
    readPool(vault).run<{ items: TagCount[]; total: number }>({ kind: "tagCounts", limit, offset }, signal),
  databaseSiblings: (vault: VaultContext, notePath: string, cls: NoteClass, limit: number, signal?: AbortSignal) =>
    readPool(vault).run<Siblings>({ kind: "databaseSiblings", root: vault.root, notePath, cls, limit }, signal),
  /** Page `page` of the digest resource (lib/digest/map.ts), built and kept in the worker. */
  digestPage: (vault: VaultContext, cursor: string, vaultName: string, page: number) =>
    readPool(vault).run<{ text: string | null; pages: number }>({ kind: "digest", root: vault.root, cursor, vaultName, page }),
  /** A page of note summaries: a folder's, a tag's, or the newest (lib/retrieval/notes.ts). */
  notePage: (vault: VaultContext, of: NoteListing, limit: number, offset: number, signal?: AbortSignal) =>
    readPool(vault).run<NotePage>({ kind: "notePage", of, limit, offset }, signal),
  /** The web UI's graph picture (lib/render/graph-draw.ts), kept in the worker until the index changes. */
  drawGraph: (vault: VaultContext, ask: GraphAsk) => readPool(vault).run<DrawGraph>({ kind: "drawGraph", ask }),
  /** Every folder of the vault (lib/vault/folders.ts; the worker keeps the tree between calls). */
  // As JSON text: deep trees make long paths (14,000 folders 1,800 deep answered 26 MB), serialised in the worker.
  folders: async (vault: VaultContext, signal?: AbortSignal) => new JsonText(await readPool(vault).run<WireText>({ kind: "folders", root: vault.root }, signal)),
  /** Which notes the change journal has not caught up with (lib/changes/diff.ts). */
  journalDiff: (vault: VaultContext) => readPool(vault).run<JournalDiff>({ kind: "journalDiff", stateFile: vault.stateDbNoSync.filename }),
  /** read_note's answer, the file read in the worker (lib/retrieval/note-read.ts); `indexedOnly`: null when the file is not the text indexed. */
  readNote: async (vault: VaultContext, plan: NoteReadPlan, indexedOnly: boolean, signal?: AbortSignal) => {
    const wire = await readPool(vault).run<WireText | null>({ kind: "readNote", root: vault.root, plan, indexedOnly }, signal);
    return wire === null ? null : new JsonText(wire);
  },
  /** get_page's and get_pages' answers from what the event loop resolved (lib/workspace/page.ts). */
  page: async (vault: VaultContext, plan: PagePlan, mode: PageMode, signal?: AbortSignal) =>
    new JsonText(await readPool(vault).run<WireText>({ kind: "page", root: vault.root, plan, mode }, signal)),
  pages: async (vault: VaultContext, planned: PlannedPage[], mode: PageMode, signal?: AbortSignal) =>
    new JsonText(await readPool(vault).run<WireText>({ kind: "pages", root: vault.root, planned, mode }, signal)),
  suggestLinks: (vault: VaultContext, path: string, signal?: AbortSignal) =>
    readPool(vault).run<LinkSuggestion[]>({ kind: "suggestLinks", root: vault.root, path }, signal),
  /** move_note's rewrite of a big note (lib/write/big-note-links.ts): its link lines, then the note with some replaced. */
  noteLinkLines: (vault: VaultContext, path: string, from: NoteSource) => readPool(vault).run<PackedLinkLines | "unsupported" | "changed">({ kind: "noteLinkLines", path, from }),
  spliceNoteLines: (vault: VaultContext, path: string, from: NoteSource, changed: PackedChanges) =>
    readPool(vault).run<Uint8Array | "changed">({ kind: "spliceNoteLines", path, from, changed }, undefined, [changed.bytes.buffer as ArrayBuffer]),
  /** Notes split for a background embedding pass, in the niced worker. */
  splitNotes: (vault: VaultContext, job: SplitJob, signal?: AbortSignal) => readPool(vault).run<SplitResult>({ kind: "splitNotes", job }, signal),
  /** retrieve()'s keyword side ([noteId, score], in order), keyword mode's passages, an answer's neighbours' (lib/semantic/keyword-scores.ts). */
  keywordScores: (vault: VaultContext, ask: KeywordScoresAsk, signal?: AbortSignal) => readPool(vault).run<[number, number][]>({ kind: "keywordScores", ask }, signal),
  keywordPassages: (vault: VaultContext, ids: number[], query: string, want: number, signal?: AbortSignal) => readPool(vault).run<KeywordNote[]>({ kind: "keywordPassages", ids, query, want }, signal),
  notePassages: (vault: VaultContext, ids: number[], mode: RetrievalMode, first: number, signal?: AbortSignal) =>
    readPool(vault).run<[number, ContextPassage[]][]>({ kind: "notePassages", ids, mode, first }, signal),
  /** find_duplicates' and topic_map's whole-vault passes over note vectors (lib/semantic/pair-jobs.ts). */
  duplicatePairs: (vault: VaultContext, vectors: PackedVectors, threshold: number, limit: number, signal?: AbortSignal) =>
    readPool(vault).run<{ a: number; b: number; similarity: number }[]>({ kind: "duplicatePairs", vectors, threshold, limit }, signal),
  topicGroups: (vault: VaultContext, vectors: PackedVectors, cut: number, signal?: AbortSignal) =>
    readPool(vault).run<number[][]>({ kind: "topicGroups", vectors, cut }, signal),
  /** A note as sanitised HTML; rejects with kind "timeout" when `signal` fires first (the worker is then retired). */
  renderNote: (vault: VaultContext, path: string, content: string, signal?: AbortSignal) =>
    readPool(vault).run<string>({ kind: "renderNote", root: vault.root, path, content }, signal),
};
