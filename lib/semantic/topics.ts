// find_duplicates and topic_map, both built on the note-level vectors and the
// pair search of neighbors.ts, on the calibrated similarity of ./calibrate.ts
// (so that the spec's default 0.9 means "near-duplicate" for every provider).
import { ToolError } from "../errors";
import type { Database } from "bun:sqlite";
import { offloaded } from "../offload/offloaded";
import { packVectors, type PackedVectors } from "./pair-jobs";
import { partialOf } from "./search";
import type { EmbeddingProgress, SemanticService } from "./service";
import { allNoteVectors } from "./store";

export interface DuplicatePair {
  pathA: string;
  pathB: string;
  similarity: number;
}

export interface Cluster {
  /** Member paths, sorted; at most maxNotes of them (size counts them all). */
  notes: string[];
  size: number;
  hasHub: boolean;
  sharedTags: string[];
  /** Present (true) when notes lists only the first maxNotes members. */
  notesTruncated?: boolean;
}

export interface TopicMap {
  clusters: Cluster[];
  missingHubs: Cluster[];
  /** All clusters found, and those without a hub; the lists hold the largest `limit` of each. */
  total: number;
  missingHubTotal: number;
  truncated: boolean;
}

export interface TopicMapOptions {
  threshold: number;
  minSize: number;
  /** Clusters per list, largest first. */
  limit: number;
  offset: number;
  /** Member paths shown per cluster. */
  maxNotes: number;
}

/**
 * Note vectors as the model gave them with their paths, in note-id order, packed for the worker that
 * searches them (which normalises them: the request thread only copies).
 */
function noteVectors(db: Database): { ids: number[]; paths: string[]; packed: PackedVectors } {
  const paths = new Map((db.query("SELECT id, path FROM notes").all() as { id: number; path: string }[]).map((r) => [r.id, r.path]));
  const ids: number[] = [];
  const vectors: Float32Array[] = [];
  for (const r of allNoteVectors(db)) {
    if (!paths.has(r.noteId)) continue;
    ids.push(r.noteId);
    vectors.push(r.vector);
  }
  return { ids, paths: ids.map((id) => paths.get(id)!), packed: packVectors(vectors) };
}

const round = (x: number) => Math.round(x * 1e4) / 1e4;

/**
 * topic_map's similarity and threshold. "Same topic" is a much looser bond
 * than "near-duplicate", yet the spec gives both a high default (0.85 and 0.9).
 * Two changes from find_duplicates' scale (measured with the built-in model,
 * docs/semantic.md, "topic_map's threshold"):
 * - Only the vault's mean is taken away, not its main directions: in a vault
 *   of a few topics those directions ARE the topics (on a slice of Obsidian
 *   Help's Import, Publish and Sync folders, removing them left clusters of
 *   "security pages" across folders instead of the folders' own topics).
 * - A threshold t compares at 1 - TOPIC_SPREAD × (1 - t): the default 0.85 at
 *   0.7 (that slice: 7 clusters, every pair in one folder; all of Obsidian
 *   Help: 13; the SRD wiki: 75), 0.9 at 0.8, 1 still means identical.
 */
export const TOPIC_SPREAD = 2;
export function topicCut(threshold: number): number {
  return Math.max(-1, 1 - TOPIC_SPREAD * (1 - threshold));
}

export async function findDuplicates(svc: SemanticService, threshold: number, limit: number, signal?: AbortSignal): Promise<DuplicatePair[]> {
  // The spec's bare array has no room for a partial flag, and pairs among the notes embedded so far read as
  // "no duplicates" (an agent audit): during a background build the call says the index is not ready.
  const { building } = await svc.freshness();
  if (building) {
    const eta = building.etaSeconds !== null ? `, about ${building.etaSeconds} s left` : "";
    throw new ToolError(
      "index-not-ready",
      `The vault is still being embedded (${building.notesEmbedded} of ${building.notesTotal} notes${eta}): find_duplicates answers once every note has a vector; get_vault_info.embedding shows the progress`,
      { progress: building },
    );
  }
  const { paths, packed } = noteVectors(svc.vault.indexDb);
  const pairs = await offloaded.duplicatePairs(svc.vault, packed, threshold, limit, signal);
  return pairs.map((p) => ({ pathA: paths[p.a]!, pathB: paths[p.b]!, similarity: Math.min(1, round(p.similarity)) }));
}

export async function topicMap(
  svc: SemanticService,
  { threshold, minSize, limit, offset, maxNotes }: TopicMapOptions,
  signal?: AbortSignal,
): Promise<TopicMap & { partial?: true; progress?: EmbeddingProgress }> {
  const { building } = await svc.freshness();
  const db = svc.vault.indexDb;
  const { ids, paths, packed } = noteVectors(db);
  const groups = (await offloaded.topicGroups(svc.vault, packed, topicCut(threshold), signal)).filter((g) => g.length >= Math.max(2, minSize));
  const tagsOf = new Map<number, string[]>();
  for (const r of db.query("SELECT id, tags FROM notes").all() as { id: number; tags: string }[]) tagsOf.set(r.id, JSON.parse(r.tags));
  const inLinks = db.query("SELECT DISTINCT n.path AS source FROM links l JOIN notes n ON n.id = l.note_id WHERE l.resolved = ?");
  const clusters: Cluster[] = groups.map((g) => {
    const members = g.map((i) => paths[i]!);
    const memberSet = new Set(members);
    // A hub: a member that at least two other members link to.
    const hasHub = members.some((m) => (inLinks.all(m) as { source: string }[]).filter((r) => r.source !== m && memberSet.has(r.source)).length >= 2);
    // Shared tags: carried by at least half the members (and by two at least), most common first.
    const counts = new Map<string, number>();
    for (const i of g) for (const t of new Set(tagsOf.get(ids[i]!) ?? [])) counts.set(t, (counts.get(t) ?? 0) + 1);
    const need = Math.max(2, Math.ceil(g.length / 2));
    const sharedTags = [...counts]
      .filter(([, c]) => c >= need)
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([t]) => t);
    return { notes: members.sort(), size: members.length, hasHub, sharedTags };
  });
  clusters.sort((a, b) => b.size - a.size || a.notes[0]!.localeCompare(b.notes[0]!));
  const missing = clusters.filter((c) => !c.hasHub);
  // A vault-sized answer (one giant cluster, or thousands of pairs of notes) would swamp an agent: page the
  // clusters and show a few members of each; size still counts them all.
  const shown = (list: Cluster[]) =>
    list.slice(offset, offset + limit).map((c) => (c.notes.length > maxNotes ? { ...c, notes: c.notes.slice(0, maxNotes), notesTruncated: true } : c));
  return {
    clusters: shown(clusters),
    missingHubs: shown(missing),
    total: clusters.length,
    missingHubTotal: missing.length,
    truncated: offset + limit < Math.max(clusters.length, missing.length) || clusters.some((c) => c.notes.length > maxNotes),
    ...partialOf(building ?? undefined),
  };
}
