// What every write operation needs before it plans a change: a safe,
// canonical path for the note, its current bytes and hash, and the rules
// (immutable prefixes, expected hashes, size) checked the same way each time.
import { lstatSync, readdirSync, statSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { dirname } from "node:path";
import { ToolError } from "../errors";
import { findNote } from "../retrieval/notes";
import type { VaultContext } from "../vault-context";
import { existingFolderSpelling, foldName, isIgnoredPath, lstatInVault, pathSpellings, safeAbsPath } from "../vault/paths";
import { mimeTypeOf } from "../vault/mime";
import { absOf, HASH_SLICE_BYTES, hashBytes, readBytes } from "./atomic";
import { readBigFile } from "./read-hashed";
import { maxNoteBytes } from "./limits";
import { expectationFor, type Base } from "./plan";
import { DISGUISING } from "../control-chars";
import { withoutTrailing } from "../text-ends";
import { turnEvery } from "../platform/turns";

export interface NoteState {
  path: string;
  abs: string;
  bytes: Buffer | null;
  hash: string | null;
}

/**
 * `cap`: the largest note on disk the caller can use (SizeCap); a bigger one is too-large before it is read.
 * Reading, hashing and decoding a 30 MB note held every other caller 150-850 ms only to refuse the result.
 */
export function readState(vault: VaultContext, path: string, cap?: SizeCap): NoteState {
  const abs = absOf(vault.root, path);
  if (cap) refuseOverCap(path, abs, cap);
  const bytes = readBytes(abs);
  return { path, abs, bytes, hash: bytes === null ? null : hashBytes(bytes) };
}

/**
 * readState for a note that may be big (the one write_note replaces): read off the event loop and hashed in
 * slices with turns for other callers between. Reading and hashing a 30 MB note held them ~50 ms.
 */
export async function readStateInTurns(vault: VaultContext, path: string, cap?: SizeCap): Promise<NoteState> {
  const abs = absOf(vault.root, path);
  if (cap) refuseOverCap(path, abs, cap);
  let size = 0;
  try {
    size = lstatSync(abs).size;
  } catch {
    /* absent: readState says so */
  }
  const big = size > HASH_SLICE_BYTES ? await readBigFile(abs, path.slice(path.lastIndexOf("/") + 1)) : null;
  // Small, or no regular file once opened (a link, a folder, a pipe, nothing): readState's answer.
  return big ? { path, abs, bytes: big.bytes, hash: big.hash } : readState(vault, path);
}

/** The most bytes a call could take out of a note, and what to tell an agent when even that is not enough. */
export interface SizeCap {
  removable: number;
  hint: string;
}

function refuseOverCap(path: string, abs: string, cap: SizeCap): void {
  let size: number;
  try {
    const st = lstatSync(abs);
    if (!st.isFile()) return;
    size = st.size;
  } catch {
    return; // absent: the read says so
  }
  const limit = maxNoteBytes();
  // A file that grows between this look and the read is still caught by checkSize on the result.
  if (size - cap.removable <= limit) return;
  throw new ToolError("too-large", `${path} is ${size} bytes, over the limit of ${limit} bytes a write may leave, and this call cannot bring it under: ${cap.hint}`, {
    size,
    limit,
  });
}

function refuseHidden(rel: string, input: string): void {
  if (isIgnoredPath(rel)) {
    throw new ToolError("path-invalid", `Invalid path ${JSON.stringify(input)}: agents may not write into hidden folders (.trash, .obsidian, .git, …)`);
  }
}

/** Add ".md" to a path without it; refuse paths that name some other kind of file. */
function asNotePath(rel: string, input: string): string {
  if (/\.md$/i.test(rel)) return rel;
  if (mimeTypeOf(rel) !== "application/octet-stream") {
    throw new ToolError("not-a-note", `Not a note: ${JSON.stringify(input)} is not a Markdown file; write tools only change .md notes`);
  }
  return rel + ".md";
}

/**
 * An existing note named by an agent: the exact path on disk (its literal
 * spelling first, then decoded and NFC/NFD ones), else the index's forgiving
 * lookup (case-insensitive, ".md" optional). note-not-found otherwise. Read in
 * turns: it may be big (a note a call deletes, moves or shrinks).
 */
export async function resolveExisting(vault: VaultContext, input: string, cap?: SizeCap): Promise<NoteState> {
  for (const path of candidates(vault, input)) {
    const st = await readStateInTurns(vault, path, cap);
    if (st.bytes !== null) return st;
  }
  throw new ToolError("note-not-found", `Note not found: ${pathSpellings(input)[0]}`);
}

/**
 * The path resolveExisting would find, without reading the note (a citation, a lock's guess: reading a 30 MB
 * note only to learn its path held every other caller): note-not-found or path-invalid as resolveExisting.
 */
export function existingPath(vault: VaultContext, input: string): string {
  for (const path of candidates(vault, input)) if (lstatInVault(vault.root, path)?.isFile()) return path;
  throw new ToolError("note-not-found", `Note not found: ${pathSpellings(input)[0]}`);
}

/** existingPath, or null when there is no such note (nothing to lock). */
export function existingPathOf(vault: VaultContext, input: string): string | null {
  try {
    return existingPath(vault, input);
  } catch {
    return null;
  }
}

/** Where resolveExisting looks, in order; the index is asked only once the disk's spellings are tried. */
function* candidates(vault: VaultContext, input: string): Generator<string> {
  const spellings = pathSpellings(input);
  refuseHidden(spellings[0]!, input);
  for (const s of spellings) safeAbsPath(vault.root, s);
  for (const s of spellings) if (/\.md$/i.test(s) && lstatInVault(vault.root, s)?.isFile()) yield s;
  yield findNote(vault.indexDb, vault.root, spellings[0]!).path;
}

/** The files in the folder of `rel` whose names are `rel`'s up to case and Unicode normalisation, as spelled on disk. */
export function nameTwinsOnDisk(root: string, rel: string): string[] {
  try {
    return twinsAmong(root, rel, readdirSync(dirname(absOf(root, rel))));
  } catch {
    return [];
  }
}

/**
 * nameTwinsOnDisk with the folder listed off the event loop, and the names compared in slices with turns for
 * other callers between: listing and folding a folder of 30,000 notes held every other caller ~50 ms each
 * time, three times a file_page. Listed at each call, never from a cache: a twin a person made a moment ago,
 * not yet indexed, is found as before.
 */
export async function nameTwinsInFolder(root: string, rel: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dirname(absOf(root, rel)));
  } catch {
    return [];
  }
  const turn = turnEvery(FOLD_SLICE_MS);
  const key = twinKey(rel);
  const hits: string[] = [];
  for (let i = 0; i < names.length; i++) {
    if (i % 512 === 0) await turn();
    if (foldName(names[i]!) === key) hits.push(names[i]!);
  }
  return twinsAmong(root, rel, hits);
}

/** Folding names between two turns of other callers. */
const FOLD_SLICE_MS = 4;

const twinKey = (rel: string) => foldName(rel.slice(rel.lastIndexOf("/") + 1));

/** The files among `names` (in the folder of `rel`) that fold to `rel`'s name, as vault paths. */
function twinsAmong(root: string, rel: string, names: string[]): string[] {
  const slash = rel.lastIndexOf("/");
  const folder = slash === -1 ? "" : rel.slice(0, slash);
  const key = twinKey(rel);
  const out: string[] = [];
  for (const name of names) {
    if (foldName(name) !== key) continue;
    const path = folder ? `${folder}/${name}` : name;
    if (lstatInVault(root, path)?.isFile()) out.push(path);
  }
  return out;
}

/**
 * A path an agent wants to create (or replace). When the vault already has
 * the note under another letter case or Unicode normalisation (an NFD
 * `Café.md` from macOS, asked for in NFC), that note is meant: creating a
 * twin would break on macOS and Windows and in sync tools. A new note goes
 * into existing folders as they are spelled on disk (`PLUGINS/x.md` lands in `Plugins/`).
 */
export async function resolveTarget(vault: VaultContext, input: string, opts: { caseTwin?: boolean } = {}): Promise<NoteState> {
  const spellings = pathSpellings(input).map((s) => asNotePath(s, input));
  const literal = spellings[0]!;
  refuseHidden(literal, input);
  for (const s of spellings) safeAbsPath(vault.root, s);
  try {
    if (statSync(absOf(vault.root, literal)).isDirectory()) throw new ToolError("path-invalid", `Invalid path ${JSON.stringify(input)}: it is a folder`);
  } catch (e) {
    if (e instanceof ToolError) throw e;
  }
  for (const s of spellings) {
    const st = await readStateInTurns(vault, s);
    if (st.bytes !== null) return st;
  }
  const rel = existingFolderSpelling(vault.root, literal);
  if (rel !== literal) {
    // Respelled to the disk's folders: check the hidden rules again on what will really be written.
    refuseHidden(rel, input);
    safeAbsPath(vault.root, rel);
  }
  const st = await readStateInTurns(vault, rel);
  if (st.bytes !== null) return st;
  if (opts.caseTwin === false) return newName(vault, st, input);
  for (const s of [rel, ...spellings]) {
    const twin = vault.indexDb.query("SELECT path FROM notes WHERE path = ? COLLATE NOCASE").get(s) as { path: string } | null;
    if (twin && twin.path !== s) {
      const t = await readStateInTurns(vault, twin.path);
      if (t.bytes !== null) return t;
    }
  }
  const onDisk = (await nameTwinsInFolder(vault.root, rel))[0];
  if (onDisk && onDisk !== rel) {
    const t = await readStateInTurns(vault, onDisk);
    if (t.bytes !== null) return t;
  }
  return newName(vault, st, input);
}

/**
 * A note an agent is about to create (or move to): no new file or folder name may hold a character that
 * shows nothing or reorders what follows. "AGENTS\u200b.md" reads as AGENTS.md, and "notes/\u202egnitteem.md"
 * as "notes/dm.meeting", in the proposal a person approves (the Unicode audit of 2026-12-05). Names already
 * on disk stay reachable.
 */
// What a wikilink cannot hold in its target (Obsidian warns of the same): `[[X#Y]]` is X's heading Y, `[[X|Y]]`
// X shown as Y, `[[X]Y]]` no link at all. A move to `X#Y.md` rewrote every link to one pointing at X.md.
const LINK_BREAKING = /[#^[\]|]/;
// C1 controls (U+0085 NEXT LINE among them) and the line and paragraph separators: a terminal, an editor or a
// line-based answer (the digest, the CLI) breaks a line there or runs the control, as with the C0 controls
// every path refuses (lib/vault/paths.ts). Refused only in new names: a person's note so named stays readable.
const LINE_BREAKING = /[\u0080-\u009f\u2028\u2029]/;

function newName(vault: VaultContext, st: NoteState, input: string): NoteState {
  const parts = st.path.split("/");
  for (let i = 0; i < parts.length; i++) {
    const hidden = DISGUISING.test(parts[i]!);
    const control = LINE_BREAKING.test(parts[i]!);
    if (!hidden && !control && !LINK_BREAKING.test(parts[i]!)) continue;
    if (i < parts.length - 1 && lstatInVault(vault.root, parts.slice(0, i + 1).join("/"))?.isDirectory()) continue;
    const why = hidden
      ? "invisible or direction-changing characters"
      : control
        ? "control characters or line separators"
        : "# ^ [ ] or | (a link could not name it)";
    throw new ToolError("path-invalid", `Invalid path ${JSON.stringify(input)}: a new name may not hold ${why} (${JSON.stringify(parts[i])})`);
  }
  return st;
}

/** True when agents may create `path` but never change, move or delete it. */
export function isImmutable(vault: VaultContext, path: string): boolean {
  // Folded on both sides: a folder a Mac or a sync client wrote in NFD, named in the config in NFC, was
  // not protected at all (the Unicode audit of 2026-12-05).
  const p = foldName(path);
  for (const raw of vault.immutablePaths) {
    const prefix = foldName(raw.replace(/^\/+/, ""));
    if (!prefix) continue;
    if (p === prefix || p === withoutTrailing(prefix, "/") || p.startsWith(prefix.endsWith("/") ? prefix : prefix + "/")) return true;
  }
  return false;
}

export function refuseImmutable(vault: VaultContext, path: string, what: string): void {
  if (isImmutable(vault, path)) {
    throw new ToolError("immutable-path", `${path} is under an immutable prefix (${vault.immutablePaths.join(", ")}): notes there can be created once, never ${what}`, {
      immutablePaths: vault.immutablePaths,
    });
  }
}

/**
 * An existing note an operation will change, move or delete (`what`): resolved,
 * outside the immutable prefixes, and as the caller (or the proposal's base) saw it.
 */
export async function resolveForChange(
  vault: VaultContext,
  input: string,
  what: string,
  base: Base | undefined,
  expectedHash: string | undefined,
  cap?: SizeCap,
): Promise<NoteState> {
  const st = await resolveExisting(vault, input, cap);
  refuseImmutable(vault, st.path, what);
  checkExpected(st, expectationFor(base, st.path, expectedHash));
  return st;
}

/**
 * Check a note against what the caller believes it holds. `expected` is a
 * hash, or null for "must not exist"; undefined means no expectation.
 */
export function checkExpected(st: NoteState, expected: string | null | undefined): void {
  if (expected === undefined) return;
  if (st.hash === expected) return;
  const now = st.hash === null ? "it no longer exists" : `its hash is now ${st.hash}`;
  const was = expected === null ? "absent" : expected;
  throw new ToolError("conflict", `${st.path} changed since you read it (expected ${was}; ${now}). Read it again and redo the edit.`, {
    path: st.path,
    expectedHash: expected,
    currentHash: st.hash,
  });
}

export function checkSize(path: string, bytes: Uint8Array): void {
  const max = maxNoteBytes();
  if (bytes.length > max) {
    throw new ToolError("too-large", `${path} would be ${bytes.length} bytes; the limit is ${max} bytes per note`, { size: bytes.length, limit: max });
  }
}
