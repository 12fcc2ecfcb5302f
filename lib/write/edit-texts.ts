// The texts of the agent-edits timeline, each stored once, compressed, and
// where it pays as the bytes it changes in another text of the timeline (its
// edit's before-text). Rows of agent_edits name their texts by hash.
//
// Why: every row used to hold its note's whole text before and after. A
// one-byte edit of a 2 MiB note stored 4 MB, a move stored every linking note
// twice, and each append_log stored the whole log.md twice, so the timeline
// grew with the square of the log (the growth audit of 2026-12-05). Now an
// edit costs about what it changed, plus a whole copy of the note every
// MAX_DEPTH edits of it. Rows written before this (bytes in agent_edits'
// own before/after columns) are read as they are.
import type { Database } from "bun:sqlite";
import { nextTurn } from "../platform/turns";
import { claimParts, deleteParts, dropUnclaimed, PART_BYTES, partsOf, writeParts } from "./text-parts";

/** Deltas walked at most from a text to a whole one: reading a text costs at most this many copies of it. */
const MAX_DEPTH = 64;
/** A delta is kept when the bytes it holds are at most this share of the text; otherwise the text goes in whole. */
const DELTA_SHARE = 0.5;
const RAW = 0;
const ZSTD = 1;

interface TextRow {
  id: number;
  base: number | null;
  depth: number;
  codec: number;
  prefix: number;
  suffix: number;
  data: Uint8Array;
  /** The group of parts that continue `data` (./text-parts.ts); null: `data` is all of it. */
  parts: number | null;
  size: number;
}

/**
 * Whole texts compressed ahead of their write, off the event loop, by hash. Compressed in the write's own
 * transaction, the 30 MB note a write_note replaced held every other caller ~300 ms (zstd on prose).
 */
const packedAhead = new Map<string, { codec: number; data: Uint8Array }>();
/** Texts smaller than this are packed in the transaction: a few milliseconds at most. */
const PACK_AHEAD_BYTES = 1024 * 1024;
/** Packed texts held for writes still to come (a plan refused later leaves its text here until pushed out). */
const PACKED_AHEAD_KEPT = 4;

/**
 * Compress `bytes` now, off the event loop, for the timeline row a write about to be committed will store
 * (unless the timeline has the text already: then this was work on another thread for nothing).
 */
export async function packAhead(bytes: Uint8Array | null, hash: string | null): Promise<void> {
  if (!bytes || !hash || bytes.length < PACK_AHEAD_BYTES || packedAhead.has(hash)) return;
  packedAhead.set(hash, await packOff(bytes));
  while (packedAhead.size > PACKED_AHEAD_KEPT) packedAhead.delete(packedAhead.keys().next().value!);
}

const zstdOff = async (bytes: Uint8Array) => new Uint8Array(await Bun.zstdCompress(bytes));

async function packOff(bytes: Uint8Array): Promise<{ codec: number; data: Uint8Array }> {
  const z = await zstdOff(bytes);
  return z.length < bytes.length ? { codec: ZSTD, data: z } : { codec: RAW, data: bytes };
}

/** A big text ready for its row: `data` goes into edit_texts, the rest is in the group of parts `parts` already. */
export interface StagedText {
  codec: number;
  data: Uint8Array;
  parts: number | null;
  /** Set when `data` is a delta: the bytes between `prefix` and `suffix` of the text, the rest the base's (by hash). */
  delta?: { base: string; prefix: number; suffix: number };
}

/** One commit's staged texts, by hash. */
export type StagedTexts = Map<string, StagedText>;

/**
 * Ready a big text that a timeline row is about to keep (the note a write replaces, deletes or moves, and a
 * move's or edit's new text of such a note), unless the timeline has it already: compressed off the event
 * loop (packAhead's work, if the plan did it), and its bytes past the first part written as parts, each in a
 * transaction of its own (./text-parts.ts). The row's transaction then inserts one part: the 19 MB a 30 MB
 * note compresses to, inserted in it, held every other caller ~70 ms, and the new text of a 30 MB note a move
 * rewrote, compressed there, ~300 ms. `base`: the row's before-text, which the text is stored as a delta of
 * when that is small (insertText's rule, decided here). unstage() afterwards removes what no row took.
 */
export async function stageText(db: Database, bytes: Uint8Array, hash: string, staged: StagedTexts, base?: { bytes: Uint8Array; hash: string }): Promise<void> {
  if (bytes.length < PACK_AHEAD_BYTES || staged.has(hash) || rowOf(db, hash)) return;
  // The base goes in before the text, in the same transaction: the row it has now, or a whole text (depth 0).
  const delta = base && (rowOf(db, base.hash)?.depth ?? 0) < MAX_DEPTH ? deltaOf(base.bytes, bytes) : null;
  const kept = delta ? bytes.subarray(delta.prefix, bytes.length - delta.suffix) : bytes;
  let packed = delta ? undefined : packedAhead.get(hash);
  packedAhead.delete(hash);
  packed ??= await packOff(kept);
  // A text in parts is stored compressed even when that saves nothing: an older Lettuce still running on the
  // vault reads edit_texts.data alone, and a cut zstd frame fails there where raw bytes read as a 1 MiB note
  // (its revert wrote that back; the review of 2026-12-07).
  if (packed.codec === RAW && packed.data.length > PART_BYTES) packed = { codec: ZSTD, data: await zstdOff(kept) };
  const { head, group } = await writeParts(db, packed.data);
  staged.set(hash, { codec: packed.codec, data: head, parts: group, ...(delta ? { delta: { base: base!.hash, ...delta } } : {}) });
}

/** After the rows' transaction, committed or not: parts no text claimed go. */
export function unstage(db: Database, staged: StagedTexts): void {
  for (const s of staged.values()) if (s.parts !== null) dropUnclaimed(db, s.parts);
  staged.clear();
}

function pack(bytes: Uint8Array, hash?: string): StagedText {
  const ahead = hash === undefined ? undefined : packedAhead.get(hash);
  if (ahead) {
    packedAhead.delete(hash!);
    return { ...ahead, parts: null };
  }
  if (bytes.length < 64) return { codec: RAW, data: bytes, parts: null };
  const z = Bun.zstdCompressSync(bytes);
  return z.length < bytes.length ? { codec: ZSTD, data: z, parts: null } : { codec: RAW, data: bytes, parts: null };
}

/** A row's stored bytes: its own, then its parts. */
function rowData(db: Database, r: TextRow): Uint8Array {
  const data = r.data instanceof Uint8Array ? r.data : new Uint8Array(r.data as ArrayBuffer);
  return r.parts === null ? data : Buffer.concat([data, ...partsOf(db, r.parts)]);
}

/** Parts only continue whole texts: one missing must not pass for the text. */
function checked(r: TextRow, text: Uint8Array): Uint8Array {
  if (r.parts !== null && text.length !== r.size) throw new Error(`a text of the agent-edits timeline is incomplete (${text.length} of ${r.size} bytes)`);
  return text;
}

function unpack(db: Database, r: TextRow): Uint8Array {
  const data = rowData(db, r);
  return checked(r, r.codec === ZSTD ? new Uint8Array(Bun.zstdDecompressSync(data)) : data);
}

/** unpack, decompressing off the event loop (a 30 MB text ~50-100 ms). */
async function unpackOff(db: Database, r: TextRow): Promise<Uint8Array> {
  const data = rowData(db, r);
  return checked(r, r.codec === ZSTD ? new Uint8Array(await Bun.zstdDecompress(data)) : data);
}

/** Bytes `a` and `b` share at their start, and then at their end (not overlapping the start). */
function sharedEnds(a: Uint8Array, b: Uint8Array): { prefix: number; suffix: number } {
  const max = Math.min(a.length, b.length);
  // Compared a block at a time natively, then byte by byte in the block that differs: a byte loop over two
  // 30 MB texts held every other caller ~40 ms.
  const same = (i: number, j: number, n: number) => Buffer.compare(a.subarray(i, i + n), b.subarray(j, j + n)) === 0;
  let prefix = 0;
  while (prefix + BLOCK <= max && same(prefix, prefix, BLOCK)) prefix += BLOCK;
  while (prefix < max && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (suffix + BLOCK <= max - prefix && same(a.length - suffix - BLOCK, b.length - suffix - BLOCK, BLOCK)) suffix += BLOCK;
  while (suffix < max - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix++;
  return { prefix, suffix };
}
const BLOCK = 4096;

/** `bytes` as a delta of `base` (what they share at the ends), when the bytes it keeps are few enough. */
function deltaOf(base: Uint8Array, bytes: Uint8Array): { prefix: number; suffix: number } | null {
  const { prefix, suffix } = sharedEnds(base, bytes);
  return bytes.length - prefix - suffix <= bytes.length * DELTA_SHARE ? { prefix, suffix } : null;
}

function rowOf(db: Database, hash: string): { id: number; depth: number } | null {
  return db.query("SELECT id, depth FROM edit_texts WHERE hash = ?").get(hash) as { id: number; depth: number } | null;
}

/**
 * Keep `bytes` (whose hash is `hash`) for one more timeline row, unless the timeline has it already (then it
 * counts one more reference). `base`: a text it likely shares most bytes with (its edit's before-text),
 * stored first; the text then goes in as a delta when that is small. Inside the caller's write transaction.
 */
export function storeText(db: Database, bytes: Uint8Array, hash: string, base?: { bytes: Uint8Array; hash: string }, staged?: StagedTexts): void {
  insertText(db, bytes, hash, base, staged);
  db.query("UPDATE edit_texts SET refs = refs + 1 WHERE hash = ?").run(hash);
}

function insertText(db: Database, bytes: Uint8Array, hash: string, base?: { bytes: Uint8Array; hash: string }, staged?: StagedTexts): void {
  if (rowOf(db, hash)) return;
  const ready = staged?.get(hash);
  // Whole, unless a delta of the base is small enough (and the base's chain short enough); a staged text was
  // decided on when it was staged (its base is in by now, being its row's before-text).
  const from = base ? rowOf(db, ready?.delta?.base ?? base.hash) : null;
  let row = { base: null as number | null, depth: 0, prefix: 0, suffix: 0, kept: bytes };
  let packed: StagedText | undefined;
  if (ready && (!ready.delta || (from && from.depth < MAX_DEPTH))) {
    packed = ready;
    if (ready.delta) row = { base: from!.id, depth: from!.depth + 1, prefix: ready.delta.prefix, suffix: ready.delta.suffix, kept: bytes };
  } else if (base && from && from.depth < MAX_DEPTH) {
    const delta = deltaOf(base.bytes, bytes);
    if (delta) row = { base: from.id, depth: from.depth + 1, ...delta, kept: bytes.subarray(delta.prefix, bytes.length - delta.suffix) };
  }
  // A staged text that could not be used as staged (never expected) is packed here; unstage drops its parts.
  const { codec, data, parts } = packed ?? pack(row.kept, row.kept === bytes ? hash : undefined);
  db.query("INSERT INTO edit_texts(hash, base, depth, refs, size, codec, prefix, suffix, data, parts) VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?)").run(
    hash, row.base, row.depth, bytes.length, codec, row.prefix, row.suffix, data, parts,
  );
  if (parts !== null) claimParts(db, parts);
}

/** The rows that make the text with this hash, its whole base last; null when the timeline does not hold it. */
function textChain(db: Database, hash: string): TextRow[] | null {
  const byHash = db.query("SELECT id, base, depth, codec, prefix, suffix, data, parts, size FROM edit_texts WHERE hash = ?");
  const byId = db.query("SELECT id, base, depth, codec, prefix, suffix, data, parts, size FROM edit_texts WHERE id = ?");
  const chain: TextRow[] = [];
  let r = byHash.get(hash) as TextRow | null;
  while (r) {
    chain.push(r);
    if (r.base === null) break;
    // A base is never deleted while a delta names it (releaseTexts), and has a smaller depth: the walk ends.
    r = byId.get(r.base) as TextRow | null;
    if (r && r.depth >= chain[chain.length - 1]!.depth) return null;
  }
  return chain.length && chain[chain.length - 1]!.base === null ? chain : null;
}

/** A delta's text: the base's first `prefix` bytes, the delta's own, the base's last `suffix`. */
function withDelta(base: Uint8Array, d: TextRow, middle: Uint8Array): Uint8Array {
  const out = new Uint8Array(d.prefix + middle.length + d.suffix);
  out.set(base.subarray(0, d.prefix), 0);
  out.set(middle, d.prefix);
  out.set(base.subarray(base.length - d.suffix), d.prefix + middle.length);
  return out;
}

/** The text with this hash, or null when the timeline does not hold it. */
export function loadText(db: Database, hash: string): Uint8Array | null {
  const chain = textChain(db, hash);
  if (!chain) return null;
  let text = unpack(db, chain.pop()!);
  for (let d = chain.pop(); d; d = chain.pop()) text = withDelta(text, d, unpack(db, d));
  return text;
}

/**
 * loadText for a text that may be big (a revert, the web UI's view of an edit): decompressed off the event
 * loop, with turns for other callers between the rows of a delta chain. At once, a 30 MB text held them
 * 150-180 ms on a revert.
 */
export async function loadTextInTurns(db: Database, hash: string): Promise<Uint8Array | null> {
  const chain = textChain(db, hash);
  if (!chain) return null;
  let text = await unpackOff(db, chain.pop()!);
  for (let d = chain.pop(); d; d = chain.pop()) {
    await nextTurn();
    text = withDelta(text, d, await unpackOff(db, d));
  }
  return text;
}

/**
 * One timeline row fewer names each of these texts (a call that never landed: a conflict with a person's
 * save, or recovery after a crash); a text no row names and no delta is based on goes. By count, not by
 * looking for rows: before_hash has no index, and rows from before edit_texts hold their texts inline,
 * which a scan would read through.
 */
export function releaseTexts(db: Database, hashes: string[]): void {
  const dec = db.query("UPDATE edit_texts SET refs = refs - 1 WHERE hash = ? AND refs > 0");
  for (const h of hashes) dec.run(h);
  const byHash = db.query("SELECT id, base, parts FROM edit_texts WHERE hash = ? AND refs = 0");
  const byId = db.query("SELECT id, base, parts FROM edit_texts WHERE id = ? AND refs = 0");
  const based = db.query("SELECT 1 FROM edit_texts WHERE base = ? LIMIT 1");
  const del = db.query("DELETE FROM edit_texts WHERE id = ?");
  type Text = { id: number; base: number | null; parts: number | null };
  // A text gone, its base may be unused too (named by no row, no other delta on it): down the chain. Twice
  // over the hashes: one of them may be the base of a delta among them that goes later in the first pass.
  for (let pass = 0; pass < 2; pass++) {
    for (const h of new Set(hashes)) {
      let r = byHash.get(h) as Text | null;
      while (r && !based.get(r.id)) {
        del.run(r.id);
        if (r.parts !== null) deleteParts(db, r.parts);
        r = r.base === null ? null : (byId.get(r.base) as Text | null);
      }
    }
  }
}
