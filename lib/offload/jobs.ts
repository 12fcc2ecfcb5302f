// The read jobs that may run off the main thread: each is one call into the
// engine on a read-only connection. The worker (worker.ts) and the inline
// fallback (pool.ts) both run them through runJob, so they answer the same.
import type { Database } from "bun:sqlite";
import { databaseSchema, queryDatabase, type QueryInput } from "../bases/query";
import { noteReadError } from "../errors";
import { suggestLinks } from "../hygiene/suggest-links";
import { healthFrom, wikiHealth } from "../hygiene/health";
import { lintPage, lintSummary, SEVERITY, type LintFilter } from "../hygiene/lint";
import { RULES, type Rule } from "../hygiene/lint-config";
import { linkGraph } from "../retrieval/graph";
import { searchNotes } from "../retrieval/search";
import { notePage, type NoteListing } from "../retrieval/notes";
import { tagCounts } from "../retrieval/tags";
import { resolveFromIndexed } from "../render/link-table";
import { renderLinks } from "../retrieval/links";
import { renderForWire } from "./json-text";
import { splitNotes, type SplitJob } from "../semantic/split-notes";
import { keywordScores, type KeywordScoresAsk } from "../semantic/keyword-scores";
import { keywordPassagesOf } from "../semantic/keyword-passages";
import type { RetrievalMode } from "../semantic/retrieve";
import { notePassages } from "../answer/note-text";
import { duplicatePairs, topicGroups, type PackedVectors } from "../semantic/pair-jobs";
import { readVaultText } from "../vault/read-file";
import { noteLinkLines, spliceNoteLines, type NoteSource, type PackedChanges } from "../write/big-note-links";
import { buildPage, buildPages, type PageMode, type PagePlan, type PlannedPage } from "../workspace/page-build";
import { readNoteAnswer, type NoteReadPlan } from "../retrieval/note-read";
import { databaseSiblings, type NoteClass } from "../workspace/databases";
import { titleMatches } from "../workspace/title-cache";
import { journalDiffOf } from "../changes/diff";
import { listFolders } from "../vault/folders";
import { digestPage } from "../digest/map";
import { drawGraph, type GraphAsk } from "../render/graph-draw";

// search, graph and lint answer with their tool result already as JSON text (see
// json-text.ts): big results then cross the thread boundary as one string.
export type ReadJob =
  | { kind: "search"; query: string; limit: number; offset: number }
  | { kind: "graph"; center: string; depth: number; maxNodes: number }
  | { kind: "lint"; filter: LintFilter; offset: number; limit: number }
  | { kind: "health" }
  | { kind: "hygieneReport"; perRule: number }
  | { kind: "suggestLinks"; root: string; path: string }
  | { kind: "noteLinkLines"; path: string; from: NoteSource }
  | { kind: "spliceNoteLines"; path: string; from: NoteSource; changed: PackedChanges }
  | { kind: "queryDatabase"; root: string; input: QueryInput }
  | { kind: "databaseSchema"; root: string; databaseId: string }
  | { kind: "tagCounts"; limit: number; offset: number }
  | { kind: "titleMatches"; query: string; limit: number }
  | { kind: "databaseSiblings"; root: string; notePath: string; cls: NoteClass; limit: number }
  | { kind: "journalDiff"; stateFile: string }
  | { kind: "folders"; root: string }
  | { kind: "drawGraph"; ask: GraphAsk }
  | { kind: "notePage"; of: NoteListing; limit: number; offset: number }
  | { kind: "digest"; root: string; cursor: string; vaultName: string; page: number }
  | { kind: "renderNote"; root: string; path: string; content: string }
  | { kind: "splitNotes"; job: SplitJob }
  | { kind: "keywordScores"; ask: KeywordScoresAsk }
  | { kind: "keywordPassages"; ids: number[]; query: string; want: number }
  | { kind: "notePassages"; ids: number[]; mode: RetrievalMode; first: number }
  | { kind: "duplicatePairs"; vectors: PackedVectors; threshold: number; limit: number }
  | { kind: "topicGroups"; vectors: PackedVectors; cut: number }
  | { kind: "readNote"; root: string; plan: NoteReadPlan; indexedOnly: boolean }
  | { kind: "page"; root: string; plan: PagePlan; mode: PageMode }
  | { kind: "pages"; root: string; planned: PlannedPage[]; mode: PageMode };

export function runJob(db: Database, job: ReadJob): unknown {
  switch (job.kind) {
    case "search": {
      const { items, total, partial } = searchNotes(db, job.query, job.limit, job.offset);
      return renderForWire({ items, total, offset: job.offset, limit: job.limit, ...(partial ? { partial } : {}) });
    }
    case "graph":
      return renderForWire(linkGraph(db, job.center, job.depth, job.maxNodes));
    case "lint": {
      // The page is made here, so that only it crosses to the event loop (a 100k-note vault can have millions of findings).
      const { items, total, counts } = lintPage(db, job.filter, job.offset, job.limit);
      return renderForWire({ items, total, offset: job.offset, limit: job.limit, truncated: job.offset + items.length < total, counts });
    }
    case "health":
      return wikiHealth(db);
    case "hygieneReport": {
      // The web UI's Health page: the score and the first findings of each rule, from the worker's plan.
      const summary = lintSummary(db);
      const rules = (Object.entries(summary.counts) as [Rule, number][])
        .map(([rule, count]) => ({ rule, severity: SEVERITY[rule], count, items: lintPage(db, { rule }, 0, job.perRule).items }))
        .sort((a, b) => RULES.indexOf(a.rule) - RULES.indexOf(b.rule));
      return { health: healthFrom(summary), rules };
    }
    case "queryDatabase":
      // The first query of a base evaluates its filters over every note (0.4 s on obsidian-hub, measured).
      return renderForWire(queryDatabase({ root: job.root, indexDb: db }, job.input));
    case "titleMatches":
      // search_workspace's fallback over every title, whose folded list is made again after each change.
      return titleMatches(db, job.query, job.limit);
    case "tagCounts":
      // Every tag row grouped (~150 ms at 100k notes), again after each change: kept off the request thread.
      return tagCounts(db, job.limit, job.offset);
    case "databaseSiblings":
      // get_related_pages' other rows: the base's rows, a pass over every note after each change.
      return databaseSiblings({ root: job.root, indexDb: db }, job.notePath, job.cls, job.limit);
    case "digest":
      // The vault map lists every note (~0.3 s at 100k notes), built again after each change; its pages are kept here.
      return digestPage({ root: job.root, indexDb: db }, job.cursor, job.vaultName, job.page);
    case "notePage":
      // list_notes, notes_by_tag and the web UI's lists: each sorts every note it selects.
      return notePage(db, job.of, job.limit, job.offset);
    case "drawGraph":
      // The web UI's graph: the whole vault's links read (~0.2 s at 100k notes) and up to thousands of nodes laid out.
      return drawGraph(db, job.ask);
    case "folders":
      // list_folders walks every folder's entries, files included, after a folder changed (~50 ms at 100k notes).
      return renderForWire(listFolders(job.root));
    case "journalDiff":
      // The change journal's catch-up compares every note's hash with what it last reported (~0.2 s at 100k).
      return journalDiffOf(db, job.stateFile);
    case "databaseSchema":
      // Its columns come from every row's properties: the same pass over every note as a first query.
      return databaseSchema({ root: job.root, indexDb: db }, job.databaseId);
    case "renderNote": {
      // The web UI's note page: marked runs here, where the pool's time budget can stop it. Loaded on first use:
      // marked and sanitize-html are most of a worker's start-up otherwise, and a server may never render.
      const { renderNote } = require("../render/note-html") as typeof import("../render/note-html");
      return renderNote(job.root, resolveFromIndexed(renderLinks(db, job.path)), job.path, job.content);
    }
    // The reads that hand back a whole file (read_note, get_page, get_pages): reading, decoding and
    // escaping big texts here keeps a flood of them off the event loop (docs/security.md).
    case "readNote": {
      const answer = readNoteAnswer(job.root, job.plan, job.indexedOnly);
      return answer && renderForWire(answer);
    }
    case "page":
      return renderForWire(buildPage(job.root, db, job.plan, job.mode));
    case "pages":
      return renderForWire({ results: buildPages(job.root, db, job.planned, job.mode) });
    case "duplicatePairs":
      // find_duplicates' pair search over the note vectors the caller read (lib/semantic/pair-jobs.ts).
      return duplicatePairs(job.vectors, job.threshold, job.limit);
    case "topicGroups":
      return topicGroups(job.vectors, job.cut);
    case "splitNotes":
      // A background embedding pass's splitting (lib/semantic/split-notes.ts), kept off the request thread.
      return splitNotes(db, job.job);
    // retrieve()'s keyword side and keyword mode's passages (lib/semantic/keyword-scores.ts): BM25 over
    // thousands of matching notes, and each page's note split at query time (its first megabyte ~0.1 s).
    case "keywordScores":
      return keywordScores(db, job.ask);
    case "keywordPassages":
      return keywordPassagesOf(db, job.ids, job.query, job.want);
    case "notePassages":
      // An answer's graph neighbours: split like keyword mode's passages when they have none stored.
      return job.ids.map((id) => [id, notePassages(db, id, job.mode).slice(0, job.first)]);
    // move_note's work on the whole text of a big note (an 8 MB note's parse ~0.6 s), kept off the request thread.
    case "noteLinkLines":
      return noteLinkLines(job.path, job.from);
    case "spliceNoteLines":
      return spliceNoteLines(job.path, job.from, job.changed);
    case "suggestLinks": {
      // The path was checked by the caller (findNote, safeAbsPath); the scan of a big note is what runs here.
      let content: string;
      try {
        content = readVaultText(job.root, job.path);
      } catch (e) {
        throw noteReadError(e, job.path);
      }
      return suggestLinks(db, job.path, content);
    }
  }
}
