// The in-memory vector indexes of one vault (passages and notes), loaded from
// the vector tables and kept in step with what a reconcile writes, so that a
// search never re-reads the tables unless another process changed them.
import type { Database } from "bun:sqlite";
import type { EmbeddingProvider } from "../providers/types";
import { allNoteVectors, allPassageVectors, embeddedModel, generation, passageVectorCount, type WrittenPassage } from "./store";
import { toToolError } from "./tool-error";
import { VectorIndex } from "./vector-index";

export class LoadedIndexes {
  private passages: VectorIndex | null = null;
  private notes: VectorIndex | null = null;
  private loadedGeneration = -1;

  constructor(private readonly db: () => Database) {}

  drop(): void {
    this.passages = null;
    this.notes = null;
    this.loadedGeneration = -1;
  }

  /** Apply what one reconcile step wrote (nothing to do when the indexes are not loaded). */
  apply(added: WrittenPassage[], removed: number[], notes: { noteId: number; vector: Float32Array | null }[], removedNotes: number[]): void {
    if (!this.passages || !this.notes) return;
    for (const id of removed) this.passages.remove(id);
    for (const p of added) this.passages.add(p.id, p.noteId, p.vector);
    for (const id of removedNotes) this.notes.remove(id);
    for (const n of notes) {
      if (n.vector) this.notes.add(n.noteId, n.noteId, n.vector);
      else this.notes.remove(n.noteId);
    }
    this.loadedGeneration = generation(this.db());
  }

  /** The passage and note indexes, loaded from the vector tables (again, if another process changed them). */
  get(): { passages: VectorIndex; notes: VectorIndex } | null {
    const db = this.db();
    const gen = generation(db);
    if (this.passages && this.notes && gen === this.loadedGeneration) return { passages: this.passages, notes: this.notes };
    // Let go of the old indexes before loading new ones: the loader's collections (below) can then free
    // them (~600 MB at a million passages) instead of holding old and new at once.
    this.drop();
    const m = embeddedModel(db);
    if (!m?.dim) return null;
    // The sign codes are taken around the mean vector, estimated from the first few thousand rows.
    const it = allPassageVectors(db);
    const head: WrittenPassage[] = [];
    for (let r = it.next(); !r.done; r = it.next()) {
      head.push(r.value);
      if (head.length >= 4096) break;
    }
    const center = VectorIndex.meanOf(
      head.map((r) => r.vector),
      m.dim,
    );
    const passages = new VectorIndex(m.dim, center);
    // Sized once, with room for the notes embedded next: sized exactly, the first new passage would double
    // every array while the old ones are still held (+600 MB for a moment at 1M vectors). Room not yet
    // written costs no resident memory (zeroed pages are mapped on first write).
    const count = passageVectorCount(db);
    passages.reserve(count + (count >> 4) + 1024);
    for (const r of head) passages.add(r.id, r.noteId, r.vector);
    let rows = head.length;
    for (const r of it) {
      passages.add(r.id, r.noteId, r.vector);
      // Each row leaves two 2 KB buffers (the blob and its float copy) that the collector is slow to count:
      // a million vectors added with a copy each raised the peak RSS by ~1.8 GB (bench/lib/vector-memory.ts).
      if (++rows % 65_536 === 0) Bun.gc(true);
    }
    const notes = new VectorIndex(m.dim, center);
    for (const r of allNoteVectors(db)) notes.add(r.noteId, r.noteId, r.vector);
    this.passages = passages;
    this.notes = notes;
    this.loadedGeneration = gen;
    return { passages, notes };
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
