// move_note and delete_note: operations that change where a note lives.
// A move rewrites the links that point at the note; a delete moves the note
// to .trash/ so that it can be restored.
import { existsSync } from "node:fs";
import { ToolError } from "../errors";
import type { VaultContext } from "../vault-context";
import { BIG_NOTE_BYTES } from "../index/parse-pool";
import { notesAtLinkCap } from "../store/index-db";
import { noteName, targetKeyOf } from "../vault/parse";
import type { LinkRef } from "../index/resolver";
import { foldName, MAX_NAME_BYTES } from "../vault/paths";
import { absOf, sameInode } from "./atomic";
import type { FileChange } from "./commit";
import { packAhead } from "./edit-texts";
import { ChangedLines, linkLineAt, type NoteSource } from "./big-note-links";
import { rewriteLinkLine, rewriteLinksForMove, type MoveRewrite } from "./links";
import { checkExpected, existingPathOf, isImmutable, readStateInTurns, resolveForChange, resolveTarget } from "./notes";
import { decodeText, encodeText } from "./note-text";
import { guessPath, singleNoteOp, type WriteOp } from "./plan";
import { fitBytes } from "../text-cut";
import { turnEvery } from "../platform/turns";
import { withoutTrailing } from "../text-ends";

/** Notes with at least one link that resolves to `path` (the index's view; a note a moment old may be missing). */
export function backlinkSources(vault: VaultContext, path: string): string[] {
  const rows = vault.indexDb
    .query("SELECT DISTINCT n.path AS path FROM links l JOIN notes n ON n.id = l.note_id WHERE l.resolved = ? AND n.path != ? ORDER BY n.path")
    .all(path, path) as { path: string }[];
  return rows.map((r) => r.path);
}

/** Notes other than `path` with a link by the name key `key` that resolves to another note than `path`. */
function linkedByName(vault: VaultContext, key: string, path: string): string[] {
  const rows = vault.indexDb
    .query("SELECT DISTINCT n.path AS path FROM links l JOIN notes n ON n.id = l.note_id WHERE l.target_key = ? AND l.resolved IS NOT NULL AND l.resolved != ? AND n.path != ?")
    .all(key, path, path) as { path: string }[];
  return rows.map((r) => r.path);
}

/**
 * The notes a move reads: the backlinks of `path`; the notes whose links the index holds only in part; and the
 * notes with a link to another note by the destination's name or alias, which the moved note could take over
 * (`[[Foo]]` for deep/Foo.md when Bar.md becomes a/Foo.md, the shorter path).
 */
function moveSources(vault: VaultContext, path: string, to: string): string[] {
  const backlinks = backlinkSources(vault, path);
  // One set, not an includes() per note against the others (a note with thousands of backlinks).
  const more = [...notesAtLinkCap(vault.indexDb).filter((p) => p !== path), ...linkedByName(vault, targetKeyOf(to), path)];
  return more.length ? [...new Set([...backlinks, ...more])].sort() : backlinks;
}

export interface MoveNoteArgs {
  from: string;
  to: string;
  updateLinks?: boolean;
  expectedHash?: string;
}

// Time spent reading and parsing backlinking notes between two turns of other callers. A budget in bytes
// (512 KB) missed the cost of each file's open and read: 20,000 notes of 60 bytes held every caller ~1.1 s.
const TURN_MS = 10;

/**
 * What a move does to one note's text (`bytes`, whose hash is `hash`): its new bytes (null when no link
 * changed) and the links rewritten; null when the note is not UTF-8 (it is not rewritten). A big note's
 * decode, parse, split and encode run in a read worker (./big-note-links.ts), which reads the note from disk
 * (and is sent the bytes if the note has changed since), and only each link's new text here: on the thread
 * answering every caller, a 30 MB note held them all ~0.4 s. The pool is loaded on first need (the CLI).
 */
async function rewriteNote(vault: VaultContext, path: string, bytes: Uint8Array, hash: string, r: MoveRewrite): Promise<Rewritten | null> {
  if (bytes.length < BIG_NOTE_BYTES) {
    let t;
    try {
      t = decodeText(path, bytes);
    } catch {
      return null;
    }
    const res = rewriteLinksForMove(t.text, r);
    return { after: res.count ? encodeText(t, res.text) : null, count: res.count, unwritable: res.unwritable };
  }
  const onDisk = await rewriteBigNote(vault, path, { root: vault.root, path, hash }, r);
  // Given the bytes themselves, the worker never answers "changed".
  return onDisk !== "changed" ? onDisk : ((await rewriteBigNote(vault, path, bytes, r)) as Rewritten | null);
}

/** A note's new bytes after a move (null: no link changed), the links rewritten, and those left for the person. */
type Rewritten = { after: Uint8Array | null; count: number; unwritable: number };

async function rewriteBigNote(vault: VaultContext, path: string, from: NoteSource, r: MoveRewrite): Promise<Rewritten | null | "changed"> {
  const { offloaded } = await import("../offload/offloaded");
  const lines = await offloaded.noteLinkLines(vault, path, from);
  if (lines === "unsupported") return null;
  if (lines === "changed") return lines;
  const changed = new ChangedLines();
  let count = 0;
  let unwritable = 0;
  const turn = turnEvery(TURN_MS);
  for (let i = 0; i < lines.line.length; i++) {
    await turn();
    const l = linkLineAt(lines, i);
    const res = rewriteLinkLine(l.text, l, r);
    unwritable += res.unwritable;
    if (!res.count) continue;
    changed.add(l.line, res.text);
    count += res.count;
  }
  if (!count) return { after: null, count, unwritable };
  const after = await offloaded.spliceNoteLines(vault, path, from, changed.packed());
  return after === "changed" ? after : { after, count, unwritable };
}

/** `to` as `mv` reads it: a destination ending in "/" is a folder the note moves into, keeping its name. */
function intoFolder(to: string, src: string): string {
  return to.endsWith("/") ? withoutTrailing(to, "/") + "/" + src.slice(src.lastIndexOf("/") + 1) : to;
}

export const moveNoteOp: WriteOp<MoveNoteArgs> = {
  name: "move_note",
  lockPaths(vault, a) {
    const src = existingPathOf(vault, a.from);
    const links = src && a.updateLinks !== false ? moveSources(vault, src, intoFolder(a.to, src)) : [];
    return [...guessPath(a.from), ...(src ? [src] : []), ...guessPath(src ? intoFolder(a.to, src) : a.to), ...links];
  },
  pinned: (a) => a.expectedHash !== undefined,
  async plan(vault, a, base) {
    const src = await resolveForChange(vault, a.from, "moved", base, a.expectedHash);
    const dst = await resolveTarget(vault, intoFolder(a.to, src.path), { caseTwin: false });
    if (dst.path === src.path) throw new ToolError("invalid-input", `${src.path} is already at that path`);
    // A new spelling of the same file; not a twin that happens to differ only in case (sameInode).
    const caseOnly = foldName(dst.path) === foldName(src.path) && (dst.bytes === null || sameInode(src.abs, dst.abs));
    if (!caseOnly) {
      // A twin in any script: SQLite's NOCASE folds ASCII only, and a move to `über.md` beside `Über.md`
      // made a twin that took over the person's [[Über]] links (the Unicode audit of 2026-12-05).
      const twin = dst.bytes !== null ? dst : await resolveTarget(vault, a.to);
      const clash = twin.bytes !== null || vault.indexDb.query("SELECT 1 FROM notes WHERE path = ? COLLATE NOCASE").get(dst.path) !== null;
      if (clash) {
        if (base) checkExpected(twin, null);
        throw new ToolError("already-exists", `${twin.path} already exists; pick another destination or delete that note first`, { path: twin.path });
      }
    }

    const changes: FileChange[] = [{ action: "move", from: src.path, path: dst.path, before: src.bytes, after: src.bytes }];
    await packAhead(src.bytes, src.hash);
    const updated: string[] = [];
    const skipped: { path: string; reason: string }[] = [];
    let linkCount = 0;
    if (a.updateLinks !== false) {
      const resolver = vault.indexer.resolver;
      // Folded in every script (SQLite's NOCASE folds ASCII only): a bare [[über]] also names A/Über.md.
      const others = resolver.notesNamed(dst.path).filter((p) => p !== src.path);
      const dstKey = targetKeyOf(dst.path);
      const common = {
        from: src.path,
        to: dst.path,
        resolve: resolver.resolve.bind(resolver),
        // Only a link by the destination's name (or alias), or the moved note's own, can resolve otherwise after.
        resolveAfter: (link: LinkRef, source: string) =>
          source === dst.path || targetKeyOf(link.target) === dstKey ? resolver.resolveAfterMove(link, source, src.path, dst.path) : resolver.resolve(link, source),
        aliases: resolver.aliasesFor(src.path),
        nameUnique: others.length === 0,
      };
      // The moved note's own relative links and self-links (not rewritten when it is not UTF-8).
      const own = await rewriteNote(vault, src.path, src.bytes!, src.hash!, { ...common, oldSource: src.path, newSource: dst.path });
      if (own?.after) {
        changes.push({ action: "write", path: dst.path, before: src.bytes, after: own.after });
        linkCount += own.count;
      }
      const turn = turnEvery(TURN_MS);
      for (const path of moveSources(vault, src.path, dst.path)) {
        // Other callers get a turn between notes, not only after all of them (the small ones are parsed here).
        await turn();
        if (isImmutable(vault, path)) {
          skipped.push({ path, reason: "immutable-path" });
          continue;
        }
        const st = await readStateInTurns(vault, path);
        if (st.bytes === null) continue;
        const res = await rewriteNote(vault, path, st.bytes, st.hash!, { ...common, oldSource: path, newSource: path });
        if (res === null) {
          skipped.push({ path, reason: "unsupported-encoding" });
          continue;
        }
        // A property whose YAML could not hold the new name as written: left for the person (and said).
        if (res.unwritable) skipped.push({ path, reason: "property-quoting" });
        if (!res.after) continue;
        changes.push({ action: "write", path, before: st.bytes, after: res.after });
        updated.push(path);
        linkCount += res.count;
      }
    }
    return {
      changes,
      base: { [src.path]: src.hash, [dst.path]: null },
      primary: dst.path,
      summary: `Move ${src.path} to ${dst.path}${updated.length ? ` and update links in ${updated.length} note${updated.length === 1 ? "" : "s"}` : ""}`,
      result: { from: src.path, linksUpdated: linkCount, notesUpdated: updated, notesNotUpdated: skipped },
    };
  },
};

export interface DeleteNoteArgs {
  path: string;
  expectedHash?: string;
}

/** A free path under .trash/ that keeps the note's folders, numbered when the name is taken. */
export function trashPathFor(root: string, path: string): string {
  const base = `.trash/${path}`;
  if (!existsSync(absOf(root, base))) return base;
  const stem = base.replace(/\.md$/i, "");
  const cut = stem.lastIndexOf("/") + 1;
  for (let n = 2; ; n++) {
    // " (2)" must still fit in a name: a 255-byte name would get ENAMETOOLONG (it was kind internal).
    const suffix = ` (${n}).md`;
    const name = fitBytes(stem.slice(cut), MAX_NAME_BYTES - Buffer.byteLength(suffix));
    const p = `${stem.slice(0, cut)}${name}${suffix}`;
    if (!existsSync(absOf(root, p))) return p;
  }
}

export const deleteNoteOp = singleNoteOp<DeleteNoteArgs>("delete_note", async (vault, a, base) => {
  const st = await resolveForChange(vault, a.path, "deleted", base, a.expectedHash);
  const trash = trashPathFor(vault.root, st.path);
  // Its text goes to the timeline whole: compressed now, off the event loop (edit-texts.ts).
  await packAhead(st.bytes, st.hash);
  return {
    changes: [{ action: "delete", path: st.path, trash, before: st.bytes, after: null }],
    base: { [st.path]: st.hash },
    primary: null,
    summary: `Delete ${st.path} (to ${trash})`,
    result: { trashPath: trash, brokenBacklinks: backlinkSources(vault, st.path) },
  };
});
