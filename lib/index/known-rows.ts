import type { Database } from "bun:sqlite";
import type { FileEntry, VaultListing } from "../vault/scan";
import { LinkResolver } from "./resolver";

// What the index already holds, read back to decide what a scan or an update
// must re-read: the indexer's other half, kept apart from the writing.

export interface KnownNote {
  id: number;
  size: number;
  mtime: number;
  /** st_ctime as indexed (null on rows indexed before it was kept). */
  chg: number | null;
  /** Loaded only for notes about to be re-read (knownNotes() leaves it out: 100k hashes cost a restart ~0.1 s). */
  hash?: string;
}

type KnownRow = KnownNote & { path: string };

// Paths under a folder as a range, not LIKE, so that the path index is used: '0' sorts right after '/'.
const UNDER = "path >= ? AND path < ?";
const underBounds = (rel: string): [string, string] => [rel + "/", rel + "0"];

export function knownNotes(db: Database): Map<string, KnownNote> {
  const m = new Map<string, KnownNote>();
  for (const r of db.query("SELECT id, path, size, mtime, chg FROM notes").all() as KnownRow[]) m.set(r.path, r);
  return m;
}

/**
 * The known rows update() can need: each path and anything indexed under it
 * (a vanished folder). Loading every row instead cost ~2 ms per write tool
 * call on a 5,000-note vault.
 */
export function knownUnder(db: Database, paths: string[]): Map<string, KnownNote> {
  if (paths.some((p) => p === "" || p === ".")) return knownNotes(db);
  const m = new Map<string, KnownNote>();
  const one = db.query("SELECT id, path, size, mtime, chg, hash FROM notes WHERE path = ?");
  const under = db.query(`SELECT id, path, size, mtime, chg, hash FROM notes WHERE ${UNDER}`);
  for (const p of paths) {
    const r = one.get(p) as KnownRow | null;
    if (r) m.set(r.path, r);
    for (const u of under.all(...underBounds(p)) as KnownRow[]) m.set(u.path, u);
  }
  return m;
}

/** Whether an attachment is indexed at this path. */
export function hasFileRow(db: Database, rel: string): boolean {
  return db.query("SELECT 1 FROM files WHERE path = ?").get(rel) !== null;
}

/** The paths a table (notes or files) holds under a folder ("" = the vault). */
function pathsUnder(db: Database, table: "notes" | "files", rel: string): string[] {
  const rows = rel === "" ? db.query(`SELECT path FROM ${table}`).all() : db.query(`SELECT path FROM ${table} WHERE ${UNDER}`).all(...underBounds(rel));
  return (rows as { path: string }[]).map((r) => r.path);
}

/** Attachments indexed under a folder ("" = the vault). */
export const filesUnder = (db: Database, rel: string) => pathsUnder(db, "files", rel);

/** Notes indexed under a folder ("" = the vault). */
export const notesUnder = (db: Database, rel: string) => pathsUnder(db, "notes", rel);

/** A note's stored hash, looked up only when the note is about to be re-read. */
export function hashLookup(db: Database): (k: KnownNote | undefined) => string | null {
  const hashOf = db.query("SELECT hash FROM notes WHERE id = ?");
  return (k) => (k ? (k.hash ?? (hashOf.get(k.id) as { hash: string } | null)?.hash ?? null) : null);
}

/** The link resolver as the index stands: every note with its aliases, every attachment. */
export function resolverFrom(db: Database): LinkResolver {
  const resolver = new LinkResolver();
  for (const r of db.query("SELECT path, aliases FROM notes ORDER BY id").all() as { path: string; aliases: string }[]) resolver.addNote(r.path, JSON.parse(r.aliases));
  return withFiles(db, resolver);
}

function withFiles(db: Database, resolver: LinkResolver): LinkResolver {
  for (const r of db.query("SELECT path FROM files").all() as { path: string }[]) resolver.addFile(r.path);
  return resolver;
}

/**
 * The same list, read `slice` notes at a time with a turn of the event loop between: built in one go it
 * held the request thread ~0.2 s at 100k notes (Indexer.warmResolver).
 */
export async function resolverInSlices(db: Database, slice = 1000): Promise<LinkResolver> {
  const resolver = new LinkResolver();
  const page = db.query("SELECT id, path, aliases FROM notes WHERE id > ? ORDER BY id LIMIT ?");
  for (let last = 0; ; ) {
    const rows = page.all(last, slice) as { id: number; path: string; aliases: string }[];
    for (const r of rows) resolver.addNote(r.path, JSON.parse(r.aliases));
    if (rows.length < slice) break;
    last = rows[rows.length - 1]!.id;
    await new Promise((r) => setImmediate(r));
  }
  return withFiles(db, resolver);
}

export interface ListingDiff {
  todo: FileEntry[];
  deleted: string[];
  attachments: FileEntry[];
  goneFiles: string[];
}

/**
 * Whether a file on disk may differ from its indexed row: size, mtime or status change time moved.
 * The mtime alone can be put back (rsync -t, cp -p, a sync client) and an edit can keep the size;
 * st_ctime cannot be set, so it moves with any write (and with a chmod or rename: a read, then the hash decides).
 */
export function changedSince(k: { size: number; mtime: number; chg: number | null }, e: FileEntry): boolean {
  return k.size !== e.size || k.mtime !== e.mtimeMs || k.chg !== e.changeMs;
}

/** How a whole listing of the disk differs from the index: notes and attachments new or changed (size or mtime), and gone. */
export function diffListing(db: Database, listing: VaultListing, known: Map<string, KnownNote>): ListingDiff {
  let seen = 0;
  const todo = listing.notes.filter((e) => {
    const k = known.get(e.path);
    if (k) seen++;
    return !k || changedSince(k, e);
  });
  // Every known note was seen on disk (the usual restart): nothing deleted, and no set of 100k paths to build.
  const onDisk = seen === known.size ? null : new Set(listing.notes.map((n) => n.path));
  const deleted = onDisk ? [...known.keys()].filter((p) => !onDisk.has(p)) : [];
  const knownFiles = new Map(
    (db.query("SELECT path, size, mtime, chg FROM files").all() as { path: string; size: number; mtime: number; chg: number | null }[]).map((r) => [r.path, r]),
  );
  const filesOnDisk = new Set(listing.attachments.map((a) => a.path));
  const attachments = listing.attachments.filter((a) => {
    const k = knownFiles.get(a.path);
    return !k || changedSince(k, a);
  });
  const goneFiles = [...knownFiles.keys()].filter((p) => !filesOnDisk.has(p));
  return { todo, deleted, attachments, goneFiles };
}
