// get_changes_since over the change journal. A cursor is a position in the
// journal's sequence (exact: every recorded change has a later number than
// the cursor it follows), plus what the sync it belongs to started from, so
// that a paged bootstrap reports every item as created and a `since` sync
// tells created from updated. The spec's second-granular inclusivity is kept:
// resuming within the second the cursor was issued re-reports that second.
import { ToolError } from "../errors";
import { basesContainingNote } from "../bases";
import type { ChangeJournal, JournalVault } from "./journal";
import { parseIsoTime } from "../iso-time";

export interface Change {
  id: string;
  type: "page" | "database" | "database_row";
  title: string;
  changeType: "created" | "updated" | "deleted";
  updatedAt: string;
  databaseId?: string;
}

export interface ChangesPage {
  changes: Change[];
  hasMore: boolean;
  nextCursor: string;
}

/**
 * s: last position delivered; c: an item is "created" when it came into being after c;
 * d: tombstones only after d; t: the unix second an end-of-feed cursor was issued (0 mid-sync).
 */
interface Cursor {
  s: number;
  c: number;
  d: number;
  t: number;
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify({ v: 1, ...c })).toString("base64url");
}

function decodeCursor(raw: string): Cursor {
  let o: Record<string, unknown> | null = null;
  try {
    o = JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
  } catch {
    o = null;
  }
  const ok = (x: unknown) => typeof x === "number" && Number.isSafeInteger(x) && x >= 0;
  if (!o || o.v !== 1 || !ok(o.s) || !ok(o.c) || !ok(o.d) || !ok(o.t)) {
    throw new ToolError("invalid-input", "cursor is not one get_changes_since (or the digest resource) returned");
  }
  return { s: o.s as number, c: o.c as number, d: o.d as number, t: o.t as number };
}

const nowSecond = () => Math.floor(Date.now() / 1000);

/**
 * A cursor at the journal's current end: what the digest resource prints before
 * it builds the map. It is exact (not inclusive of its second): everything
 * recorded up to it is already in the map, which is read from the index after it.
 */
export function cursorNow(journal: ChangeJournal): string {
  const s = journal.maxSeq();
  return encodeCursor({ s, c: s, d: s, t: 0 });
}

interface Row {
  id: string;
  kind: "note" | "base";
  seq: number;
  change: "created" | "updated" | "deleted";
  title: string;
  database_id: string | null;
  updated_at: number;
  seen_at: number;
  created_seq: number;
}

// Rows shaped per turn of the event loop: each note's base is found by evaluating the vault's
// bases, so a 1,000-row bootstrap page is shaped in slices and other requests wait for one slice.
const SHAPE_SLICE = 50;

export async function changesSince(vault: JournalVault, journal: ChangeJournal, opts: { since?: string; cursor?: string; limit: number }): Promise<ChangesPage> {
  const db = vault.stateDbNoSync; // the journal's own connection: its rows and maxSeq() read in one transaction
  // The page and its cursor are read in one transaction; shaping the rows needs none.
  const { page, cur, next } = db.transaction(() => {
    const max = journal.maxSeq();
    let cur: Cursor;
    if (opts.cursor) {
      cur = decodeCursor(opts.cursor);
      // Past the journal's end: the index was rebuilt (its history counts from zero again) since
      // the cursor was given out, or it is not one we gave. Taken as it is, it would skip every
      // change until the history caught up with it.
      if (cur.s > max || cur.c > max || cur.d > max) {
        throw new ToolError("invalid-input", "cursor is past the end of this vault's change history (the index was rebuilt since it was given out); sync again without a cursor");
      }
    } else if (opts.since !== undefined) {
      const asked = parseIsoTime(opts.since);
      if (asked === null) throw new ToolError("invalid-input", `since is not an ISO 8601 time: ${JSON.stringify(opts.since)}`);
      // A time this server's clock has not reached counts from its now: the caller's clock and this one
      // disagree (or this one stepped back), and what was recorded before this clock got there was left out
      // for good (the clock audit of 2026-12-05). What comes back twice is deduplicated by id (the spec).
      const ms = Math.min(asked, Date.now());
      // min(+seq): found through the seen_at index (the rows seen since), not by walking seq from the start.
      const first = (db.query("SELECT min(+seq) AS s FROM change_journal WHERE seen_at >= ?").get(ms) as { s: number | null }).s;
      const s = first === null ? max : first - 1;
      // "created" is decided by when an item came into being, not by where its row is now: a note created
      // after `since` and edited after other items changed has its row past theirs. Sequence numbers only
      // grow, so the first creation recorded at or after `since` splits them, on every page of the sync.
      // A row journalled before created_seen_at existed (a vault from an older Lettuce) has none: its creation
      // counts when its sequence number is past `since`'s, the rule of those versions.
      const born = (db.query("SELECT min(created_seq) AS c FROM change_journal WHERE created_seen_at >= ?1 OR (created_seen_at IS NULL AND created_seq > ?2)").get(ms, s) as { c: number | null }).c;
      cur = { s, c: born === null ? Math.max(s, max) : Math.min(s, born - 1), d: s, t: 0 };
    } else {
      // Bootstrap: every live item as created; deletions only from here on.
      cur = { s: 0, c: 0, d: max, t: 0 };
    }
    const again = cur.t === nowSecond() ? cur.t * 1000 : Number.MAX_SAFE_INTEGER;
    // The rows past the cursor, and those seen again within its second, each through its own index: as one
    // OR, SQLite walked the sequence from its start (~15 ms a sync at 100k notes).
    const cols = "id, kind, seq, change, title, database_id, updated_at, seen_at, created_seq";
    const kept = "NOT (change = 'deleted' AND seq <= ?3 AND seen_at < ?2)";
    const rows = db
      .query(
        `SELECT ${cols} FROM change_journal WHERE seq > ?1 AND ${kept}
         UNION ALL SELECT ${cols} FROM change_journal INDEXED BY change_journal_seen WHERE seen_at >= ?2 AND seq <= ?1 AND ${kept}
         ORDER BY seq LIMIT ?4`,
      )
      .all(cur.s, again, cur.d, opts.limit + 1) as Row[];
    const hasMore = rows.length > opts.limit;
    const page = rows.slice(0, opts.limit);
    const last = page[page.length - 1];
    const next: Cursor = hasMore
      ? { s: Math.max(cur.s, last!.seq), c: cur.c, d: cur.d, t: 0 } // mid-sync: exact, or a page would repeat
      : { s: Math.max(cur.s, max), c: Math.max(cur.s, max), d: Math.max(cur.s, max), t: nowSecond() };
    return { page, cur, next: { cursor: next, hasMore } };
  })();

  const changes: Change[] = [];
  for (let i = 0; i < page.length; i += SHAPE_SLICE) {
    if (i > 0) await new Promise<void>((r) => setImmediate(r));
    for (const r of page.slice(i, i + SHAPE_SLICE)) changes.push(toChange(vault, r, cur.c));
  }
  return { changes, hasMore: next.hasMore, nextCursor: encodeCursor(next.cursor) };
}

function toChange(vault: JournalVault, r: Row, createdAfter: number): Change {
  const changeType = r.change === "deleted" ? "deleted" : r.created_seq > createdAfter ? "created" : "updated";
  const base = { id: r.id, title: r.title, changeType, updatedAt: new Date(r.updated_at).toISOString() } as const;
  if (r.kind === "base") return { ...base, type: "database" };
  const databaseId = r.change === "deleted" ? r.database_id : (basesContainingNote(vault, r.id)[0]?.id ?? null);
  return databaseId ? { ...base, type: "database_row", databaseId } : { ...base, type: "page" };
}
