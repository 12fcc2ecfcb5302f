// The in-memory vector indexes of one vault (passages and notes), loaded from
// the vector tables and kept in step with what a reconcile writes, so that a
// search never re-reads the tables unless another process changed them.
import type { Database } from "bun:sqlite";
import type { EmbeddingProvider } from "../providers/types";
import { turnEvery } from "../platform/turns";
import { BEFORE_FIRST_ID, embeddedModel, generation, noteVectorsAfter, passageVectorCount, passageVectorsAfter, type WrittenPassage } from "./store";
import { toToolError } from "./tool-error";
import { VectorIndex } from "./vector-index";

/** Rows read from the vector tables at a time while loading: one slice is a few milliseconds. */
const LOAD_SLICE = 256;
/** How long the loader holds the event loop before it lets other callers in. */
const LOAD_TURN_MS = 8;

type Indexes = { passages: VectorIndex; notes: VectorIndex };
type Change = [added: WrittenPassage[], removed: number[], notes: { noteId: number; vector: Float32Array | null }[], removedNotes: number[]];

export class LoadedIndexes {
  private passages: VectorIndex | null = null;
  private notes: VectorIndex | null = null;
  private loadedGeneration = -1;
  private loading: Promise<Indexes | null> | null = null;
  /** What reconcile steps wrote while a load was under way: replayed onto it when it ends. */
  private missed: Change[] = [];
  /** Bumped by drop(): a load that started before it is thrown away. */
  private epoch = 0;

  constructor(private readonly db: () => Database) {}

  drop(): void {
    this.passages = null;
    this.notes = null;
    this.loadedGeneration = -1;
    this.epoch++;
    this.missed = [];
  }

  /** Apply what one reconcile step wrote (kept for the load under way, if any; nothing when none is loaded). */
  apply(added: WrittenPassage[], removed: number[], notes: { noteId: number; vector: Float32Array | null }[], removedNotes: number[]): void {
    if (this.loading) this.missed.push([added, removed, notes, removedNotes]);
    if (!this.passages || !this.notes) return;
    applyTo({ passages: this.passages, notes: this.notes }, [added, removed, notes, removedNotes]);
    this.loadedGeneration = generation(this.db());
  }

  /**
   * The passage and note indexes, loaded from the vector tables (again, if another process changed them).
   * A load reads slice by slice and gives the event loop a turn every few milliseconds: read whole, 30,000
   * passages held every other caller ~0.5 s on the first hybrid query, and the time grows with the vault.
   * Callers that come during a load wait for that one.
   */
  async get(): Promise<Indexes | null> {
    const gen = generation(this.db());
    if (this.passages && this.notes && gen === this.loadedGeneration) return { passages: this.passages, notes: this.notes };
    this.loading ??= this.load().finally(() => {
      this.loading = null;
      this.missed = [];
    });
    return this.loading;
  }

  private async load(): Promise<Indexes | null> {
    for (;;) {
      // Let go of the old indexes before loading new ones: the loader's collections (below) can then free
      // them (~600 MB at a million passages) instead of holding old and new at once.
      this.drop();
      const epoch = this.epoch;
      const db = this.db();
      const gen = generation(db);
      const m = embeddedModel(db);
      if (!m?.dim) return null;
      const turn = turnEvery(LOAD_TURN_MS);
      // The sign codes are taken around the mean vector, estimated from the first few thousand rows.
      const head: WrittenPassage[] = [];
      for (let slice: WrittenPassage[]; head.length < 4096 && (slice = passageVectorsAfter(db, head.at(-1)?.id ?? BEFORE_FIRST_ID, LOAD_SLICE)).length; await turn()) head.push(...slice);
      if (this.epoch !== epoch) continue;
      const center = VectorIndex.meanOf(
        head.map((r) => r.vector),
        m.dim,
      );
      await turn();
      const passages = new VectorIndex(m.dim, center);
      // Sized once, with room for the notes embedded next: sized exactly, the first new passage would double
      // every array while the old ones are still held (+600 MB for a moment at 1M vectors). Room not yet
      // written costs no resident memory (zeroed pages are mapped on first write).
      const count = passageVectorCount(db);
      passages.reserve(count + (count >> 4) + 1024);
      await turn();
      // In turns too: the first 4,096 added at once held every other caller ~100 ms (~25 µs a vector).
      for (let i = 0; i < head.length; i++) {
        passages.add(head[i]!.id, head[i]!.noteId, head[i]!.vector);
        if (i % LOAD_SLICE === LOAD_SLICE - 1) await turn();
      }
      let rows = head.length;
      for (let after = head.at(-1)?.id, slice: WrittenPassage[]; after !== undefined && (slice = passageVectorsAfter(db, after, LOAD_SLICE)).length; after = slice.at(-1)!.id) {
        for (const r of slice) passages.add(r.id, r.noteId, r.vector);
        // Each row leaves two 2 KB buffers (the blob and its float copy) that the collector is slow to count:
        // a million vectors added with a copy each raised the peak RSS by ~1.8 GB (bench/lib/vector-memory.ts).
        if ((rows += slice.length) % 65_536 < LOAD_SLICE) Bun.gc(true);
        await turn();
        if (this.epoch !== epoch) break;
      }
      const notes = new VectorIndex(m.dim, center);
      for (let after = BEFORE_FIRST_ID, slice: { noteId: number; vector: Float32Array }[]; this.epoch === epoch && (slice = noteVectorsAfter(db, after, LOAD_SLICE)).length; after = slice.at(-1)!.noteId) {
        for (const r of slice) notes.add(r.noteId, r.noteId, r.vector);
        await turn();
      }
      // Reset while loading (another model, other storage): start again from the new tables.
      if (this.epoch !== epoch) continue;
      // A reconcile step that wrote while the slices were read may or may not be in them; adding and removing
      // by id again gives the same indexes either way.
      const loaded = { passages, notes };
      for (const c of this.missed) applyTo(loaded, c);
      this.passages = passages;
      this.notes = notes;
      this.loadedGeneration = this.missed.length ? generation(db) : gen;
      return loaded;
    }
  }
}

function applyTo(idx: Indexes, [added, removed, notes, removedNotes]: Change): void {
  for (const id of removed) idx.passages.remove(id);
  for (const p of added) idx.passages.add(p.id, p.noteId, p.vector);
  for (const id of removedNotes) idx.notes.remove(id);
  for (const n of notes) {
    if (n.vector) idx.notes.add(n.noteId, n.noteId, n.vector);
    else idx.notes.remove(n.noteId);
  }
}

/** Query vectors by provider and text, least recently used out first (agents repeat and page through queries). */
export class QueryVectorCache {
  private readonly vectors = new Map<string, Float32Array>();

  constructor(private readonly size: number) {}

  async get(provider: EmbeddingProvider, text: string, signal?: AbortSignal): Promise<Float32Array> {
    const key = `${provider.id}\u0000${text}`;
    const hit = this.vectors.get(key);
    if (hit) {
      this.vectors.delete(key);
      this.vectors.set(key, hit);
      return hit;
    }
    let v: Float32Array;
    try {
      [v] = (await provider.embed([text], { purpose: "query", signal })) as [Float32Array];
    } catch (e) {
      throw toToolError(e);
    }
    this.vectors.set(key, v);
    if (this.vectors.size > this.size) this.vectors.delete(this.vectors.keys().next().value!);
    return v;
  }
}
