// Notes read from the index and split into passages, in the three shapes an
// embedding pass asks for. A background pass runs this in a read worker
// (lib/offload/jobs.ts) so that the request thread never splits: on a 10k
// vault's first pass, splitting on it held requests 5-24 ms at a time, 190
// times a minute, while the pass counted what it would embed (measured with
// bench/request-thread.ts). A pass without a worker calls it in-line, a note at
// a time, so that it can still yield between notes.
import type { Database } from "bun:sqlite";
import { splitCounting, splitPassages, type Passage } from "./passages";
import { noteTexts, type NoteText } from "./store";

export type SplitMode =
  /** Each note's passages, boilerplate sections left out: what a batch embeds and writes. */
  | "passages"
  /** Only the passages' hashes, boilerplate left out: what the count needs. */
  | "hashes"
  /** Nothing left out; the hashes and each section's key, which the boilerplate count reads. */
  | "count";

export interface SplitJob {
  ids: number[];
  /** The provider's passage size in characters. */
  size: number;
  /** Section keys of template boilerplate (./boilerplate.ts), or null for none. */
  skip: number[] | null;
  mode: SplitMode;
}

/** A note as a batch needs it: its row without the body, and its passages. */
export interface SplitNote {
  note: Omit<NoteText, "body">;
  passages: Passage[];
}

export interface CountedNote {
  id: number;
  hashes: string[];
  /** Set in "count" mode only. */
  keys?: number[];
}

export type SplitResult = SplitNote[] | CountedNote[];

/** Splits a job's notes; the caller picks where it runs. */
export type Splitter = (job: SplitJob) => Promise<SplitResult>;

/** One note in the shape the job asks for. */
export function splitOne(t: NoteText, job: Omit<SplitJob, "ids">, skip: ((k: number) => boolean) | undefined): SplitNote | CountedNote {
  if (job.mode === "count") {
    const c = splitCounting(t.body, job.size, t.title);
    return { id: t.id, keys: c.sectionKeys, hashes: c.passages.map((p) => p.hash) };
  }
  const passages = splitPassages(t.body, job.size, t.title, { skip });
  if (job.mode === "hashes") return { id: t.id, hashes: passages.map((p) => p.hash) };
  const { body: _body, ...note } = t;
  return { note, passages };
}

/** A skip test from the job's keys (undefined when there are none: nothing to leave out). */
export function skipTest(keys: number[] | null): ((k: number) => boolean) | undefined {
  if (!keys?.length) return undefined;
  const set = new Set(keys);
  return (k) => set.has(k);
}

/** Every note of the job, read and split in one go (what a read worker runs). */
export function splitNotes(db: Database, job: SplitJob): SplitResult {
  const skip = skipTest(job.skip);
  return noteTexts(db, job.ids).map((t) => splitOne(t, job, skip)) as SplitResult;
}
