// The change journal behind get_changes_since: fed by the indexer (the start-up
// scan and the watcher, so a person's edits in any editor count, and so do
// the write tools, which re-index what they wrote). It keeps one row per item
// with the content hash last reported, so it records a change only when an
// item's content really differs from what the feed already said: a rebuilt
// index.db, a touched file or a second scan add nothing.
import type { Database } from "bun:sqlite";
import { readFileSync, statSync } from "node:fs";
import { baseName, databasesOf, isBasePath, listBases, MAX_BASE_BYTES, type VaultLike } from "../bases";
import { journalDiff, splitIds, type JournalDiff } from "./diff";
import type { IndexChange, Indexer } from "../index/indexer";
import { contentHash } from "../index/parse-job";
import { getMeta } from "../store/index-db";
import { whenQuiet } from "../offload/activity";
import { safeAbsPath } from "../vault/paths";

export interface JournalVault extends VaultLike {
  /** The journal is written after each index pass, on the request thread: through the connection that does not fsync. */
  stateDbNoSync: Database;
  indexer: Indexer;
  onClose(fn: () => void): void;
}

/** The current state of one item, as the index (or the disk, for a base) has it. */
interface LiveItem {
  id: string;
  kind: "note" | "base";
  title: string;
  hash: string;
  mtime: number;
  databaseId: string | null;
}

interface JournalRow {
  id: string;
  kind: "note" | "base";
  change: "created" | "updated" | "deleted";
  hash: string | null;
  title: string;
}

/** Notes a catch-up records per turn of the event loop (a few ms each). */
const STEP = 200;
// Up to this many notes (by the largest note id: deleted notes count too) the comparison runs here, in a
// few ms: a read worker started for it costs more (a thread, its memory, ~0.1 s of CPU), at every start-up.
const INLINE_DIFF = 2000;
const fewNotes = (db: Database) => (db.query("SELECT coalesce(max(id), 0) AS n FROM notes").get() as { n: number }).n <= INLINE_DIFF;

/** The whole-vault comparison a catch-up starts from (lib/changes/diff.ts), wherever it runs. */
export type JournalDiffer = () => Promise<JournalDiff>;

export class ChangeJournal {
  private readonly db: Database;

  constructor(private readonly vault: JournalVault) {
    // A power cut that drops its last rows also drops the hashes they recorded: the next pass reports those changes again.
    this.db = vault.stateDbNoSync;
  }

  private noteItems(paths: string[]): LiveItem[] {
    const idx = this.vault.indexDb;
    const one = idx.query("SELECT path, title, hash, mtime FROM notes WHERE path = ?");
    const rows = paths.flatMap((p) => one.all(p) as { path: string; title: string; hash: string; mtime: number }[]);
    const databases = databasesOf(this.vault, rows.map((r) => r.path));
    return rows.map((r) => ({ id: r.path, kind: "note", title: r.title, hash: r.hash, mtime: r.mtime, databaseId: databases.get(r.path)?.id ?? null }));
  }

  private baseItem(path: string): LiveItem | null {
    try {
      const abs = safeAbsPath(this.vault.root, path);
      const st = statSync(abs);
      if (!st.isFile()) return null;
      // A base past the size a base may have is invalid and never read (lib/bases): it is compared by its size,
      // time and inode, not read whole at every catch-up (a 1 GB file in the vault cost that read each time).
      const hash = st.size > MAX_BASE_BYTES ? contentHash(`oversized base ${st.size} ${st.mtimeMs} ${st.ino}`) : contentHash(readFileSync(abs));
      return { id: path, kind: "base", title: baseName(path), hash, mtime: st.mtimeMs, databaseId: null };
    } catch {
      return null;
    }
  }

  private journalRows(ids: string[]): Map<string, JournalRow> {
    const one = this.db.query("SELECT id, kind, change, hash, title FROM change_journal WHERE id = ?");
    return new Map(ids.flatMap((id) => one.all(id) as JournalRow[]).map((r) => [r.id, r]));
  }

  /**
   * Compare live items with what the journal last said and record the
   * differences in one transaction. `ids` are the journal rows to compare with; `gone`, the ids known to be deleted.
   */
  private apply(live: LiveItem[], ids: string[], gone: string[]): number {
    let written = 0;
    this.db.transaction(() => {
      // Read under the write lock: a `serve` and a `stdio` both record a save they both saw, and the one
      // that read the journal before the other's commit wrote the change a second time.
      const known = this.journalRows(ids);
      let seq = (this.db.query("SELECT coalesce(max(seq), 0) AS s FROM change_journal").get() as { s: number }).s;
      const upsert = this.db.query(
        `INSERT INTO change_journal(id, kind, seq, change, title, hash, database_id, updated_at, seen_at, created_seq, created_seen_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?9)
         ON CONFLICT(id) DO UPDATE SET kind = ?2, seq = ?3, change = ?4, title = ?5, hash = ?6, database_id = ?7, updated_at = ?8, seen_at = ?9,
           created_seq = CASE WHEN ?4 = 'created' THEN ?10 ELSE created_seq END,
           created_seen_at = CASE WHEN ?4 = 'created' THEN ?9 ELSE created_seen_at END`,
      );
      const tombstone = this.db.query("UPDATE change_journal SET seq = ?, change = 'deleted', hash = NULL, updated_at = ?, seen_at = ? WHERE id = ?");
      // The feed is chronological (the spec): updatedAt never goes back along it. A change is dated by its
      // file's mtime, in mtime order within a pass, unless that mtime is older than the last change already
      // dated (a note moved or copied with its old time, git checking out an old file): then by when it was
      // seen. A moved note's "created" said six minutes before the `since` it was asked for (an audit).
      // One max() per query: SQLite answers a lone max() from its index, and two in one query by reading every row.
      const held = this.db
        .query("SELECT coalesce((SELECT max(updated_at) FROM change_journal), 0) AS t, coalesce((SELECT max(seen_at) FROM change_journal), 0) AS s")
        .get() as { t: number; s: number };
      let last = held.t;
      // Never before what the feed already holds: after the wall clock stepped back, a change was dated an
      // hour before the one listed ahead of it, and a sync by `since` missed it for good (the clock audit).
      const now = Math.max(Date.now(), held.t, held.s);
      const changed = live.filter((item) => {
        const prev = known.get(item.id);
        return !(prev && prev.change !== "deleted" && prev.hash === item.hash);
      });
      // Those dated by their mtime first, in its order; then those older than the feed's last date, dated now.
      const start = last;
      const old = (i: LiveItem) => (Math.min(now, Math.round(i.mtime)) < start ? 1 : 0);
      changed.sort((a, b) => old(a) - old(b) || a.mtime - b.mtime);
      for (const item of changed) {
        const prev = known.get(item.id);
        const change = !prev || prev.change === "deleted" ? "created" : "updated";
        const mtime = Math.min(now, Math.round(item.mtime));
        const at = mtime >= last ? mtime : now;
        last = Math.max(last, at);
        seq++;
        upsert.run(item.id, item.kind, seq, change, item.title, item.hash, item.databaseId, at, now, seq);
        written++;
      }
      for (const id of gone) {
        const prev = known.get(id);
        if (!prev || prev.change === "deleted") continue;
        tombstone.run(++seq, now, now, id);
        written++;
      }
    }).immediate();
    return written;
  }

  /** Record what one index pass changed. */
  record(change: IndexChange): number {
    const bases = change.attachments.filter(isBasePath);
    if (!change.changed.length && !change.deleted.length && !bases.length) return 0;
    const live: LiveItem[] = [...this.noteItems(change.changed)];
    const gone = [...change.deleted];
    for (const p of bases) {
      const item = this.baseItem(p);
      if (item) live.push(item);
      else gone.push(p);
    }
    return this.apply(live, [...live.map((l) => l.id), ...gone], gone);
  }

  /**
   * Bring the journal in line with the whole index: what the feed missed
   * (a crash between the index commit and the journal's, an index built by
   * `lettuce index` while no server ran). Deletions only once the index has
   * completed a scan: an index being rebuilt from nothing is not a vault
   * whose notes were all deleted.
   *
   * The whole-vault comparison runs where `diff` runs it (a read worker in a server); the notes it names are
   * then recorded STEP at a time, each step a turn of the event loop (a vault's first serve records every
   * note: ~0.5 s at 100k notes in one go). Each step reads its notes and journal rows again, as an index
   * pass does, so a note recorded meanwhile by a pass is not recorded twice, nor with an older hash.
   */
  async reconcile(diff: JournalDiffer, closed: () => boolean = () => false): Promise<number> {
    const { changed, gone } = await diff();
    const complete = getMeta(this.vault.indexDb, "indexedAt") !== null;
    const notes = splitIds(changed);
    const deleted = complete ? splitIds(gone) : [];
    // The bases are few and compared by their files' hashes: all in the first step.
    const bases = listBases(this.vault).map((b) => b.id);
    const listed = new Set(bases);
    const journaled = this.db.query("SELECT id FROM change_journal WHERE kind = 'base' AND change <> 'deleted'").all() as { id: string }[];
    if (complete) bases.push(...journaled.map((r) => r.id).filter((id) => !listed.has(id)));
    const inIndex = this.vault.indexDb.query("SELECT 1 FROM notes WHERE path = ?");
    let written = 0;
    for (let i = 0; i === 0 || i < notes.length || i < deleted.length; i += STEP) {
      if (i > 0) await new Promise((resolve) => setImmediate(resolve));
      if (closed()) break;
      written += this.record({
        changed: notes.slice(i, i + STEP),
        // Back in the index since the comparison (and recorded by its pass): not a delete.
        deleted: deleted.slice(i, i + STEP).filter((p) => !inIndex.get(p)),
        attachments: i === 0 ? bases : [],
      });
    }
    return written;
  }

  /** The position after every change recorded so far. */
  maxSeq(): number {
    return (this.db.query("SELECT coalesce(max(seq), 0) AS s FROM change_journal").get() as { s: number }).s;
  }
}

interface Attached {
  journal: ChangeJournal;
  diff: JournalDiffer;
  /** The index may hold changes the journal has not recorded (it was built without it, or a full scan ended). */
  behind: boolean;
  running: Promise<void> | null;
  closed: boolean;
}

const attached = new WeakMap<object, Attached>();
const report = (e: unknown) => console.error("lettuce: change journal:", e);

/** Catch up until no full scan is left unmatched (a scan that ends during a catch-up asks for one more). */
async function caughtUp(a: Attached): Promise<void> {
  while (!a.closed && (a.running || a.behind)) {
    if (!a.running) {
      a.behind = false;
      a.running = a.journal
        .reconcile(a.diff, () => a.closed)
        .then(
          () => undefined,
          (e) => {
            if (!a.closed) report(e); // the next full scan tries again
          },
        )
        .finally(() => {
          a.running = null;
        });
    }
    await a.running;
  }
}

/**
 * The vault's journal, attached to its indexer on first use: it records every
 * later index pass and catches up after every full scan, and after attaching
 * to an index already built, once the server is quiet (or before a read of
 * the feed, whichever comes first).
 * `diff` runs the whole-vault comparison (a server hands it to a read worker;
 * by default, and for a vault of a few thousand notes, it runs here); it is
 * taken from the first call.
 */
export function changeJournal(vault: JournalVault, diff?: JournalDiffer): ChangeJournal {
  const had = attached.get(vault);
  if (had) return had.journal;
  const a: Attached = {
    journal: new ChangeJournal(vault),
    diff: async () => (diff && !fewNotes(vault.indexDb) ? diff() : journalDiff(vault.indexDb, vault.stateDbNoSync)),
    behind: getMeta(vault.indexDb, "indexedAt") !== null,
    running: null,
    closed: false,
  };
  attached.set(vault, a);
  const offChange = vault.indexer.onChange((c) => {
    // A big pass (a sync or a checkout changing many notes, a first scan) is recorded as a catch-up: compared
    // in a read worker and written in steps. Recorded here at once, its notes' databases came from every
    // base's rows, worked out on the request thread (~0.2 s at 100k notes), and its rows in one transaction.
    if (c.changed.length + c.deleted.length > STEP) {
      a.behind = true;
      void caughtUp(a);
      return;
    }
    try {
      a.journal.record(c);
    } catch (e) {
      report(e); // the next full scan's catch-up fills the gap
    }
  });
  // After a full scan the journal catches up in the background, once the server is quiet
  // (lib/offload/activity.ts). A read of the feed before then catches up first (caughtUpJournal).
  const offScan = vault.indexer.onScanned(() => {
    a.behind = true;
    void whenQuiet().then(() => caughtUp(a));
  });
  vault.onClose(() => {
    a.closed = true;
    offChange();
    offScan();
  });
  // An index built before the journal attached (`lettuce stdio` scans first; `lettuce index` ran meanwhile).
  if (a.behind) void whenQuiet().then(() => caughtUp(a));
  return a.journal;
}

/** The journal once it has caught up with the index: what a read of the feed (or its cursor) waits for. */
export async function caughtUpJournal(vault: JournalVault): Promise<ChangeJournal> {
  changeJournal(vault);
  const a = attached.get(vault)!;
  await caughtUp(a);
  return a.journal;
}
