// What every write operation needs before it plans a change: a safe,
// canonical path for the note, its current bytes and hash, and the rules
// (immutable prefixes, expected hashes, size) checked the same way each time.
import { readdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { ToolError } from "../errors";
import { findNote } from "../retrieval/notes";
import type { VaultContext } from "../vault-context";
import { existingFolderSpelling, foldName, isIgnoredPath, lstatInVault, pathSpellings, safeAbsPath } from "../vault/paths";
import { mimeTypeOf } from "../vault/mime";
import { absOf, hashBytes, readBytes } from "./atomic";
import { maxNoteBytes } from "./limits";
import { expectationFor, type Base } from "./plan";
import { DISGUISING } from "../control-chars";
import { withoutTrailing } from "../text-ends";

export interface NoteState {
  path: string;
  abs: string;
  bytes: Buffer | null;
  hash: string | null;
}

export function readState(vault: VaultContext, path: string): NoteState {
  const abs = absOf(vault.root, path);
  const bytes = readBytes(abs);
  return { path, abs, bytes, hash: bytes === null ? null : hashBytes(bytes) };
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
 * lookup (case-insensitive, ".md" optional). note-not-found otherwise.
 */
export function resolveExisting(vault: VaultContext, input: string): NoteState {
  const spellings = pathSpellings(input);
  const rel = spellings[0]!;
  refuseHidden(rel, input);
  for (const s of spellings) safeAbsPath(vault.root, s);
  for (const s of spellings) {
    if (/\.md$/i.test(s) && lstatInVault(vault.root, s)?.isFile()) {
      const st = readState(vault, s);
      if (st.bytes !== null) return st;
    }
  }
  const row = findNote(vault.indexDb, vault.root, rel);
  const st = readState(vault, row.path);
  if (st.bytes === null) throw new ToolError("note-not-found", `Note not found: ${rel}`);
  return st;
}

/** The files in the folder of `rel` whose names are `rel`'s up to case and Unicode normalisation, as spelled on disk. */
export function nameTwinsOnDisk(root: string, rel: string): string[] {
  const slash = rel.lastIndexOf("/");
  const folder = slash === -1 ? "" : rel.slice(0, slash);
  const key = foldName(rel.slice(slash + 1));
  try {
    return readdirSync(dirname(absOf(root, rel)), { withFileTypes: true })
      .filter((d) => d.isFile() && foldName(d.name) === key)
      .map((d) => (folder ? `${folder}/${d.name}` : d.name));
  } catch {
    return [];
  }
}

/**
 * A path an agent wants to create (or replace). When the vault already has
 * the note under another letter case or Unicode normalisation (an NFD
 * `Café.md` from macOS, asked for in NFC), that note is meant: creating a
 * twin would break on macOS and Windows and in sync tools. A new note goes
 * into existing folders as they are spelled on disk (`PLUGINS/x.md` lands in `Plugins/`).
 */
export function resolveTarget(vault: VaultContext, input: string, opts: { caseTwin?: boolean } = {}): NoteState {
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
    const st = readState(vault, s);
    if (st.bytes !== null) return st;
  }
  const rel = existingFolderSpelling(vault.root, literal);
  if (rel !== literal) {
    // Respelled to the disk's folders: check the hidden rules again on what will really be written.
    refuseHidden(rel, input);
    safeAbsPath(vault.root, rel);
  }
  const st = readState(vault, rel);
  if (st.bytes !== null) return st;
  if (opts.caseTwin === false) return newName(vault, st, input);
  for (const s of [rel, ...spellings]) {
    const twin = vault.indexDb.query("SELECT path FROM notes WHERE path = ? COLLATE NOCASE").get(s) as { path: string } | null;
    if (twin && twin.path !== s) {
      const t = readState(vault, twin.path);
      if (t.bytes !== null) return t;
    }
  }
  const onDisk = nameTwinsOnDisk(vault.root, rel)[0];
  if (onDisk && onDisk !== rel) {
    const t = readState(vault, onDisk);
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

function newName(vault: VaultContext, st: NoteState, input: string): NoteState {
  const parts = st.path.split("/");
  for (let i = 0; i < parts.length; i++) {
    const hidden = DISGUISING.test(parts[i]!);
    if (!hidden && !LINK_BREAKING.test(parts[i]!)) continue;
    if (i < parts.length - 1 && lstatInVault(vault.root, parts.slice(0, i + 1).join("/"))?.isDirectory()) continue;
    const why = hidden ? "invisible or direction-changing characters" : "# ^ [ ] or | (a link could not name it)";
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
export function resolveForChange(vault: VaultContext, input: string, what: string, base: Base | undefined, expectedHash: string | undefined): NoteState {
  const st = resolveExisting(vault, input);
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

export interface NoteText {
  /** The text with CRLF turned into LF when the whole file uses CRLF, and without a BOM. */
  text: string;
  crlf: boolean;
  bom: boolean;
}

/**
 * Decode a note for editing. Edits work on LF text; a file that uses CRLF
 * throughout gets CRLF back (encodeText), so its untouched lines keep their
 * bytes. A file with mixed endings is edited as it is.
 */
export function decodeText(path: string, bytes: Uint8Array): NoteText {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  let text = buf.toString("utf8");
  if (!Buffer.from(text, "utf8").equals(buf)) {
    throw new ToolError("unsupported-encoding", `${path} is not valid UTF-8; Lettuce will not rewrite it in part (replace it whole with write_note)`);
  }
  const bom = text.startsWith("\uFEFF");
  if (bom) text = text.slice(1);
  const lf = (text.match(/\n/g) ?? []).length;
  const crlf = lf > 0 && (text.match(/\r\n/g) ?? []).length === lf;
  if (crlf) text = text.replace(/\r\n/g, "\n");
  return { text, crlf, bom };
}

export function encodeText(t: NoteText, text: string): Buffer {
  let out = t.crlf ? text.replace(/\r?\n/g, "\r\n") : text;
  if (t.bom) out = "\uFEFF" + out;
  return Buffer.from(out, "utf8");
}

/**
 * Agent text meant for a note: CRLF folded to LF when the note is edited as LF, that is when it uses CRLF
 * throughout (encodeText restores it) or has no CR at all. A CRLF patch into an LF note wrote mixed endings
 * (the write-content audit); a note already mixed is edited as it is.
 */
export function agentText(t: NoteText, s: string): string {
  return t.crlf || !t.text.includes("\r") ? s.replace(/\r\n/g, "\n") : s;
}
