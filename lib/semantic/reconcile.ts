// One reconcile pass: bring the vectors in index.db in line with the notes.
// New and changed notes are split into passages; passages whose vector is in
// the cache (same model, same text) cost nothing, the rest go to the provider;
// deleted notes are pruned. Loops until nothing is stale, so edits made while
// it runs are picked up before it returns.
import type { Database } from "bun:sqlite";
import { normalize, ProviderError, type EmbeddingProvider } from "../providers/types";
import { Boilerplate, BOILERPLATE_NOTES } from "./boilerplate";
import type { EmbeddingCache } from "./cache";
import { getMeta, setMeta } from "../store/index-db";
import { chunkLayout, passageCharsFor } from "./passages";
import { skipTest, splitOne, type CountedNote, type SplitJob, type SplitNote, type SplitResult, type Splitter } from "./split-notes";
import {
  embeddedModel,
  ensureVecTables,
  goneNoteIds,
  noteTexts,
  resetForModel,
  staleNoteIds,
  writeNotes,
  type StoredNote,
  type WrittenPassage,
} from "./store";

export interface ReconcileResult {
  /** Notes (re)embedded. */
  notes: number;
  /** Passages written for them. */
  passages: number;
  /** Of those, how many the model had to embed (the rest came from the cache). */
  embedded: number;
  /** Deleted notes whose vectors were dropped. */
  pruned: number;
}

export interface ReconcileHooks {
  /** The stored vectors were wiped for a new model. */
  onReset?: () => void;
  /** Rows written: keep an in-memory index in step. */
  onWrite?: (added: WrittenPassage[], removedPassages: number[], notes: { noteId: number; vector: Float32Array | null }[], removedNotes: number[]) => void;
  onProgress?: (done: number, total: number, detail: ReconcileProgress) => void;
  /** Awaited before each step: background passes wait here while requests are served. */
  yield?: () => Promise<void>;
  /** Reads and splits notes elsewhere (a read worker); without it they are split in-line, between yields. */
  split?: Splitter;
  signal?: AbortSignal;
}

export interface ReconcileProgress {
  /** Distinct passages the model still has to embed this round (counted, not estimated: cached ones excluded). */
  passagesLeft: number;
  /** Passages the model embedded so far in this pass. */
  embedded: number;
}

// Passages written per transaction (a background pass yields between them).
const WRITE_PASSAGES = 8;
// A background pass splitting notes yields after this long (ms).
const STEP_MS = 4;
// Notes read per query when splitting in-line (it yields every STEP_MS while it splits them).
const COUNT_STEP = 64;
// Notes per job of the count when a worker splits (~40 ms of its time on the synthetic 10k vault).
const COUNT_JOB = 128;
// Hashes looked up in the cache per step of the count.
const CACHE_HAS_CHUNK = 1024;

// A pass over this many notes or more starts every model worker at once.
const WARM_NOTES = 32;

// Passages per provider round trip: big enough to keep workers busy (and, sorted by length, to cut
// the built-in model's chunks of 16 with little padding), small enough for steady progress.
const BATCH_PASSAGES = 128;

/** Wait until this connection has no open transaction (the indexer holds one across awaits during a scan). */
export async function whenIdle(db: Database): Promise<void> {
  while (db.inTransaction) await Bun.sleep(5);
}

function meanVector(vectors: Float32Array[], dim: number): Float32Array | null {
  if (!vectors.length) return null;
  const m = new Float32Array(dim);
  for (const v of vectors) {
    const u = normalize(Float32Array.from(v));
    for (let i = 0; i < dim; i++) m[i]! += u[i]!;
  }
  return normalize(m);
}

export async function reconcile(db: Database, provider: EmbeddingProvider, cache: EmbeddingCache, hooks: ReconcileHooks = {}): Promise<ReconcileResult> {
  const result: ReconcileResult = { notes: 0, passages: 0, embedded: 0, pruned: 0 };
  await whenIdle(db);
  const current = embeddedModel(db);
  if (!current || current.id !== provider.id) {
    resetForModel(db, provider.id);
    hooks.onReset?.();
  }
  let dim = embeddedModel(db)?.dim ?? null;
  const size = passageCharsFor(provider);
  if (getMeta(db, "embed_chunker") !== chunkLayout(size)) {
    // Notes were split another way (another Lettuce, another LETTUCE_PASSAGE_CHARS): split them all
    // again; passages that come out the same keep their cached vectors.
    db.transaction(() => {
      db.exec("DELETE FROM embed_notes");
      setMeta(db, "embed_chunker", chunkLayout(size));
    })();
  }
  const hashNow = db.query("SELECT hash FROM notes WHERE id = ?");
  let done = 0;
  for (;;) {
    if (hooks.signal?.aborted) throw new ProviderError("provider-unavailable", "Embedding was stopped");
    await whenIdle(db);
    const stale = staleNoteIds(db);
    const gone = goneNoteIds(db);
    if (!stale.length && !gone.length) break;
    const total = done + stale.length;
    // The model's workers load while the passages are counted below (a few changed notes start
    // only the workers their chunks need, as they come).
    if (stale.length >= WARM_NOTES) provider.warm?.();
    // Count what the model really has to embed (distinct passages not in the cache), so that
    // progress and time estimates rest on it rather than on note sizes.
    // Template boilerplate is found while counting (./boilerplate.ts), and left out from then on.
    const boilerplate = Boilerplate.load(db, chunkLayout(size));
    const toEmbed = await countToEmbed(db, provider, cache, stale, size, hooks, boilerplate);
    const embeddedBefore = result.embedded;
    const left = () => Math.max(0, toEmbed - (result.embedded - embeddedBefore));
    hooks.onProgress?.(done, total, { passagesLeft: left(), embedded: result.embedded });
    if (gone.length) {
      const w = writeNotes(db, [], gone);
      hooks.onWrite?.([], w.removedPassages, [], gone);
      result.pruned += gone.length;
    }
    // Two batches in flight: the next batch's passages are in the provider's queue while this one's
    // vectors are written, so the model workers never wait for the main thread between batches.
    let i = 0;
    let pending: Batch | null = null;
    while (i < stale.length || pending) {
      let next: Batch | null = null;
      if (i < stale.length) {
        await hooks.yield?.();
        if (hooks.signal?.aborted) throw new ProviderError("provider-unavailable", "Embedding was stopped");
        // Take notes until their (estimated) passages fill a batch.
        const ids: number[] = [];
        let est = 0;
        while (i < stale.length && (ids.length === 0 || est < BATCH_PASSAGES)) {
          est += Math.max(1, Math.ceil(stale[i]!.size / size));
          ids.push(stale[i++]!.id);
        }
        next = await startBatch(db, provider, cache, ids, size, boilerplate, hooks, pending ? new Set(pending.missing.map(([h]) => h)) : undefined);
      }
      if (pending) {
        const b: Batch = pending;
        pending = null;
        dim = await finishBatch(db, provider, cache, b, dim, hashNow, hooks, result);
        done += b.ids.length;
        hooks.onProgress?.(done, total, { passagesLeft: left(), embedded: result.embedded });
      }
      pending = next;
    }
  }
  return result;
}

interface Batch {
  ids: number[];
  split: SplitNote[];
  have: Map<string, Float32Array>;
  missing: [string, string][];
  /** The model's vectors for `missing`, in order (already running). */
  vectors: Promise<Float32Array[]> | null;
}

/**
 * Read and split a batch of notes, and hand the passages with no cached vector to the provider (not awaited).
 * In-line, a background pass yields every STEP_MS while it splits: a batch's notes took 13-23 ms to split in one go.
 */
async function startBatch(db: Database, provider: EmbeddingProvider, cache: EmbeddingCache, ids: number[], size: number, boilerplate: Boilerplate, hooks: ReconcileHooks, inFlight?: Set<string>): Promise<Batch> {
  const split = (await splitNotes(db, { ids, size, skip: boilerplate.keyList, mode: "passages" }, hooks)) as SplitNote[];
  const all = split.flatMap((s) => s.passages);
  const have = cache.get(provider.id, all.map((p) => p.hash));
  // A passage the batch before is embedding now is not sent twice: finishBatch takes its vector from the cache.
  const missing = [...new Map(all.filter((p) => !have.has(p.hash) && !inFlight?.has(p.hash)).map((p) => [p.hash, p.input])).entries()];
  const vectors = missing.length ? provider.embed(missing.map(([, input]) => input), { purpose: "document", signal: hooks.signal }) : null;
  // Awaited in finishBatch; an earlier batch's failure must not leave this rejection unhandled meanwhile.
  vectors?.catch(() => undefined);
  return { ids, split, have, missing, vectors };
}

/** Split through the hook (a worker), or here a note at a time, yielding every STEP_MS. */
async function splitNotes(db: Database, job: SplitJob, hooks: ReconcileHooks): Promise<SplitResult> {
  if (hooks.split) {
    try {
      return await hooks.split(job);
    } catch (e) {
      // The worker pool closes with the vault: that is the pass being stopped, not a fault.
      if (hooks.signal?.aborted) throw new ProviderError("provider-unavailable", "Embedding was stopped");
      throw e;
    }
  }
  const pace = pacer(hooks);
  const skip = skipTest(job.skip);
  const out: (SplitNote | CountedNote)[] = [];
  for (let i = 0; i < job.ids.length; i += COUNT_STEP) {
    for (const t of noteTexts(db, job.ids.slice(i, i + COUNT_STEP))) {
      await pace();
      out.push(splitOne(t, job, skip));
    }
  }
  return out as SplitResult;
}

/** Yields to the hook once STEP_MS have passed since the last yield (none without a hook). */
function pacer(hooks: ReconcileHooks): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (!hooks.yield || performance.now() - since < STEP_MS) return;
    await hooks.yield();
    since = performance.now();
  };
}

/** Wait for a batch's vectors, cache them, and write its notes a few at a time. Returns the dimension now known. */
async function finishBatch(
  db: Database,
  provider: EmbeddingProvider,
  cache: EmbeddingCache,
  b: Batch,
  dimIn: number | null,
  hashNow: ReturnType<Database["query"]>,
  hooks: ReconcileHooks,
  result: ReconcileResult,
): Promise<number | null> {
  let dim = dimIn;
  const { ids, split, have, missing } = b;
  if (b.vectors) {
    const vectors = await b.vectors;
    // Chunks already at the model finish while a request is served: their cache write waits for it too.
    await hooks.yield?.();
    const fresh: [string, Float32Array][] = missing.map(([hash], j) => [hash, vectors[j]!]);
    for (const [h, v] of fresh) {
      if (dim !== null && v.length !== dim) {
        throw new ProviderError(
          "provider-error",
          `${provider.id} returned ${v.length}-dimensional vectors but this vault's index holds ${dim}-dimensional ones of the same model; if the model behind that name changed, run \`lettuce embed --rebuild <vault>\``,
        );
      }
      dim ??= v.length;
      have.set(h, v);
    }
    await cache.putPaced(provider.id, fresh, hooks.yield);
    result.embedded += fresh.length;
  }
  const owed = [...new Set(split.flatMap((x) => x.passages.map((p) => p.hash)).filter((h) => !have.has(h)))];
  if (owed.length) for (const [h, v] of cache.get(provider.id, owed)) have.set(h, v);
  if (hooks.signal?.aborted) throw new ProviderError("provider-unavailable", "Embedding was stopped");
  const firstVector = have.values().next().value as Float32Array | undefined;
  dim ??= firstVector?.length ?? provider.dimension ?? null;
  // Written a few notes at a time: a background pass yields between slices, so that a request
  // never waits behind one long write transaction (vector inserts are most of the main thread's share).
  const seen = new Set(split.map((x) => x.note.id));
  for (let from = 0; from < split.length || from === 0; ) {
    const slice: typeof split = [];
    for (let n = 0; from < split.length && (slice.length === 0 || n + split[from]!.passages.length <= WRITE_PASSAGES); from++) {
      n += split[from]!.passages.length;
      slice.push(split[from]!);
    }
    const last = from >= split.length;
    await hooks.yield?.();
    await whenIdle(db);
    // A note edited while its passages were being embedded is left stale; the next round takes it.
    const stored: StoredNote[] = [];
    for (const x of slice) {
      const row = hashNow.get(x.note.id) as { hash: string } | null;
      if (!row || row.hash !== x.note.hash) continue;
      const vectors = x.passages.map((p) => have.get(p.hash)!);
      stored.push({ noteId: x.note.id, hash: x.note.hash, passages: x.passages, vectors, noteVector: dim ? meanVector(vectors, dim) : null });
    }
    // Notes without a body row (should not happen) are recorded as empty so they are not retried forever.
    if (last) {
      for (const id of ids) {
        if (seen.has(id)) continue;
        const row = hashNow.get(id) as { hash: string } | null;
        if (row) stored.push({ noteId: id, hash: row.hash, passages: [], vectors: [], noteVector: null });
      }
    }
    if (dim !== null) ensureVecTables(db, dim);
    const w = writeNotes(db, stored, []);
    hooks.onWrite?.(w.added, w.removedPassages, stored.map((x) => ({ noteId: x.noteId, vector: x.noteVector })), []);
    result.notes += stored.length;
    result.passages += stored.reduce((n, x) => n + x.passages.length, 0);
    if (last) break;
  }
  return dim;
}

/**
 * Distinct passages of these notes with no cached vector: what the model will embed. A pass over
 * enough notes also counts their sections for boilerplate (./boilerplate.ts), kept before any batch
 * starts; each note is read and parsed once for both, and split again only if it holds boilerplate.
 * A smaller pass can find none and uses the set kept.
 */
async function countToEmbed(db: Database, provider: EmbeddingProvider, cache: EmbeddingCache, stale: { id: number }[], size: number, hooks: ReconcileHooks, boilerplate: Boilerplate): Promise<number> {
  const counting = stale.length >= BOILERPLATE_NOTES;
  const hashes = new Set<string>();
  // In jobs, with a yield before each: a worker's split is paced by the requests the server takes too.
  const each = async (ids: number[], mode: SplitJob["mode"], skip: number[] | null, fn: (n: CountedNote) => void) => {
    const step = hooks.split ? COUNT_JOB : ids.length;
    for (let i = 0; i < ids.length; i += step) {
      if (i > 0) await hooks.yield?.();
      for (const n of (await splitNotes(db, { ids: ids.slice(i, i + step), size, skip, mode }, hooks)) as CountedNote[]) fn(n);
    }
  };
  const pace = pacer(hooks);
  if (!counting) {
    await each(stale.map((s) => s.id), "hashes", boilerplate.keyList, (n) => n.hashes.forEach((h) => hashes.add(h)));
  } else {
    // While counting, each note's section keys and its passages' hashes as if nothing were boilerplate.
    const split: CountedNote[] = [];
    await each(stale.map((s) => s.id), "count", null, (n) => {
      boilerplate.see(n.id, n.keys!);
      split.push(n);
    });
    await whenIdle(db);
    boilerplate.commit(db);
    const skip = boilerplate.skip;
    const again: number[] = [];
    for (const n of split) {
      await pace();
      if (skip && n.keys!.some(skip)) again.push(n.id);
      else for (const h of n.hashes) hashes.add(h);
    }
    await each(again, "hashes", boilerplate.keyList, (n) => n.hashes.forEach((h) => hashes.add(h)));
  }
  const all = [...hashes];
  let cached = 0;
  for (let i = 0; i < all.length; i += CACHE_HAS_CHUNK) {
    if (i > 0) await hooks.yield?.();
    cached += cache.has(provider.id, all.slice(i, i + CACHE_HAS_CHUNK)).size;
  }
  return all.length - cached;
}
