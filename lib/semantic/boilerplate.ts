// Template boilerplate: a section (a heading and its text) that recurs word for
// word in many notes: a footer every note of a vault carries ("This note in
// GitHub: Edit · Copy this note · Download this vault"), a navigation block a
// template stamps in. It tells no note from another, so it is not embedded: a
// question near its words would otherwise meet hundreds of equal passages, and
// every note's vector would lean toward the same footer, which makes unrelated
// short notes look alike to related_notes, find_duplicates and topic_map.
// Keyword search still sees it.
//
// A section is boilerplate once one pass of the embedding counts it in
// BOILERPLATE_NOTES notes or more: the first build of a vault counts them all,
// and the set is kept (meta `embed_boilerplate`, per chunk layout) so that a
// note added later with the same footer leaves it out too. Measured on
// obsidian-hub (6,572 notes): its footer and a "Plugin News" heading; the SRD
// wiki's most repeated section, a dragon's legendary actions, is in 21 notes
// and stays; Obsidian Help, the docs set and SciFact repeat nothing. A note
// made of nothing but boilerplate keeps it (it would have no vector).
import type { Database } from "bun:sqlite";
import { getMeta, setMeta } from "../store/index-db";

export const BOILERPLATE_NOTES = 50;
const META_KEY = "embed_boilerplate";

export class Boilerplate {
  private seen = new Map<number, { notes: number; lastNote: number }>();

  private constructor(
    private readonly layout: string,
    private readonly keys: Set<number>,
  ) {}

  /** The set kept for this chunk layout (another layout's is not used: its sections differ). */
  static load(db: Database, layout: string): Boilerplate {
    try {
      const v = JSON.parse(getMeta(db, META_KEY) ?? "null") as { layout?: unknown; keys?: unknown } | null;
      if (v && v.layout === layout && Array.isArray(v.keys)) return new Boilerplate(layout, new Set(v.keys.filter((k): k is number => typeof k === "number")));
    } catch {
      /* unreadable: start over */
    }
    return new Boilerplate(layout, new Set());
  }

  /** Count one note's section keys (passages.ts splitCounting; each note once). */
  see(noteId: number, sectionKeys: number[]): void {
    for (const k of sectionKeys) {
      const s = this.seen.get(k);
      if (!s) this.seen.set(k, { notes: 1, lastNote: noteId });
      else if (s.lastNote !== noteId) {
        s.notes++;
        s.lastNote = noteId;
      }
    }
  }

  /** Add what was counted in enough notes to the set, and keep it. */
  commit(db: Database): void {
    let added = false;
    for (const [k, s] of this.seen) {
      if (s.notes >= BOILERPLATE_NOTES && !this.keys.has(k)) {
        this.keys.add(k);
        added = true;
      }
    }
    this.seen.clear();
    if (added) setMeta(db, META_KEY, JSON.stringify({ layout: this.layout, keys: [...this.keys] }));
  }

  /** The keys kept, for a split that runs in another thread (./split-notes.ts); null while there are none. */
  get keyList(): number[] | null {
    return this.keys.size ? [...this.keys] : null;
  }

  /** For splitPassages: is this section boilerplate? (undefined while the set is empty: nothing to skip) */
  get skip(): ((sectionKey: number) => boolean) | undefined {
    return this.keys.size ? (k) => this.keys.has(k) : undefined;
  }
}
