// The content-changing write operations: each reads the note(s), checks the
// rules (immutable prefixes, expected hashes, limits) and plans the change.
// Moves and deletes live in ops-move.ts.
// The yaml package loads on first use (~19 ms of start-up); most writes never make frontmatter from scratch.
const toYaml = (v: unknown): string => (require("yaml") as typeof import("yaml")).stringify(v);
import { ToolError } from "../errors";
import type { VaultContext } from "../vault-context";
import { noteName } from "../vault/parse";
import { lstatInVault } from "../vault/paths";
import { MAX_EDITS_PER_CALL, maxNoteBytes } from "./limits";
import {
  checkExpected,
  checkSize,
  existingPath,
  nameTwinsInFolder,
  readState,
  refuseImmutable,
  resolveForChange,
  resolveTarget,
  type NoteState,
  type SizeCap,
} from "./notes";
import { agentText, decodeText, encodeText, styleOf, type NoteText } from "./note-text";
import { packAhead } from "./edit-texts";
import { stripMd } from "./links";
import { expectationFor, guessPath, singleNoteOp, type Base, type Plan, type WriteOp } from "./plan";
import {
  appendLogText,
  applyEditsToText,
  completeDirectiveText,
  localDate,
  logHeading,
  patchSectionText,
  refuseHalfPairs,
  type Edit,
  type SectionMode,
} from "./text";

/**
 * A note already over the write limit, which no patch_section or complete_directive can bring under it (they
 * add lines, or replace a section the call cannot see the size of): too-large before it is read.
 */
const GROWS: SizeCap = { removable: 0, hint: "shrink it with apply_edits, or replace it whole with write_note" };

/** Plan a rewrite of one existing note's text: the shared path of apply_edits, patch_section and complete_directive. */
async function planTextEdit(
  vault: VaultContext,
  a: { path: string; expectedHash?: string },
  base: Base | undefined,
  transform: (t: NoteText, path: string) => string,
  summary: (path: string) => string,
  cap: SizeCap = GROWS,
): Promise<Plan> {
  const st = await resolveForChange(vault, a.path, "changed", base, a.expectedHash, cap);
  const t = decodeText(st.path, st.bytes!);
  const out = encodeText(t, transform(t, st.path));
  checkSize(st.path, out);
  const same = out.equals(st.bytes!);
  if (!same) await packAhead(st.bytes, st.hash);
  return {
    changes: same ? [] : [{ action: "write", path: st.path, before: st.bytes, after: out }],
    base: { [st.path]: st.hash },
    primary: st.path,
    summary: summary(st.path),
    result: same ? { unchanged: true } : {},
  };
}

export interface WriteNoteArgs {
  path: string;
  content: string;
  overwrite?: boolean;
  expectedHash?: string;
}

/** Occurrences of `sub` in `s`, not overlapping. */
function countOf(s: string, sub: string): number {
  let n = 0;
  for (let at = s.indexOf(sub); at !== -1; at = s.indexOf(sub, at + sub.length)) n++;
  return n;
}

export const writeNoteOp = singleNoteOp<WriteNoteArgs>("write_note", async (vault, a, base) => {
  refuseHalfPairs("content", a.content);
  // The least the note can be (a BOM dropped, CRLF folded): content over the limit is refused before the
  // note it would replace, up to 64 MB, is read and hashed.
  const least = Buffer.byteLength(a.content) - (a.content.startsWith("\uFEFF") ? 3 : 0) - countOf(a.content, "\r\n");
  if (least > maxNoteBytes()) {
    throw new ToolError("too-large", `The content is at least ${least} bytes; the limit is ${maxNoteBytes()} bytes per note`, { size: least, limit: maxNoteBytes() });
  }
  const st = await resolveTarget(vault, a.path);
  const expected = expectationFor(base, st.path, a.expectedHash);
  if (st.bytes !== null) {
    if (expected === undefined && !a.overwrite) {
      throw new ToolError("already-exists", `${st.path} already exists; pass overwrite: true or the expectedHash from read_note to replace it`, {
        path: st.path,
        currentHash: st.hash,
      });
    }
    refuseImmutable(vault, st.path, "changed");
  }
  checkExpected(st, expected);
  let out: Buffer;
  if (st.bytes !== null) {
    // Not UTF-8: replaced whole, no line-ending style to keep.
    const style = styleOf(st.bytes) ?? { crlf: false, bom: false, mixed: false };
    out = encodeText(style, agentText(style, a.content.replace(/^\uFEFF/, "")));
  } else out = Buffer.from(a.content, "utf8");
  checkSize(st.path, out);
  const same = st.bytes !== null && out.equals(st.bytes);
  // The replaced text goes to the timeline whole: compressed now, off the event loop (edit-texts.ts).
  if (!same) await packAhead(st.bytes, st.hash);
  return {
    changes: same ? [] : [{ action: "write", path: st.path, before: st.bytes, after: out }],
    base: { [st.path]: st.hash },
    primary: st.path,
    summary: `${st.bytes === null ? "Create" : "Replace"} ${st.path}`,
    result: { created: st.bytes === null, ...(same ? { unchanged: true } : {}) },
  };
});

export interface ApplyEditsArgs {
  path: string;
  edits: Edit[];
  expectedHash?: string;
}

export const applyEditsOp = singleNoteOp<ApplyEditsArgs>("apply_edits", (vault, a, base) => {
  if (a.edits.length > MAX_EDITS_PER_CALL) {
    throw new ToolError("too-many-edits", `${a.edits.length} edits in one call; the limit is ${MAX_EDITS_PER_CALL}. Split them over several calls.`, {
      limit: MAX_EDITS_PER_CALL,
    });
  }
  a.edits.forEach((e, i) => {
    refuseHalfPairs(`edits[${i}].find`, e.find, { edit: i });
    refuseHalfPairs(`edits[${i}].replace`, e.replace, { edit: i });
  });
  // The most the edits can take out: each find once, each of its LFs a CRLF on disk. A note past the limit by
  // more is refused unread; past it by less, the edits may bring it under.
  const removable = a.edits.reduce((n, e) => n + Buffer.byteLength(e.find) + countOf(e.find, "\n"), 0);
  const cap = { removable, hint: `its finds take out at most ${removable} bytes; replace it whole with write_note` };
  return planTextEdit(
    vault,
    a,
    base,
    (t) => applyEditsToText(t.text, a.edits.map((e) => ({ find: agentText(t, e.find), replace: agentText(t, e.replace) }))),
    (p) => `Edit ${p} (${a.edits.length} change${a.edits.length === 1 ? "" : "s"})`,
    cap,
  );
});

export interface PatchSectionArgs {
  path: string;
  heading: string;
  mode: SectionMode;
  content: string;
  expectedHash?: string;
}

export const patchSectionOp = singleNoteOp<PatchSectionArgs>("patch_section", (vault, a, base) => {
  refuseHalfPairs("heading", a.heading);
  refuseHalfPairs("content", a.content);
  return planTextEdit(
    vault,
    a,
    base,
    (t, path) => patchSectionText(path, t.text, a.heading, a.mode, agentText(t, a.content)),
    (p) => `${a.mode[0]!.toUpperCase()}${a.mode.slice(1)} section "${a.heading}" of ${p}`,
  );
});

export interface CompleteDirectiveArgs {
  path: string;
  line: number;
  answer?: string;
  expectedHash?: string;
}

export const completeDirectiveOp = singleNoteOp<CompleteDirectiveArgs>("complete_directive", async (vault, a, base) => {
  refuseHalfPairs("answer", a.answer);
  const plan = await planTextEdit(
    vault,
    a,
    base,
    (t, path) => completeDirectiveText(path, t.text, a.line, a.answer === undefined ? undefined : agentText(t, a.answer)),
    (p) => `Complete the directive on line ${a.line} of ${p}`,
  );
  plan.result.line = a.line;
  return plan;
});

/**
 * log.md at the vault root as the index knows it, when it is still there. Each append re-indexes it: listing
 * a root folder of 30,000 notes to find it held every other caller ~50 ms, twice an append_log.
 */
function indexedLog(vault: VaultContext): string | null {
  const known = vault.indexDb.query("SELECT path FROM notes WHERE path = 'log.md' COLLATE NOCASE ORDER BY path = 'log.md' DESC, path").all() as { path: string }[];
  for (const { path } of known) if (lstatInVault(vault.root, path)?.isFile()) return path;
  return null;
}

/** log.md at the vault root, in whatever letter case the vault uses. */
export async function logPath(vault: VaultContext): Promise<string> {
  // No log yet, or one a person made or renamed a moment ago (not indexed yet): as the disk spells it.
  return indexedLog(vault) ?? (await nameTwinsInFolder(vault.root, "log.md"))[0] ?? "log.md";
}

/**
 * The log's lock path, with no listing: lock keys are folded (KeyedLock), so any spelling takes the one
 * lock; the indexed spelling is the file the wait for a save in progress looks at (save-quiet.ts).
 */
const logLock = (vault: VaultContext) => indexedLog(vault) ?? "log.md";

export interface LogArgs {
  op: string;
  title: string;
  body?: string;
  date?: string;
}

/** The log.md change for one ledger entry, and its heading; appends commute, so the log is never pinned to a hash. */
async function planLogAppend(vault: VaultContext, e: LogArgs): Promise<{ st: NoteState; after: Buffer; heading: string }> {
  refuseHalfPairs("op", e.op);
  refuseHalfPairs("title", e.title);
  refuseHalfPairs("body", e.body);
  const st = readState(vault, await logPath(vault));
  if (st.bytes !== null) refuseImmutable(vault, st.path, "changed");
  const entry = { date: e.date ?? localDate(), op: e.op, title: e.title, body: e.body };
  let after: Buffer;
  if (st.bytes === null) after = Buffer.from(appendLogText(null, entry), "utf8");
  else {
    const t = decodeText(st.path, st.bytes);
    after = encodeText(t, appendLogText(t.text, { ...entry, title: agentText(t, entry.title), body: entry.body && agentText(t, entry.body) }));
  }
  checkSize(st.path, after);
  return { st, after, heading: logHeading(entry) };
}

export const appendLogOp: WriteOp<LogArgs> = {
  name: "append_log",
  lockPaths: (vault) => [logLock(vault)],
  pinned: () => false,
  async plan(vault, a) {
    const { st, after, heading } = await planLogAppend(vault, a);
    return {
      changes: [{ action: "write", path: st.path, before: st.bytes, after }],
      base: {},
      primary: st.path,
      summary: `Log "${a.op} | ${a.title}"`,
      result: { entry: heading },
    };
  },
};

export interface FilePageArgs {
  path: string;
  title: string;
  content: string;
  citations: string[];
  tags?: string[];
  op?: string;
}

/** A cited note, named by path, name, alias or [[wikilink]]. */
function resolveCitation(vault: VaultContext, raw: string, from: string, index: number): string {
  const target = raw.trim().replace(/^!?\[\[/, "").replace(/\]\]$/, "").split(/\\?\|/)[0]!.split("#")[0]!.trim();
  try {
    return existingPath(vault, target);
  } catch (e) {
    if (e instanceof ToolError && e.kind === "path-invalid") throw e;
  }
  const hit = target ? vault.indexer.resolver.resolve({ target, kind: "wikilink" }, from) : null;
  if (!hit || !/\.md$/i.test(hit)) {
    throw new ToolError("note-not-found", `citations[${index}] (${JSON.stringify(raw)}) names no note in the vault`, { citation: index });
  }
  return hit;
}

/** The shortest wikilink that reaches `path` from `from`: the bare name when it is unambiguous. */
function wikilinkTo(vault: VaultContext, path: string, from: string): string {
  const name = noteName(path);
  // Bare only when no other note has the name, or the note is at the root, whose path the bare name is
  // (docs/writes.md): `[[Dup]]` that finds d/Dup.md by folder or shortest path today can point elsewhere later.
  const r = vault.indexer.resolver;
  const sure = r.notesNamed(path).length === 1 || !path.includes("/");
  if (sure && r.resolve({ target: name, kind: "wikilink" }, from) === path) return `[[${name}]]`;
  return `[[${stripMd(path)}|${name}]]`;
}

export const filePageOp: WriteOp<FilePageArgs> = {
  name: "file_page",
  lockPaths: (vault, a) => [...guessPath(a.path), logLock(vault)],
  pinned: () => false,
  async plan(vault, a, base) {
    refuseHalfPairs("title", a.title);
    refuseHalfPairs("content", a.content);
    a.tags?.forEach((t, i) => refuseHalfPairs(`tags[${i}]`, t));
    const page = await resolveTarget(vault, a.path);
    checkExpected(page, expectationFor(base, page.path, undefined));
    if (page.bytes !== null) {
      throw new ToolError("already-exists", `${page.path} already exists; file_page only creates new pages (use write_note or patch_section to change one)`, {
        path: page.path,
      });
    }
    const cited = [...new Set(a.citations.map((c, i) => resolveCitation(vault, c, page.path, i)))];
    const links = cited.map((p) => wikilinkTo(vault, p, page.path));
    const fm: Record<string, unknown> = { title: a.title };
    if (a.tags?.length) fm.tags = a.tags;
    // LF as the rest of the page (a CRLF body gave mixed endings).
    const body = a.content.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n").trim();
    const h1 = /^#[ \t]/.test(body) ? "" : `# ${a.title}\n\n`;
    const text = `---\n${toYaml(fm).trimEnd()}\n---\n\n${h1}${body}\n\n## Sources\n\n${links.map((l) => `- ${l}`).join("\n")}\n`;
    const after = Buffer.from(text, "utf8");
    checkSize(page.path, after);
    const self = `[[${stripMd(page.path)}|${a.title.replace(/[\[\]|]/g, "")}]]`;
    const log = await planLogAppend(vault, { op: a.op ?? "query", title: a.title, body: `Filed ${self}, citing ${links.join(", ")}.` });
    return {
      changes: [
        { action: "write", path: page.path, before: null, after },
        { action: "write", path: log.st.path, before: log.st.bytes, after: log.after },
      ],
      base: { [page.path]: null },
      primary: page.path,
      summary: `File page ${page.path} citing ${cited.length} note${cited.length === 1 ? "" : "s"}`,
      result: { citations: cited, logPath: log.st.path },
    };
  },
};
