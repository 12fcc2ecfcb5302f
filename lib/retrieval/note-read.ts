// read_note in two halves. The event loop finds the note and its links in the
// index (planNoteRead); the file is read, hashed and the answer serialised by
// readNoteAnswer, in a read worker when the tool runs (lib/offload): a note can
// be a person's 50 MB log, and reading, decoding and escaping it twice on the
// event loop held every other caller for the whole of it.
import type { Database } from "bun:sqlite";
import { closeSync, fstatSync, readFileSync } from "node:fs";
import { noteReadError } from "../errors";
import { contentHash } from "../index/parse-job";
import { openRegular } from "../vault/read-file";
import { safeAbsPath } from "../vault/paths";
import { outgoingLinks } from "./links";
import { findNote } from "./notes";

/** Outgoing links read_note lists; past it, outgoingLinksTotal says how many and list_outgoing_links pages on. */
const MAX_READ_NOTE_LINKS = 200;

/** What the index says about the note, in the answer's order: plain data, to cross to a worker. */
export interface NoteReadPlan {
  path: string;
  name: string;
  title: string;
  tags: string;
  frontmatter: string;
  outgoingLinks: { target: string; kind: string; resolvedPath: string | null }[];
  outgoingLinksTotal?: number;
  /** When the index first saw the note (ms), 0 when unknown. */
  ctime: number;
  /** The hash of the bytes the index read: the title, tags and links above are that text's. */
  indexedHash: string;
  /** The file's size as the index saw it: about what the answer will weigh (ToolContext.reserveAnswer). */
  size: number;
}

export function planNoteRead(db: Database, root: string, input: string): NoteReadPlan {
  const row = findNote(db, root, input);
  // A note of 50,000 links (a long log) sent them all beside its text: the first ones here, list_outgoing_links pages on.
  const { items: links, total } = outgoingLinks(db, row.id, MAX_READ_NOTE_LINKS);
  return {
    path: row.path,
    name: row.name,
    title: row.title,
    tags: row.tags,
    frontmatter: row.frontmatter,
    outgoingLinks: links.map((l) => ({ target: l.target, kind: l.kind, resolvedPath: l.resolvedPath })),
    ...(total > links.length ? { outgoingLinksTotal: total } : {}),
    ctime: row.ctime || 0,
    indexedHash: row.hash,
    size: row.size,
  };
}

/**
 * The read_note answer: the file read now (no symlink on the way, a regular file), with its hash and stat.
 * `indexedOnly`: null instead when the file is not the text the index read (the metadata would be another's).
 */
export function readNoteAnswer(root: string, plan: NoteReadPlan, indexedOnly = false) {
  let bytes: Buffer;
  let st;
  try {
    const fd = openRegular(safeAbsPath(root, plan.path), plan.path);
    try {
      bytes = readFileSync(fd);
      st = fstatSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    throw noteReadError(e, plan.path);
  }
  const hash = contentHash(bytes);
  if (indexedOnly && hash !== plan.indexedHash) return null;
  return {
    path: plan.path,
    name: plan.name,
    title: plan.title,
    tags: JSON.parse(plan.tags),
    frontmatter: JSON.parse(plan.frontmatter),
    content: bytes.toString("utf8"),
    // Of the bytes, as the write tools check expectedHash (a decoded string differs for non-UTF-8 files).
    hash,
    outgoingLinks: plan.outgoingLinks,
    ...(plan.outgoingLinksTotal !== undefined ? { outgoingLinksTotal: plan.outgoingLinksTotal } : {}),
    // Created as the index first saw the note: a save by rename (editors, agents) gives the file a new birth time.
    stat: { size: st.size, modified: st.mtime.toISOString(), created: new Date(Math.min(plan.ctime || Infinity, st.birthtimeMs || st.ctimeMs)).toISOString() },
  };
}
